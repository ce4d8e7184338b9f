// Plain HTTP client for the simulator's contract tests: every answer is returned, never thrown.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import axios, { type AxiosResponse } from 'axios';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Simulator } from './index';

/** `data` of a status answer. */
export interface TaskView {
	task_id: string;
	status: string;
	progress: number;
	created_time: string;
	error_message: string | null;
	files?: Array<{ file_url: string; file_type: string }>;
}

export interface Client {
	submit(body: unknown, headers?: Record<string, string>): Promise<AxiosResponse>;
	status(taskId: string, headers?: Record<string, string>): Promise<AxiosResponse>;
	/** Submits and returns the task id; fails the test when the submission is refused. */
	create(
		model: string,
		input: Record<string, unknown>,
		extra?: Record<string, unknown>,
	): Promise<string>;
	/** Polls until finished or failed (or `maxMs` of real time) and returns every answer seen. */
	pollToEnd(taskId: string, everyMs?: number, maxMs?: number): Promise<TaskView[]>;
}

export function client(sim: Simulator): Client {
	const auth = { Authorization: `Bearer ${sim.apiKey}` };
	const c: Client = {
		submit: (body, headers = {}) =>
			axios.post(`${sim.baseUrl}/api/generate/submit`, body, {
				headers: { ...auth, 'Content-Type': 'application/json', ...headers },
				validateStatus: () => true,
			}),
		status: (taskId, headers = {}) =>
			axios.get(`${sim.baseUrl}/api/generate/status/${encodeURIComponent(taskId)}`, {
				headers: { ...auth, ...headers },
				validateStatus: () => true,
			}),
		async create(model, input, extra = {}) {
			const r = await c.submit({ model, input, ...extra });
			if (r.status !== 200)
				throw new Error(`submit refused: ${r.status} ${JSON.stringify(r.data)}`);
			return r.data.data.task_id as string;
		},
		async pollToEnd(taskId, everyMs = 20, maxMs = 10000) {
			const seen: TaskView[] = [];
			const end = Date.now() + maxMs;
			while (Date.now() < end) {
				const r = await c.status(taskId);
				seen.push(r.data.data);
				if (['finished', 'failed'].includes(r.data.data.status)) break;
				await new Promise((res) => setTimeout(res, everyMs));
			}
			return seen;
		},
	};
	return c;
}

export interface Receiver {
	url: string;
	received: Array<{ body: string; headers: http.IncomingHttpHeaders; at: number }>;
	/** Status to answer the n-th POST (0-based); default 200. */
	answer: (n: number) => number;
	close(): Promise<void>;
}

/** A callback receiver: records every POST and answers with `answer(n)`. */
export async function receiver(answer: (n: number) => number = () => 200): Promise<Receiver> {
	const r: Receiver = { url: '', received: [], answer, close: async () => undefined };
	const server = http.createServer((req, res) => {
		const parts: Buffer[] = [];
		req.on('data', (d) => parts.push(d));
		req.on('end', () => {
			const n = r.received.length;
			r.received.push({
				body: Buffer.concat(parts).toString('utf8'),
				headers: req.headers,
				at: Date.now(),
			});
			res.writeHead(r.answer(n), { 'Content-Type': 'text/plain' });
			res.end('ok');
		});
	});
	await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
	r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?secret=s3`;
	r.close = () =>
		new Promise<void>((res) => {
			server.closeAllConnections();
			server.close(() => res());
		});
	return r;
}

export const waitFor = async (cond: () => boolean, maxMs = 5000, everyMs = 10) => {
	const end = Date.now() + maxMs;
	while (!cond()) {
		if (Date.now() > end) throw new Error('condition not met in time');
		await new Promise((res) => setTimeout(res, everyMs));
	}
};
