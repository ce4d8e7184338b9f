// Downloads of result files inside a real n8n execution: a test-only node calls the shared
// download code with n8n-core's own request and binary helpers (filesystem binary mode, as n8n
// runs by default), against a local file host that misbehaves on purpose.
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { downloadTaskFiles } from '../../../nodes/shared/transport/downloads';
import { TransportError } from '../../../nodes/shared/transport/faults';
import type { TaskFile } from '../../../nodes/shared/task';
import {
	BINARY_DATA_PATH,
	MANUAL_TRIGGER_TYPE,
	chain,
	registerNodeType,
	runWorkflow,
} from '../../harness';

/** Files in n8n's binary store (data files and their .metadata). */
const storeCount = () =>
	fs.existsSync(BINARY_DATA_PATH)
		? fs
				.readdirSync(BINARY_DATA_PATH, { recursive: true, withFileTypes: true })
				.filter((e) => e.isFile()).length
		: 0;

jest.setTimeout(30_000);

/** Test-only node: downloads the files of a finished task given as parameters. */
class DownloadProbe implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Download Probe',
		name: 'test.downloadProbe',
		group: ['transform'],
		version: 1,
		description: 'Test-only: runs downloadTaskFiles',
		defaults: { name: 'Probe' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		usableAsTool: true,
		properties: [
			{ displayName: 'Files', name: 'files', type: 'json', default: '[]' },
			{ displayName: 'Stall (Ms)', name: 'stallMs', type: 'number', default: 60_000 },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const files = JSON.parse(this.getNodeParameter('files', 0) as string) as TaskFile[];
		const stallMs = this.getNodeParameter('stallMs', 0) as number;
		try {
			const { binary, files: described } = await downloadTaskFiles(
				this,
				{ task_id: 'task-42', status: 'finished', files },
				// The file host of these tests listens on 127.0.0.1, a loopback address the node
				// refuses unless the credential's Allow Private Network File Hosts is on.
				{ modelLabel: 'vidmodel-1.5-pro', stallMs, retries: 2, allowPrivateFileHosts: true },
			);
			return [[{ json: { files: described }, binary, pairedItem: { item: 0 } }]];
		} catch (error) {
			const kind = error instanceof TransportError ? error.fault.kind : 'other';
			return [[{ json: { error: (error as Error).message, kind }, pairedItem: { item: 0 } }]];
		}
	}
}
registerNodeType(new DownloadProbe());

const bytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => i % 251));

interface Seen {
	path: string;
	authorization?: string;
}

let server: http.Server;
let base = '';
const seen: Seen[] = [];
const hits = new Map<string, number>();
const stalled: http.ServerResponse[] = [];

beforeAll(async () => {
	server = http.createServer((req, res) => {
		const path = req.url ?? '/';
		seen.push({ path, authorization: req.headers.authorization });
		const hit = (hits.get(path) ?? 0) + 1;
		hits.set(path, hit);
		const body = bytes(200_000);
		if (path.startsWith('/gone')) {
			res.writeHead(404).end('not found');
			return;
		}
		const type = path.startsWith('/octet')
			? 'application/octet-stream'
			: path.endsWith('.mp3')
				? 'audio/mpeg'
				: path.endsWith('.mp4')
					? 'video/mp4'
					: 'image/png';
		res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length });
		if (path.startsWith('/truncate-once') && hit === 1) {
			res.write(body.subarray(0, 50_000));
			setTimeout(() => res.destroy(), 20);
			return;
		}
		if (path.startsWith('/stall-once') && hit === 1) {
			// Half the body, then silence with the connection kept open.
			res.write(body.subarray(0, 100_000));
			stalled.push(res);
			return;
		}
		res.end(body);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
	for (const res of stalled) res.destroy();
	await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
	seen.length = 0;
	hits.clear();
});

async function download(files: TaskFile[], stallMs = 60_000) {
	const result = await runWorkflow(
		chain(
			{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
			{
				name: 'Probe',
				type: 'test.downloadProbe',
				parameters: { files: JSON.stringify(files), stallMs },
			},
		),
		{ binaryMode: 'filesystem' },
	);
	expect(result.error).toBeUndefined();
	const [item] = result.outputOf('Probe');
	return { item, result };
}

describe('downloading result files through n8n', () => {
	it('stores every file with its name, mime type, size and binary property', async () => {
		const { item, result } = await download([
			{ file_url: `${base}/ok/a.mp4`, file_type: 'video' },
			{ file_url: `${base}/octet/blob`, file_type: 'video' },
		]);
		expect(item.json.files).toEqual([
			{
				url: `${base}/ok/a.mp4`,
				file_type: 'video',
				mime_type: 'video/mp4',
				file_name: 'vidmodel-1-5-pro-task-42-1.mp4',
				size: 200_000,
				binary_property: 'data',
			},
			{
				url: `${base}/octet/blob`,
				file_type: 'video',
				mime_type: 'video/mp4',
				file_name: 'vidmodel-1-5-pro-task-42-2.mp4',
				size: 200_000,
				binary_property: 'data_1',
			},
		]);
		expect(item.binary?.data.mimeType).toBe('video/mp4');
		expect(item.binary?.data.fileName).toBe('vidmodel-1-5-pro-task-42-1.mp4');
		expect((await result.readBinary(item, 'data')).equals(bytes(200_000))).toBe(true);
		expect((await result.readBinary(item, 'data_1')).equals(bytes(200_000))).toBe(true);
		// Streamed to disk by n8n's filesystem mode, not kept in the item.
		expect(result.binaryPath(item, 'data')).toBeDefined();
	});

	it('never sends an Authorization header to the file host', async () => {
		await download([{ file_url: `${base}/ok/b.png`, file_type: 'image' }]);
		expect(seen.length).toBeGreaterThan(0);
		expect(seen.every((s) => s.authorization === undefined)).toBe(true);
	});

	it('a body cut short of its Content-Length is fetched again, complete; the failed attempt left no file', async () => {
		const before = storeCount();
		const { item, result } = await download([{ file_url: `${base}/truncate-once/c.mp4` }]);
		expect(storeCount() - before).toBe(2);
		expect(hits.get('/truncate-once/c.mp4')).toBe(2);
		expect((item.json.files as Array<{ size: number }>)[0].size).toBe(200_000);
		expect((await result.readBinary(item)).equals(bytes(200_000))).toBe(true);
	});

	it('a body that stops flowing is given up after the stall limit and fetched again; the failed attempt left no file', async () => {
		const before = storeCount();
		const { item, result } = await download([{ file_url: `${base}/stall-once/d.mp3` }], 1_500);
		// One data file and its metadata.
		expect(storeCount() - before).toBe(2);
		expect(hits.get('/stall-once/d.mp3')).toBe(2);
		expect(item.binary?.data.mimeType).toBe('audio/mpeg');
		expect((await result.readBinary(item)).equals(bytes(200_000))).toBe(true);
	});

	it('an expired link (404) is not retried and the error mentions the 24 hours', async () => {
		const { item } = await download([{ file_url: `${base}/gone/e.png` }]);
		expect(hits.get('/gone/e.png')).toBe(1);
		expect(item.json.kind).toBe('http');
		expect(String(item.json.error)).toContain('HTTP 404');
		expect(String(item.json.error)).toContain('24 hours');
	});

	it.each([
		['file:///etc/passwd'],
		['ftp://files.example.com/a.mp4'],
		['data:video/mp4;base64,AAAA'],
		['/relative/path.mp4'],
	])(
		'a non-http(s) URL (%s) is refused at once, before any request, with a clear message',
		async (url) => {
			const started = Date.now();
			const { item } = await download([
				{ file_url: `${base}/ok/first.mp4`, file_type: 'video' },
				{ file_url: url, file_type: 'video' },
			]);
			expect(String(item.json.error)).toMatch(/only http:\/\/ and https:\/\/ links are downloaded/);
			expect(String(item.json.error)).not.toMatch(/ERR_ASSERTION|attempts/);
			expect(item.json.kind).toBe('config');
			// Not even the task's valid file was fetched, and no retry wait happened.
			expect(seen).toHaveLength(0);
			expect(Date.now() - started).toBeLessThan(3_000);
		},
	);
});
