// On the oldest supported n8n (2.14.x) a node gets no resolver (no getSecureEgressFilter), so
// fileHosts.ts checks the address a file host's connection went to, read from the answer's
// socket (issue 28, finding 1). This runs the package's request path with that n8n's own
// request helper (n8n-core's httpRequest from the cached install) over real HTTP: the socket is
// there, a private address is refused with its answer dropped, and the check can fail.
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import { requestCheckedHops } from '../../nodes/shared/transport/fileHosts';
import type { ApiContext } from '../../nodes/shared/transport/api';
import { TransportError } from '../../nodes/shared/transport/faults';
import { N8N_OLDEST_VERSION } from '../../tools/ensure-n8n';

jest.setTimeout(60_000);

const cacheDir =
	process.env.MGEN_CACHE_DIR || path.join(os.homedir(), '.cache', 'n8n-nodes-media-generation');
const install = path.join(cacheDir, `n8n-${N8N_OLDEST_VERSION}`, 'node_modules');

type HttpRequest = (options: object) => Promise<unknown>;
let httpRequest: HttpRequest;
let server: http.Server;
let port = 0;
/** The methods the file host answered, since the last test began. */
const hits: string[] = [];

beforeAll(async () => {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	require(path.join(install, 'reflect-metadata'));
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const helpers = require(
		path.join(
			install,
			'n8n-core/dist/execution-engine/node-execution-context/utils/request-helper-functions.js',
		),
	) as { httpRequest: HttpRequest };
	httpRequest = helpers.httpRequest;
	server = http.createServer((req, res) => {
		hits.push(req.method ?? '');
		res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': 3 }).end('abc');
	});
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
	await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
	hits.length = 0;
});

/** A node context as n8n 2.14 gives it: its request helper, no getSecureEgressFilter. */
const ctx = () =>
	({
		helpers: { httpRequest: async (o: object) => await httpRequest(o) },
	}) as unknown as ApiContext;

async function fetchFrom(host: string, method: 'GET' | 'HEAD', allowPrivate = false) {
	try {
		return await requestCheckedHops(
			ctx(),
			{
				url: `http://${host}:${port}/a.mp4`,
				method,
				encoding: method === 'GET' ? 'stream' : undefined,
			},
			allowPrivate,
		);
	} catch (error) {
		return error as TransportError;
	}
}

test.each(['GET', 'HEAD'] as const)(
	"%s to a name that resolves to this machine: refused from the connection's address",
	async (method) => {
		// Not *.localhost (refused by name before any request): this machine's own host name.
		const result = await fetchFrom(os.hostname(), method);
		expect(result).toBeInstanceOf(TransportError);
		expect((result as TransportError).message).toMatch(
			new RegExp(
				`refused: ${os.hostname().replace(/\./g, '\\.')} resolves to [0-9a-f.:]+, a (loopback|private)`,
			),
		);
		// This request reached the host (2.14 cannot check before connecting); its answer was dropped.
		expect(hits).toEqual([method]);
	},
);

test('the same with Allow Private Network File Hosts: the answer is returned', async () => {
	const result = await fetchFrom(os.hostname(), 'GET', true);
	expect(result).not.toBeInstanceOf(TransportError);
	expect((result as { statusCode: number }).statusCode).toBe(200);
	(result as { body: { destroy(): void } }).body.destroy();
});

test('through a proxy (HTTP_PROXY): refused as such, whatever address the proxy has (issue 35)', async () => {
	// A forward proxy on this machine that sends every request to the file host above: the
	// connection's address is the proxy's, which says nothing of the file host's. (On the old
	// code the proxy's own address was checked: a proxy on a public address let a private file
	// host through; here it is loopback, so only the reason given tells the paths apart.)
	let proxied = 0;
	const proxy = http.createServer((req, res) => {
		proxied++;
		const forward = http.request(
			{ host: '127.0.0.1', port, path: new URL(req.url ?? '/').pathname, method: req.method },
			(answer) => {
				res.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(res);
			},
		);
		forward.on('error', () => res.destroy());
		req.pipe(forward);
	});
	await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
	const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };
	process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
	delete process.env.NO_PROXY;
	try {
		const result = await fetchFrom('files.example', 'GET');
		expect(result).toBeInstanceOf(TransportError);
		expect((result as TransportError).message).toMatch(
			/refused: n8n sent the request for files\.example through a proxy .*NO_PROXY/,
		);
		// The request went out through the proxy before it could be refused (docs/security.md).
		expect(proxied).toBe(1);
	} finally {
		for (const [name, value] of Object.entries(saved)) {
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		}
		await new Promise<void>((r) => proxy.close(() => r()));
	}
});
