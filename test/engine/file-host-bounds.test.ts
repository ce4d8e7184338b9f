// A hostile file host against the download bounds (issue 19, finding 2), through n8n-core's
// engine with its own request and binary helpers: a test-only node runs the package's download
// code (downloadTaskFiles) on URLs the test gives it, and a real HTTP server on loopback
// misbehaves on purpose: redirect chains, redirects to other schemes, oversized and lying
// Content-Lengths, an endless body, a drip, a slow host, and private addresses.
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import * as dns from 'node:dns/promises';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as zlib from 'node:zlib';

import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { downloadFiles } from '../../nodes/MediaGenerationTrigger/downloadLine';
import { privateAddressKind } from '../../nodes/shared/transport/fileHosts';
import {
	BINARY_DATA_PATH,
	MANUAL_TRIGGER_TYPE,
	chain,
	registerNodeType,
	runWorkflow,
} from '../harness';
import { downloadAsItem } from './support';

jest.setTimeout(60_000);

const storeCount = () =>
	fs.existsSync(BINARY_DATA_PATH)
		? fs
				.readdirSync(BINARY_DATA_PATH, { recursive: true, withFileTypes: true })
				.filter((e) => e.isFile()).length
		: 0;

/** Test-only node: downloads the given URLs as the files of a finished task. */
class BoundsProbe implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Bounds Probe',
		name: 'test.boundsProbe',
		group: ['transform'],
		version: 1,
		description: 'Test-only: runs downloadTaskFiles with the given bounds',
		defaults: { name: 'Probe' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		usableAsTool: true,
		properties: [
			{ displayName: 'URLs', name: 'urls', type: 'json', default: '[]' },
			{ displayName: 'Options', name: 'options', type: 'json', default: '{}' },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const urls = JSON.parse(this.getNodeParameter('urls', 0) as string) as string[];
		const options = JSON.parse(String(this.getNodeParameter('options', 0))) as IDataObject;
		if (typeof options.asTriggerCallbacks === 'number') {
			// As many Trigger callbacks at once, each downloading the URLs (a webhook context is
			// one with a request object).
			const ctx = new Proxy(this, {
				get(target, key) {
					if (key === 'getRequestObject') return () => ({});
					// The Trigger's credential, allowing this loopback file host.
					if (key === 'getCredentials') {
						return async () => ({
							apiKey: 'sk-probe',
							baseUrl: 'https://api.example',
							allowPrivateFileHosts: true,
						});
					}
					const value = Reflect.get(target, key, target) as unknown;
					return typeof value === 'function'
						? (value as (...a: unknown[]) => unknown).bind(target)
						: value;
				},
			});
			// Each callback of each trigger, through the Trigger's own download step (its turns).
			const triggers = Number(options.triggers ?? 1);
			const runs = Array.from({ length: options.asTriggerCallbacks * triggers }, async (_, i) => {
				const task = {
					task_id: `task-${i}`,
					status: 'finished',
					// The trigger in the query, so that the file host counts each trigger's downloads.
					files: urls.map((url) => ({ file_url: `${url}?trigger=${i % triggers}` })),
				};
				const settings = {
					trigger: `trigger-${i % triggers}`,
					binaryProperty: 'data',
					downloadMinutes: 10,
				};
				const result = await downloadFiles(ctx as never, task, settings, Date.now());
				if ('error' in result) throw new Error(result.error);
			});
			const settled = await Promise.allSettled(runs);
			return [
				[
					{
						json: { failed: settled.filter((r) => r.status === 'rejected').length },
						pairedItem: { item: 0 },
					},
				],
			];
		}
		return [
			[await downloadAsItem(this, 'task-7', urls, { modelLabel: 'probe', retries: 0, ...options })],
		];
	}
}
registerNodeType(new BoundsProbe());

const bytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => i % 251));
const BODY = bytes(200_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: http.Server;
let port = 0;
let base = '';
const hits = new Map<string, number>();
/** Bytes the server got to write per path before the client closed the connection. */
const written = new Map<string, number>();
const open = new Set<http.ServerResponse>();
/** Downloads of /held/ open at once per trigger (the `trigger` query), now and at most. */
const active = new Map<string, number>();
const maxActive = new Map<string, number>();
/** While set, each /held/ download sends its first 2 KB, then waits for it before the rest. */
let heldGate: Promise<void> | undefined;

beforeAll(async () => {
	server = http.createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://x');
		const p = url.pathname;
		hits.set(p, (hits.get(p) ?? 0) + 1);
		open.add(res);
		res.on('close', () => open.delete(res));
		const count = (n: number) => written.set(p, (written.get(p) ?? 0) + n);
		// /hop/N: N more redirects, then the file.
		const hop = /^\/hop\/(\d+)$/.exec(p);
		if (hop) {
			const left = Number(hop[1]);
			res.writeHead(302, { Location: left > 0 ? `/hop/${left - 1}` : '/ok/file.mp4' }).end();
			return;
		}
		if (p === '/to-file-scheme') {
			res.writeHead(302, { Location: 'file:///etc/passwd' }).end();
			return;
		}
		if (p.startsWith('/ok/')) {
			res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': BODY.length }).end(BODY);
			return;
		}
		if (p === '/claims-5mb') {
			res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': 5 * 1024 * 1024 });
			const chunk = bytes(64 * 1024);
			const pump = () => {
				while (!res.destroyed && (written.get(p) ?? 0) < 5 * 1024 * 1024) {
					count(chunk.length);
					if (!res.write(chunk)) return void res.once('drain', pump);
				}
				res.end();
			};
			pump();
			return;
		}
		if (p === '/endless') {
			// Chunked, no Content-Length, never ends.
			res.writeHead(200, { 'Content-Type': 'video/mp4' });
			const chunk = bytes(64 * 1024);
			const pump = () => {
				while (!res.destroyed) {
					count(chunk.length);
					if (!res.write(chunk)) return void res.once('drain', pump);
				}
			};
			pump();
			return;
		}
		if (p === '/gzip-bomb') {
			// A small Content-Length that decodes to 50 MB.
			const body = zlib.gzipSync(Buffer.alloc(50 * 1024 * 1024));
			res.writeHead(200, {
				'Content-Type': 'video/mp4',
				'Content-Encoding': 'gzip',
				'Content-Length': body.length,
			});
			res.end(body);
			return;
		}
		if (p === '/drip') {
			// One byte every 300 ms of a 1,000-byte file: never silent for long, never done.
			res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': 1000 });
			void (async () => {
				for (let i = 0; i < 1000 && !res.destroyed; i++) {
					count(1);
					res.write(Buffer.from([i % 251]));
					await sleep(300);
				}
				if (!res.destroyed) res.end();
			})();
			return;
		}
		if (p.startsWith('/held/')) {
			// 20 KB over about a second (after the gate); counts the downloads open at once.
			const who = url.searchParams.get('trigger') ?? '';
			active.set(who, (active.get(who) ?? 0) + 1);
			maxActive.set(who, Math.max(maxActive.get(who) ?? 0, active.get(who)!));
			res.on('close', () => active.set(who, active.get(who)! - 1));
			res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': 20 * 1024 });
			const gate = heldGate;
			void (async () => {
				for (let i = 0; i < 10 && !res.destroyed; i++) {
					res.write(bytes(2 * 1024));
					if (i === 0) await gate;
					await sleep(100);
				}
				res.end();
			})();
			return;
		}
		if (p === '/slow') {
			// 32 KB every 200 ms of 2 MB: a steady host, above the drip floor, too slow for the deadline.
			const size = 2 * 1024 * 1024;
			res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': size });
			void (async () => {
				while (!res.destroyed && (written.get(p) ?? 0) < size) {
					count(32 * 1024);
					res.write(bytes(32 * 1024));
					await sleep(200);
				}
				if (!res.destroyed) res.end();
			})();
			return;
		}
		res.writeHead(404).end();
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	port = (server.address() as AddressInfo).port;
	base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
	for (const res of open) res.destroy();
	await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
	hits.clear();
	written.clear();
	maxActive.clear();
});

/** The probe's item: `files` and binary when the download worked, else `error` and `kind`. */
async function download(urls: string[], options: IDataObject = {}) {
	const result = await runWorkflow(
		chain(
			{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
			{
				name: 'Probe',
				type: 'test.boundsProbe',
				parameters: { urls: JSON.stringify(urls), options: JSON.stringify(options) },
			},
		),
		{ binaryMode: 'filesystem' },
	);
	expect(result.error).toBeUndefined();
	const [item] = result.outputOf('Probe');
	return { item, error: String(item.json.error ?? ''), result };
}

/** The file host is on loopback: these tests turn the credential's rule off, as users would. */
const local = { allowPrivateFileHosts: true };

describe('private, loopback and link-local addresses are refused by default, before any request', () => {
	it.each([
		[
			'127.0.0.1',
			() => `http://127.0.0.1:${port}/ok/a.mp4`,
			/127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/,
		],
		['::1', () => `http://[::1]:${port}/ok/a.mp4`, /::1 is the loopback address \(::1\)/],
		[
			'IPv4-mapped IPv6',
			() => `http://[::ffff:127.0.0.1]:${port}/ok/a.mp4`,
			/loopback address \(127\.0\.0\.0\/8\), written as IPv6/,
		],
		['0.0.0.0', () => `http://0.0.0.0:${port}/ok/a.mp4`, /unspecified/],
		[
			'a decimal IPv4 (2130706433)',
			() => `http://2130706433:${port}/ok/a.mp4`,
			/127\.0\.0\.1 is a loopback address/,
		],
		['localhost', () => `http://localhost:${port}/ok/a.mp4`, /localhost is a loopback name/],
	])('%s', async (_label, url, words) => {
		const before = storeCount();
		const { item, error } = await download([url()]);
		expect(error).toMatch(words);
		expect(error).toContain(
			'turn on "Allow Private Network File Hosts" in the Media Generation credential',
		);
		expect(item.json.kind).toBe('config');
		expect(hits.size).toBe(0);
		expect(storeCount()).toBe(before);
	});

	it("a name checked after DNS resolution: this machine's host name", async () => {
		const name = os.hostname();
		const addresses = (await dns.lookup(name, { all: true })).map((a) => a.address);
		const privateOnes = addresses.filter((a) => privateAddressKind(a) !== undefined);
		if (privateOnes.length === 0) {
			throw new Error(
				`this test needs a host name that resolves to a private address; ${name} resolves to ${addresses.join(', ')}`,
			);
		}
		const { error } = await download([`http://${name}:${port}/ok/a.mp4`]);
		expect(error).toContain(`${name} resolves to ${privateOnes[0]}`);
		expect(hits.size).toBe(0);
	});

	it('a task with one refused address fetches none of its files', async () => {
		const { error } = await download(
			[`${base.replace('127.0.0.1', 'localhost')}/ok/a.mp4`, `http://[::1]:${port}/ok/b.mp4`],
			{
				allowPrivateFileHosts: false,
			},
		);
		expect(error).toMatch(/refused/);
		expect(hits.size).toBe(0);
	});
});

describe('redirects: followed by hand, at most 5, each hop checked', () => {
	it('5 redirects: the file arrives', async () => {
		const { item, result } = await download([`${base}/hop/4`], local);
		expect(item.json.error).toBeUndefined();
		expect((await result.readBinary(item)).equals(BODY)).toBe(true);
		expect(hits.get('/ok/file.mp4')).toBe(1);
	});

	it('6 redirects: refused after the 6th answer, not retried, nothing stored', async () => {
		const before = storeCount();
		const { item, error } = await download([`${base}/hop/5`], { ...local, retries: 2 });
		expect(error).toMatch(/redirected more than 5 times .*at most 5 redirects are followed/);
		expect(item.json.kind).toBe('config');
		expect([...hits.values()].reduce((a, b) => a + b, 0)).toBe(6);
		expect(hits.get('/ok/file.mp4')).toBeUndefined();
		expect(storeCount()).toBe(before);
	});

	it('a redirect to another scheme (file:) is refused at that hop', async () => {
		const { error } = await download([`${base}/to-file-scheme`], local);
		expect(error).toMatch(
			/after a redirect to "file:\/\/\/etc\/passwd": .*uses "file:", which is refused/,
		);
	});
});

describe('the size limit, before any byte is stored and on the running count', () => {
	it('a Content-Length over Max File Size: refused after the headers, nothing stored, not retried', async () => {
		const before = storeCount();
		const { item, error } = await download([`${base}/claims-5mb`], {
			...local,
			maxFileSizeMb: 1,
			retries: 2,
		});
		expect(error).toContain('5.0 MB (5242880 bytes, its Content-Length)');
		expect(error).toContain('the limit of 1 MB set in Options → Max File Size (MB)');
		expect(item.json.kind).toBe('config');
		expect(hits.get('/claims-5mb')).toBe(1);
		expect(storeCount()).toBe(before);
	});

	it('an endless body without Content-Length: stopped once the count passes the limit', async () => {
		const before = storeCount();
		const { error } = await download([`${base}/endless`], {
			...local,
			maxFileSizeMb: 1,
			retries: 2,
		});
		expect(error).toMatch(
			/the file is at least 1\.\d MB \(\d+ bytes received so far\), over the limit of 1 MB/,
		);
		expect(hits.get('/endless')).toBe(1);
		// The connection was closed: the host got to write little more than the limit (socket buffers).
		await sleep(200);
		const wrote = written.get('/endless') ?? 0;
		process.stdout.write(
			`[bounds] endless body, limit 1 MB: the host got to write ${(wrote / 1024 / 1024).toFixed(1)} MB before the node closed the connection\n`,
		);
		expect(wrote).toBeLessThan(16 * 1024 * 1024);
		expect(storeCount()).toBe(before);
	});

	it('a lying Content-Length (a gzip bomb: 50 KB that decode to 50 MB): refused, nothing stored', async () => {
		const before = storeCount();
		const { error } = await download([`${base}/gzip-bomb`], local);
		expect(error).toMatch(/sent the file compressed/);
		expect(hits.get('/gzip-bomb')).toBe(1);
		expect(storeCount()).toBe(before);
	});
});

describe('time: a drip and a slow host end', () => {
	it('one byte every 300 ms: given up when a window moves under 16 KB', async () => {
		const started = Date.now();
		const { error } = await download([`${base}/drip`], { ...local, stallMs: 1_500 });
		expect(error).toMatch(/the file host sent only \d+ bytes in 2 s/);
		expect(Date.now() - started).toBeLessThan(10_000);
	});

	it('a steady but slow host: the per-file deadline ends it, not retried', async () => {
		const started = Date.now();
		const before = storeCount();
		const { error } = await download([`${base}/slow`], { ...local, deadlineMs: 3_000, retries: 2 });
		expect(error).toMatch(
			/did not arrive within 3 s, the limit for one file with its retries \(\d+ bytes had arrived\)/,
		);
		expect(hits.get('/slow')).toBe(1);
		expect(Date.now() - started).toBeLessThan(10_000);
		expect(storeCount()).toBe(before);
	});
});

describe("a task's downloads share its limits (issue 28, finding 4)", () => {
	it('a file that stalls is retried once, not once per retry: the stall window is not multiplied', async () => {
		const { error } = await download([`${base}/drip`], { ...local, stallMs: 1_500, retries: 4 });
		expect(error).toMatch(
			/the file host sent only \d+ bytes in 2 s \(a download must move at least 16 KB\/s\)/,
		);
		expect(hits.get('/drip')).toBe(2);
	});

	it("the task's files together over its byte budget: stopped, nothing stored, not retried", async () => {
		const before = storeCount();
		const { item, error } = await download([`${base}/ok/a.mp4`, `${base}/ok/b.mp4`], {
			...local,
			maxTaskBytes: 300_000,
			retries: 2,
		});
		expect(error).toMatch(
			/the task's files together exceed 0\.3 MB, the limit for one task \(200000 bytes received, 200000 more announced/,
		);
		expect(item.json.kind).toBe('config');
		expect(hits.get('/ok/b.mp4')).toBe(1);
		expect(storeCount()).toBe(before);
	});

	it("the Trigger's downloads take turns per trigger: at most 4 callbacks of one trigger download at once, another trigger has its own", async () => {
		// The first downloads are held open until both triggers have 4 under way: with turns per
		// process (issue 35: one trigger's callbacks held every other trigger's) the second
		// trigger would never get one. Nothing here depends on how fast the machine is.
		let open!: () => void;
		heldGate = new Promise<void>((resolve) => (open = resolve));
		const running = runWorkflow(
			chain(
				{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
				{
					name: 'Probe',
					type: 'test.boundsProbe',
					parameters: {
						urls: JSON.stringify([`${base}/held/a.mp4`]),
						options: JSON.stringify({ asTriggerCallbacks: 10, triggers: 2 }),
					},
				},
			),
			{ binaryMode: 'filesystem' },
		);
		try {
			const both = () => active.get('0') === 4 && active.get('1') === 4;
			for (const end = Date.now() + 20_000; !both() && Date.now() < end; ) await sleep(20);
			expect(Object.fromEntries(active)).toEqual({ '0': 4, '1': 4 });
		} finally {
			heldGate = undefined;
			open();
		}
		const result = await running;
		expect(result.outputOf('Probe')[0].json.failed).toBe(0);
		expect(hits.get('/held/a.mp4')).toBe(20);
		// Never more than 4 of one trigger at once, over all 20 downloads.
		expect(Object.fromEntries(maxActive)).toEqual({ '0': 4, '1': 4 });
	});
});
