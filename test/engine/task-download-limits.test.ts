// A task's downloads share its limits (issue 28, finding 4), through the real node and n8n-core's
// engine against a hostile service on loopback that is its own file host: the node's Timeout
// bounds the downloads too, and a task lists more files than are downloaded. (The Trigger's
// download turns are tested in file-host-bounds.test.ts.)
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject } from 'n8n-workflow';

import { MAX_FILES_PER_TASK } from '../../nodes/shared/transport/downloads';
import { runWorkflow } from '../harness';
import { NODE, mediaWorkflow } from './support';

jest.setTimeout(90_000);

const TASK_ID = 'task_1234567890';
/** 4.5 GiB: over the 4 GiB a task's files took at most before issue 37, and over 2048 MB. */
const HUGE = 4.5 * 1024 ** 3;
const API_KEY = ['sk', 'limits', '0123456789'].join('-');
let server: http.Server;
let base = '';
/** The files the status answer lists. */
let files: string[] = [];
const fileHits: string[] = [];
const open = new Set<http.ServerResponse>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
	server = http.createServer((req, res) => {
		open.add(res);
		res.on('close', () => open.delete(res));
		const path = new URL(req.url ?? '/', 'http://x').pathname;
		if (path.startsWith('/api/generate/status/')) {
			const data = {
				task_id: TASK_ID,
				status: 'finished',
				files: files.map((file_url) => ({ file_url })),
			};
			res
				.writeHead(200, { 'Content-Type': 'application/json' })
				.end(JSON.stringify({ code: 200, msg: 'success', data }));
			return;
		}
		fileHits.push(path);
		if (path.startsWith('/drip/')) {
			// One byte every 2 s of a 1,000-byte file.
			res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': 1000 });
			void (async () => {
				for (let i = 0; i < 1000 && !res.destroyed; i++) {
					res.write(Buffer.from([i % 251]));
					await sleep(2_000);
				}
			})();
			return;
		}
		if (path.startsWith('/huge/')) {
			// 4.5 GiB announced; 64 kB sent, then nothing (the node's Timeout ends what it accepts).
			res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': HUGE });
			res.write(Buffer.alloc(64 * 1024, 7));
			return;
		}
		res
			.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': 4 })
			.end(Buffer.from([1, 2, 3, 4]));
	});
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
	for (const res of open) res.destroy();
	await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
	fileHits.length = 0;
});

/** Task → Wait for Completion, errors kept in the item as users keep task_id. */
async function waitForTask(options: IDataObject) {
	const result = await runWorkflow(
		mediaWorkflow(
			{ resource: 'task', operation: 'waitForCompletion', taskId: TASK_ID, options },
			{ onError: 'continueRegularOutput' },
		),
		{
			credentials: {
				mediaGenerationApi: {
					apiKey: API_KEY,
					baseUrl: base,
					allowPrivateFileHosts: true,
				},
			},
		},
	);
	expect(result.error).toBeUndefined();
	const [item] = result.outputOf(NODE);
	return { json: item.json, message: String(item.json.error ?? ''), item };
}

it("a file host that drips a byte every 2 s: the node's Timeout ends the download, with task_id", async () => {
	files = [`${base}/drip/a.mp4`];
	const started = Date.now();
	// 0.1 minute: 6 s (the old code gave the file 30 minutes of its own and retried each stall).
	const { json, message, item } = await waitForTask({ timeoutMinutes: 0.1 });
	const seconds = (Date.now() - started) / 1000;
	process.stdout.write(`[limits] drip under a 6 s Timeout ended after ${seconds.toFixed(1)} s\n`);
	expect(message).toMatch(/the task's files did not all arrive within the node's Timeout \(6 s\)/);
	expect(message).toContain(TASK_ID);
	expect(json.task_id).toBe(TASK_ID);
	expect(item.binary).toBeUndefined();
	expect(fileHits).toEqual(['/drip/a.mp4']);
	expect(seconds).toBeLessThan(60);
});

it(`a task that lists more than ${MAX_FILES_PER_TASK} files: refused before any download, with task_id`, async () => {
	files = Array.from({ length: MAX_FILES_PER_TASK + 1 }, (_, i) => `${base}/ok/${i}.png`);
	const { json, message } = await waitForTask({});
	expect(message).toMatch(
		new RegExp(
			`the task lists ${MAX_FILES_PER_TASK + 1} files; at most ${MAX_FILES_PER_TASK} are downloaded`,
		),
	);
	expect(message).toContain(TASK_ID);
	expect(json.task_id).toBe(TASK_ID);
	expect(fileHits).toHaveLength(0);
});

it(`${MAX_FILES_PER_TASK} files are downloaded`, async () => {
	files = Array.from({ length: MAX_FILES_PER_TASK }, (_, i) => `${base}/ok/${i}.png`);
	const { message, item } = await waitForTask({});
	expect(message).toBe('');
	expect(Object.keys(item.binary ?? {})).toHaveLength(MAX_FILES_PER_TASK);
});

describe('a file over 4 GiB, announced by its Content-Length (issue 37)', () => {
	it('Max File Size 5,000 MB: accepted, the download starts (the task limit follows the option)', async () => {
		files = [`${base}/huge/long-4k.mp4`];
		// The host never sends the rest: the node's Timeout (6 s) ends the download it accepted.
		const { json, message, item } = await waitForTask({ maxFileSizeMb: 5000, timeoutMinutes: 0.1 });
		expect(message).toMatch(
			/the task's files did not all arrive within the node's Timeout \(6 s\) \(65536 bytes had arrived\)/,
		);
		expect(message).not.toMatch(/exceed|over the/);
		expect(json.task_id).toBe(TASK_ID);
		expect(item.binary).toBeUndefined();
		expect(fileHits).toEqual(['/huge/long-4k.mp4']);
	});

	it('Max File Size automatic: refused before reading, naming the option that decides', async () => {
		files = [`${base}/huge/long-4k.mp4`];
		const { json, message, item } = await waitForTask({});
		expect(message).toContain(
			`the file is 4608.0 MB (${HUGE} bytes, its Content-Length), over the default limit of`,
		);
		expect(message).toContain('Options → Max File Size (MB) changes the limit');
		expect(json.task_id).toBe(TASK_ID);
		expect(item.binary).toBeUndefined();
		// Refused on the announcement: one request, no retry.
		expect(fileHits).toEqual(['/huge/long-4k.mp4']);
	});
});
