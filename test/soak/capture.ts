// Captures everything the node could print or log while a workflow runs: n8n's logger (the
// instance `this.logger` resolves to in a node, and LoggerProxy), console, and raw writes to
// stdout/stderr. Import after the harness (which sets n8n's environment first).
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, no-console -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import type { Logger as LoggerType } from '@n8n/backend-common';
import type { Container as ContainerType } from '@n8n/di';
import { LoggerProxy } from 'n8n-workflow';
import * as path from 'node:path';
import { inspect } from 'node:util';

// n8n-core has its own copies of @n8n/di and @n8n/backend-common (other versions than the
// top-level ones): its `this.logger` is the Logger class of its copy, in its copy's container.
// Registering ours there also keeps n8n's Logger from being built, which would re-point
// LoggerProxy at itself.
const coreDir = path.dirname(require.resolve('n8n-core'));
const fromCore = async <T>(name: string) =>
	(await import(require.resolve(name, { paths: [coreDir] }))) as T;

export interface Capture {
	/** Every line logged or written, at any level, as text. */
	lines: string[];
	stop(): void;
}

export async function captureOutput(): Promise<Capture> {
	const { Container } = await fromCore<{ Container: typeof ContainerType }>('@n8n/di');
	const { Logger } = await fromCore<{ Logger: typeof LoggerType }>('@n8n/backend-common');
	const lines: string[] = [];
	const record = (level: string) => (message: unknown, metadata?: unknown) => {
		lines.push(
			`${level} ${inspect(message, { depth: 8 })} ${inspect(metadata ?? '', { depth: 8 })}`,
		);
	};
	// Records every level, debug included, whatever n8n's configured log level is.
	const logger = {
		error: record('error'),
		warn: record('warn'),
		info: record('info'),
		debug: record('debug'),
		scoped: () => logger,
	};
	const previous = Container.has(Logger) ? Container.get(Logger) : undefined;
	Container.set(Logger, logger as unknown as LoggerType);
	LoggerProxy.init(logger as never);

	const originals = {
		stdout: process.stdout.write.bind(process.stdout),
		stderr: process.stderr.write.bind(process.stderr),
		console: { ...console },
	};
	const tap =
		(name: string, original: (...args: never[]) => boolean) =>
		(chunk: unknown, ...rest: unknown[]) => {
			lines.push(`${name} ${String(chunk)}`);
			return original(...([chunk, ...rest] as unknown as never[]));
		};
	process.stdout.write = tap('stdout', originals.stdout) as typeof process.stdout.write;
	process.stderr.write = tap('stderr', originals.stderr) as typeof process.stderr.write;
	for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
		console[method] = (...args: unknown[]) => {
			lines.push(`console.${method} ${args.map((a) => inspect(a, { depth: 8 })).join(' ')}`);
		};
	}

	return {
		lines,
		stop() {
			process.stdout.write = originals.stdout;
			process.stderr.write = originals.stderr;
			Object.assign(console, originals.console);
			if (previous) {
				Container.set(Logger, previous);
				LoggerProxy.init(previous);
			}
		},
	};
}
