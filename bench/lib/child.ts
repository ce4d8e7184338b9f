// Runs a TypeScript file of the benchmark in its own Node process (the running Node, i.e. the
// Node 24 that tools/run.js chose) with tsx's loader, talking over IPC. One process per
// measurement keeps its memory figures free of the other benchmarks' garbage.
/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const TSX = pathToFileURL(require.resolve('tsx')).href;

export interface Child {
	proc: ChildProcess;
	/** Resolves with the next message whose `type` is `type`. */
	next<T = Record<string, unknown>>(type: string): Promise<T>;
	send(message: Record<string, unknown>): void;
	/** Resolves when the process has exited. */
	exited: Promise<number | null>;
}

export function startChild(script: string, env: Record<string, string> = {}): Child {
	const proc = fork(path.resolve(__dirname, '..', script), [], {
		execArgv: [
			'--import',
			TSX,
			'--expose-gc',
			...(process.env.BENCH_CHILD_NODE_ARGS ? process.env.BENCH_CHILD_NODE_ARGS.split(' ') : []),
		],
		env: { ...process.env, ...env },
		stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
	});
	const queue: Array<Record<string, unknown>> = [];
	const waiters: Array<{ type: string; resolve: (m: never) => void; reject: (e: Error) => void }> =
		[];
	const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
	proc.on('message', (m: Record<string, unknown>) => {
		const w = waiters.findIndex((x) => x.type === m.type);
		if (w >= 0) waiters.splice(w, 1)[0].resolve(m as never);
		else queue.push(m);
	});
	void exited.then((code) => {
		for (const w of waiters.splice(0))
			w.reject(new Error(`${script} exited with ${code} before sending "${w.type}"`));
	});
	return {
		proc,
		next<T>(type: string) {
			const i = queue.findIndex((m) => m.type === type);
			if (i >= 0) return Promise.resolve(queue.splice(i, 1)[0] as T);
			if (proc.exitCode !== null) return Promise.reject(new Error(`${script} has exited`));
			return new Promise<T>((resolve, reject) =>
				waiters.push({ type, resolve: resolve as (m: never) => void, reject }),
			);
		},
		send: (message) => proc.send(message),
		exited,
	};
}
