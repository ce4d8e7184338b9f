// Test-only. A storage service with an import-from-URL endpoint (as Dropbox's `files/save_url`,
// Cloudflare Stream's `copy` or Mux's input URL work): POST {source_url, file_name, ...} makes it
// fetch the URL itself, streaming, and answer what it stored. The big-video example hands it the
// signed file URLs of the service, so the bytes never pass through n8n.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash } from 'node:crypto';
import * as http from 'node:http';

import { freePort } from '../../tools/queue-services';

export interface StoredImport {
	body: Record<string, unknown>;
	/** Headers of the call from n8n (to check that no key of the media service reached storage). */
	headers: http.IncomingHttpHeaders;
	size: number;
	sha256: string;
	/** Highest number of bytes held at once while fetching (one chunk at a time). */
	largestChunk: number;
}

export class ImportStorage {
	readonly imports: StoredImport[] = [];
	private server?: http.Server;
	port = 0;

	get importUrl() {
		return `http://127.0.0.1:${this.port}/v1/import-from-url`;
	}

	async start() {
		this.port = await freePort();
		this.server = http.createServer((req, res) => {
			const parts: Buffer[] = [];
			req.on('data', (c: Buffer) => parts.push(c));
			req.on('end', () => {
				void this.handle(req, Buffer.concat(parts).toString('utf8')).then(
					(answer) =>
						res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
					(error: unknown) =>
						res
							.writeHead(502, { 'content-type': 'application/json' })
							.end(JSON.stringify({ error: String(error) })),
				);
			});
		});
		await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
	}

	private async handle(req: http.IncomingMessage, text: string) {
		if (req.method !== 'POST' || req.url !== '/v1/import-from-url')
			throw new Error(`no such endpoint: ${req.method} ${req.url}`);
		const body = JSON.parse(text) as Record<string, unknown>;
		const res = await fetch(String(body.source_url));
		if (!res.ok || !res.body) throw new Error(`source answered ${res.status}`);
		const hash = createHash('sha256');
		let size = 0;
		let largestChunk = 0;
		for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
			hash.update(chunk);
			size += chunk.byteLength;
			largestChunk = Math.max(largestChunk, chunk.byteLength);
		}
		const stored: StoredImport = {
			body,
			headers: req.headers,
			size,
			sha256: hash.digest('hex'),
			largestChunk,
		};
		this.imports.push(stored);
		return { stored: body.file_name, size, sha256: stored.sha256 };
	}

	async close() {
		if (!this.server) return;
		this.server.closeAllConnections();
		await new Promise<void>((r) => this.server!.close(() => r()));
	}
}
