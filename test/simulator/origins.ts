// Extra origins next to the simulator, for redirect tests: each is a tiny loopback HTTP server
// on its own port (so its own origin) that records every request it receives, headers included,
// and answers as its `route` says: a fixed answer, a redirect, or a pass-through to another
// server (the simulator) with the answer's text rewritten. A test then asks `sawKey(key)`: did
// anything reach this origin carrying the API key?
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
	method: string;
	/** Path and query as received. */
	url: string;
	headers: http.IncomingHttpHeaders;
	at: number;
}

export type Answer =
	| { status: number; headers?: Record<string, string>; body?: string | Buffer }
	/** Redirect to `location` with `status` (301, 302, 303, 307 or 308). */
	| { redirect: string; status: number }
	/** Forward the request (method, headers, body) to `target` + url; rewrite a text answer. */
	| { proxy: string; rewrite?: (text: string) => string };

export interface Origin {
	url: string;
	requests: SeenRequest[];
	/** Whether any request that reached this origin carried `key` in any header. */
	sawKey(key: string): boolean;
	/** Requests that carried an Authorization header at all. */
	withAuthorization(): SeenRequest[];
	close(): Promise<void>;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const parts: Buffer[] = [];
		req.on('data', (c: Buffer) => parts.push(c));
		req.on('end', () => resolve(Buffer.concat(parts)));
		req.on('error', reject);
	});
}

function forward(
	req: http.IncomingMessage,
	body: Buffer,
	res: http.ServerResponse,
	target: string,
	rewrite?: (text: string) => string,
): Promise<void> {
	return new Promise((resolve) => {
		const url = new URL(req.url ?? '/', target);
		const headers = { ...req.headers, host: url.host };
		delete headers['content-length'];
		const out = http.request(url, { method: req.method, headers }, (answer) => {
			const parts: Buffer[] = [];
			answer.on('data', (c: Buffer) => parts.push(c));
			answer.on('end', () => {
				let payload = Buffer.concat(parts);
				const type = String(answer.headers['content-type'] ?? '');
				if (rewrite && /json|text/.test(type))
					payload = Buffer.from(rewrite(payload.toString('utf8')));
				const copied = { ...answer.headers, 'content-length': String(payload.length) };
				delete copied['transfer-encoding'];
				res.writeHead(answer.statusCode ?? 502, copied);
				res.end(payload);
				resolve();
			});
		});
		out.on('error', (e) => {
			res.writeHead(502, { 'Content-Type': 'text/plain' });
			res.end(`proxy error: ${e.message}`);
			resolve();
		});
		out.end(body.length ? body : undefined);
	});
}

/** Starts an origin on 127.0.0.1 (a random port); `route` decides each answer. */
export async function startOrigin(route: (req: SeenRequest) => Answer): Promise<Origin> {
	const requests: SeenRequest[] = [];
	const server = http.createServer((req, res) => {
		void (async () => {
			const body = await readBody(req);
			const seen: SeenRequest = {
				method: req.method ?? '',
				url: req.url ?? '/',
				headers: { ...req.headers },
				at: Date.now(),
			};
			requests.push(seen);
			const answer = route(seen);
			if ('proxy' in answer) return forward(req, body, res, answer.proxy, answer.rewrite);
			if ('redirect' in answer) {
				res.writeHead(answer.status, { Location: answer.redirect, 'Content-Length': '0' });
				return res.end();
			}
			const payload = answer.body ?? '';
			res.writeHead(answer.status, {
				'Content-Length': String(Buffer.byteLength(payload)),
				...answer.headers,
			});
			res.end(payload);
		})().catch(() => res.destroy());
	});
	const sockets = new Set<import('node:net').Socket>();
	server.on('connection', (s) => {
		sockets.add(s);
		s.on('close', () => sockets.delete(s));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		url,
		requests,
		sawKey: (key) => requests.some((r) => JSON.stringify(r.headers).includes(key)),
		withAuthorization: () => requests.filter((r) => r.headers.authorization !== undefined),
		close: () =>
			new Promise<void>((resolve) => {
				for (const s of sockets) s.destroy();
				server.close(() => resolve());
			}),
	};
}

/**
 * A host that would gladly take the key: answers every request with a plausible finished task
 * in the service's envelope, so only the recorded headers tell whether the key came along.
 */
export function startKeyCollector(): Promise<Origin> {
	return startOrigin(() => ({
		status: 200,
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify({
			code: 200,
			data: { task_id: 'collected', status: 'not_started', created_time: new Date().toISOString() },
		}),
	}));
}

/** An origin that redirects every request, path and query kept, to `target`. */
export function startRedirector(target: string, status = 307): Promise<Origin> {
	return startOrigin((req) => ({ redirect: `${target}${req.url}`, status }));
}
