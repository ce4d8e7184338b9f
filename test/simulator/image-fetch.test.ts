// Contract: after accepting a task the simulator fetches each `input.image_urls` item as the
// service would (GET, redirects followed, type judged by Content-Type and first bytes, the spec's
// size limit, a deadline) and fails the task, naming the URL and why, when one cannot be fetched.
// Every fetch is logged with the bytes' SHA-256 and the headers the image host got.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { MAX_IMAGE_BYTES } from '../../nodes/MediaGeneration/models/referenceImages';
import { client, type Client, type TaskView } from './client';
import {
	FETCH_HEADERS,
	referenceChunks,
	referenceSize,
	startSimulator,
	type ReferenceFormat,
	type Simulator,
} from './index';

const FAST = 'vidmodel-2.0-fast/image-to-video';
const PRO = 'vidmodel-1.5-pro';
// Every case but the deadline's has a deadline no fetch on loopback reaches, however loaded the
// machine (a 10 MB image streamed by a busy simulator can take seconds); the deadline's case has
// a short one and a host that never answers.
const TIMEOUT_MS = 60_000;
const SHORT_TIMEOUT_MS = 400;

let sim: Simulator;
let api: Client;
beforeAll(async () => {
	sim = await startSimulator({ defaultDurationMs: 50, fetchImages: { timeoutMs: TIMEOUT_MS } });
	api = client(sim);
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

/**
 * An image host on loopback that answers each request (a PNG) only once `release()` is called;
 * `seen` counts the requests it got. `close()` ends what it holds.
 */
async function heldHost() {
	let release!: () => void;
	const released = new Promise<void>((resolve) => (release = resolve));
	const held = new Set<http.ServerResponse>();
	let seen = 0;
	const server = http.createServer((_req, res) => {
		seen++;
		held.add(res);
		void released.then(() => {
			res.writeHead(200, { 'Content-Type': 'image/png' });
			for (const chunk of referenceChunks('png')) res.write(chunk);
			res.end();
		});
	});
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/held.png`,
		seen: () => seen,
		release,
		close: async () => {
			for (const res of held) res.destroy();
			await new Promise((r) => server.close(r));
		},
	};
}

async function until(check: () => boolean, what: string) {
	const end = Date.now() + 30_000;
	while (!check()) {
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 10));
	}
}

const sha256 = (format: ReferenceFormat, size?: number) => {
	const h = createHash('sha256');
	for (const c of referenceChunks(format, size)) h.update(c);
	return h.digest('hex');
};

/** Submits a 2.0 fast task with these frames; returns the submit answer and the last status. */
async function animate(urls: string[]) {
	const submitted = await api.submit({ model: FAST, input: { prompt: 'move', image_urls: urls } });
	expect(submitted.status).toBe(200);
	const id = submitted.data.data.task_id as string;
	const seen = await api.pollToEnd(id);
	return { submitted, id, seen, last: seen[seen.length - 1] as TaskView };
}

describe('images that arrive', () => {
	it('PNG, JPEG and WebP (one behind redirects) arrive whole: the log holds their SHA-256, and the host got no key', async () => {
		const urls = [
			sim.referenceUrl('start.png', { size: 5000 }),
			sim.referenceUrl('end.jpg', { size: 3000, redirects: 2 }),
		];
		const { last, id } = await animate(urls);
		expect(last).toMatchObject({ status: 'finished', error_message: null });
		const webp = sim.referenceUrl('ref.webp', { size: 4000 });
		const pro = await api.create(PRO, {
			prompt: 'p',
			aspect_ratio: '1:1',
			duration: 4,
			image_urls: [webp],
		});
		expect((await api.pollToEnd(pro)).pop()!.status).toBe('finished');

		const byUrl = (u: string) => sim.fetches.find((f) => f.url === u)!;
		expect(byUrl(urls[0])).toMatchObject({
			taskId: id,
			index: 0,
			ok: true,
			status: 200,
			contentType: 'image/png',
			detectedType: 'image/png',
			bytes: 5000,
			sha256: sha256('png', 5000),
			redirects: [],
		});
		expect(byUrl(urls[1])).toMatchObject({
			index: 1,
			ok: true,
			bytes: 3000,
			sha256: sha256('jpg', 3000),
			finalUrl: sim.referenceUrl('end.jpg', { size: 3000 }),
		});
		expect(byUrl(urls[1]).redirects).toHaveLength(2);
		expect(byUrl(webp)).toMatchObject({
			ok: true,
			detectedType: 'image/webp',
			sha256: sha256('webp', 4000),
		});
		// What the image host received: the service's own headers, never the submitter's key.
		expect(byUrl(urls[0]).requestHeaders).toEqual(FETCH_HEADERS);
		const hostSaw = sim.requests.filter((r) => r.endpoint === 'reference');
		expect(hostSaw).toHaveLength(5); // 1 + 3 hops + 1
		for (const r of hostSaw) {
			expect(r.method).toBe('GET');
			expect(r.headers.authorization).toBeUndefined();
			expect(JSON.stringify(r.headers)).not.toContain(sim.apiKey);
		}
	});

	it(`exactly ${MAX_IMAGE_BYTES} bytes (10 MB read as MiB, as the node's pre-check reads it) and a generic type with image bytes pass`, async () => {
		const urls = [
			sim.referenceUrl('big.png', { size: MAX_IMAGE_BYTES, noLength: true }),
			sim.referenceUrl('plain.png', { type: 'application/octet-stream' }),
		];
		const { last } = await animate(urls);
		expect(last.status).toBe('finished');
		expect(sim.fetches.map((f) => [f.ok, f.bytes]).sort()).toEqual(
			[
				[true, MAX_IMAGE_BYTES],
				[true, referenceSize('png')],
			].sort(),
		);
	});

	it('the task cannot finish before its images have arrived, however short its generation', async () => {
		const host = await heldHost();
		try {
			const id = await api.create(FAST, {
				prompt: 'quick [sim:duration=0]',
				image_urls: [host.url],
			});
			// The image is asked for and held: the task waits for it, whatever the time.
			await until(() => host.seen() === 1, 'the image requested');
			expect(sim.view(id)).toMatchObject({ status: 'processing' });
			host.release();
			expect((await api.pollToEnd(id)).pop()!.status).toBe('finished');
			expect(sim.fetches).toHaveLength(1);
		} finally {
			await host.close();
		}
	});
});

describe('images that do not arrive fail the task, naming the URL and why', () => {
	let closedPort: number;
	beforeAll(async () => {
		const s = http.createServer();
		await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
		closedPort = (s.address() as AddressInfo).port;
		await new Promise((r) => s.close(r));
	});

	const cases: Array<[string, () => string, RegExp]> = [
		['404', () => sim.referenceUrl('gone.png', { status: 404 }), /HTTP 404/],
		[
			'a type the service refuses (GIF)',
			() => sim.referenceUrl('anim.gif'),
			/Content-Type image\/gif is not accepted; allowed: image\/jpeg, image\/png, image\/webp/,
		],
		[
			'a web page instead of an image',
			() => sim.referenceUrl('page.png', { type: 'text/html' }),
			/Content-Type text\/html is not accepted/,
		],
		[
			'a text file named .png, served as image/png',
			() => sim.referenceUrl('fake.png', { text: true }),
			/not a JPEG, PNG or WebP image \(its first bytes are "This is not/,
		],
		[
			'a JPEG that says it is a PNG',
			() => sim.referenceUrl('photo.jpg', { type: 'image/png' }),
			/Content-Type image\/png does not match the content, which is a JPEG image/,
		],
		[
			'one byte over the limit, as its Content-Length says',
			() => sim.referenceUrl('huge.png', { size: MAX_IMAGE_BYTES + 1 }),
			/the image is 10\.0 MB \(10485761 bytes\); allowed: at most 10\.0 MB \(10485760 bytes\)/,
		],
		[
			'over the limit without a Content-Length (cut off while streaming)',
			() => sim.referenceUrl('huge.webp', { size: MAX_IMAGE_BYTES + 2, noLength: true }),
			/larger than 10\.0 MB \(more than 10485760 bytes received\)/,
		],
		[
			'a redirect loop',
			() => sim.referenceUrl('loop.png', { redirectLoop: true }),
			/redirect loop/,
		],
		[
			'too many redirects',
			() => sim.referenceUrl('far.png', { redirects: 6 }),
			/more than 5 redirects/,
		],
		[
			'an unreachable host',
			() => `http://127.0.0.1:${closedPort}/start.png`,
			/the host could not be reached \(ECONNREFUSED\)/,
		],
	];

	it.each(cases)('%s', async (_label, bad, reason) => {
		const good = sim.referenceUrl('start.png');
		const url = bad();
		const { submitted, last } = await animate([good, url]);
		// The submission itself was accepted as before: the failure comes with the task.
		expect(submitted.data).toMatchObject({ code: 200, data: { status: 'not_started' } });
		expect(last).toMatchObject({ status: 'failed', progress: 0 });
		expect(last.error_message).toContain(`image_urls[1] could not be fetched from ${url}: `);
		expect(last.error_message).toMatch(reason);
		expect(last.error_message).not.toContain('image_urls[0]');
		const logged = sim.fetches.find((f) => f.index === 1)!;
		expect(logged).toMatchObject({ ok: false, url });
		expect(logged.reason).toMatch(reason);
	});
});

describe('a host that does not answer in time fails the task, naming the URL and the deadline', () => {
	it(`${SHORT_TIMEOUT_MS / 1000} s without an answer`, async () => {
		const short = await startSimulator({
			defaultDurationMs: 50,
			fetchImages: { timeoutMs: SHORT_TIMEOUT_MS },
		});
		const host = await heldHost();
		try {
			const c = client(short);
			const id = await c.create(FAST, { prompt: 'move', image_urls: [host.url] });
			const last = (await c.pollToEnd(id)).pop()!;
			expect(last).toMatchObject({ status: 'failed', progress: 0 });
			expect(last.error_message).toContain(`image_urls[0] could not be fetched from ${host.url}: `);
			expect(last.error_message).toMatch(/no complete answer within 0\.4 s/);
			expect(short.fetches).toMatchObject([{ ok: false, url: host.url }]);
		} finally {
			await host.close();
			await short.close();
		}
	});
});

describe('fetchImages: false', () => {
	it('accepts and finishes a task whose image URLs lead nowhere, fetching nothing', async () => {
		const off = await startSimulator({ defaultDurationMs: 20, fetchImages: false });
		try {
			const c = client(off);
			const id = await c.create(FAST, {
				prompt: 'p',
				image_urls: ['https://cdn.example.invalid/a.png'],
			});
			expect((await c.pollToEnd(id)).pop()!.status).toBe('finished');
			expect(off.fetches).toHaveLength(0);
		} finally {
			await off.close();
		}
	});
});
