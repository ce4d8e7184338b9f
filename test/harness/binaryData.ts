/* eslint-disable @n8n/community-nodes/no-restricted-imports, @typescript-eslint/no-require-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply; require() loads n8n-core's own copy of @n8n/di */
// Test-only. Serves n8n's `GET /rest/binary-data/signed?token=<JWT>` over real HTTP for the
// harness's binary data, the way n8n's BinaryDataController.getSigned does (n8n 2.41.1,
// packages/cli/src/controllers/binary-data.controller.ts), so that a link a node made with
// helpers.createBinarySignedUrl (runWorkflow with `baseUrl` = this server) really serves the
// file:
//   1. no login (`skipAuth`); the token is checked by n8n-core's own
//      BinaryDataService.validateSignedToken (its signing secret, its expiry): a bad or expired
//      token gets 400 with jsonwebtoken's message;
//   2. the binary data id must name a stored mode and a path without `..`, else 400;
//   3. Content-Type and Content-Length from the stored metadata, Content-Disposition attachment,
//      then n8n-core's own stream of the file; 404 when the file is gone.
// Not n8n here: Express (n8n also answers HEAD on this GET route, without a body), no CSP header.
// First: n8n's environment (user folder, binary data) before n8n-core is loaded.
import './env';

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';

import type { Container as ContainerType } from '@n8n/di';
import { BinaryDataService, FileNotFoundError, isValidNonDefaultMode } from 'n8n-core';

const Container = (
	require(require.resolve('@n8n/di', { paths: [path.dirname(require.resolve('n8n-core'))] })) as {
		Container: typeof ContainerType;
	}
).Container;

export interface SignedFetch {
	method: string;
	status: number;
	/** The binary data id the token named, when it was valid. */
	binaryDataId?: string;
	/** Bytes of the body sent. */
	bytes: number;
	/** The request's headers, to show what a fetcher sent. */
	headers: http.IncomingHttpHeaders;
}

export interface BinaryDataServer {
	/** Give it as RunOptions.baseUrl, so that n8n's signed links point here. */
	baseUrl: string;
	fetches: SignedFetch[];
	/**
	 * Plays n8n deleting the execution's binary data before the service fetched it (an execution
	 * whose data is not saved): while true, the file a valid token names is deleted through
	 * n8n-core's BinaryDataService before it is served (which then answers 404, as n8n does).
	 */
	deleteBeforeServing: boolean;
	close(): Promise<void>;
}

class BadRequest extends Error {}

/** n8n's BinaryDataController.validateBinaryDataId. */
function validateBinaryDataId(id: unknown): string {
	if (typeof id !== 'string' || id === '') throw new BadRequest('Missing binary data ID');
	const separator = id.indexOf(':');
	if (separator === -1) throw new BadRequest('Malformed binary data ID');
	if (!isValidNonDefaultMode(id.slice(0, separator)))
		throw new BadRequest('Invalid binary data mode');
	const rest = id.slice(separator + 1);
	if (rest === '' || rest === '/' || rest === '//')
		throw new BadRequest('Malformed binary data ID');
	if (rest.split(/[/\\]/).includes('..')) throw new BadRequest('Malformed binary data ID');
	return id;
}

/** jsonwebtoken's errors (JsonWebTokenError and its subclasses) by name, as n8n answers them 400. */
const isTokenError = (error: unknown) =>
	error instanceof Error &&
	['JsonWebTokenError', 'TokenExpiredError', 'NotBeforeError'].includes(error.name);

export async function startBinaryDataServer(): Promise<BinaryDataServer> {
	const fetches: SignedFetch[] = [];
	const service = Container.get(BinaryDataService);
	const api: BinaryDataServer = {
		baseUrl: '',
		fetches,
		deleteBeforeServing: false,
		close: async () => {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
	const server = http.createServer((req, res) => {
		const fetch: SignedFetch = {
			method: req.method ?? '',
			status: 0,
			bytes: 0,
			headers: req.headers,
		};
		fetches.push(fetch);
		const end = (status: number, text = '') => {
			fetch.status = status;
			res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
			res.end(text);
		};
		const url = new URL(req.url ?? '/', 'http://localhost');
		if (
			url.pathname !== '/rest/binary-data/signed' ||
			!['GET', 'HEAD'].includes(req.method ?? '')
		) {
			return end(404);
		}
		void (async () => {
			try {
				const id = validateBinaryDataId(
					service.validateSignedToken(url.searchParams.get('token') ?? ''),
				);
				fetch.binaryDataId = id;
				if (api.deleteBeforeServing) await service.deleteManyByBinaryDataId([id]);
				const headers: Record<string, string | number> = {};
				try {
					const metadata = await service.getMetadata(id);
					headers['Content-Length'] = metadata.fileSize;
					if (metadata.mimeType) headers['Content-Type'] = metadata.mimeType;
					headers['Content-Disposition'] = metadata.fileName
						? `attachment; filename="${encodeURIComponent(metadata.fileName)}"`
						: 'attachment';
				} catch {
					headers['Content-Disposition'] = 'attachment';
				}
				const stream = await service.getAsStream(id);
				fetch.status = 200;
				res.writeHead(200, headers);
				if (req.method === 'HEAD') {
					stream.destroy();
					return res.end();
				}
				stream.on('data', (chunk: Buffer) => (fetch.bytes += chunk.length));
				await pipeline(stream, res);
			} catch (error) {
				if (res.headersSent) return res.destroy();
				if (error instanceof FileNotFoundError) return end(404);
				if (error instanceof BadRequest || isTokenError(error))
					return end(400, (error as Error).message);
				end(500, String(error));
			}
		})();
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	api.baseUrl = `http://127.0.0.1:${port}/`;
	return api;
}
