// Contract: auth, the task lifecycle, result files (valid bytes, sizes, streaming, expiry,
// separate origin) and the request log.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import axios from 'axios';
import * as zlib from 'node:zlib';

import { client, type Client } from './client';
import { mp3Frames, mp4Boxes, pngChunks } from './formats';
import { FILE_VALIDITY_MS, startSimulator, type Simulator } from './index';

let sim: Simulator;
let api: Client;
beforeAll(async () => {
	sim = await startSimulator({ defaultDurationMs: 100 });
	api = client(sim);
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

const download = (url: string) =>
	axios.get<Buffer>(url, { responseType: 'arraybuffer', validateStatus: () => true }).then((r) => ({
		...r,
		data: Buffer.from(r.data),
	}));

async function finishedFiles(model: string, input: Record<string, unknown>) {
	const id = await api.create(model, input);
	const seen = await api.pollToEnd(id);
	const last = seen[seen.length - 1];
	expect(last.status).toBe('finished');
	return last.files!;
}

describe('authentication (API origin)', () => {
	it.each([
		['no Authorization header', {}],
		['a wrong key', { Authorization: 'Bearer not-the-key' }],
		[
			'a non-Bearer scheme',
			{ Authorization: `Basic ${Buffer.from('u:sim-test-key').toString('base64')}` },
		],
		['an empty Bearer', { Authorization: 'Bearer ' }],
	])(
		'%s gets 401 with a JSON error, on submit and status',
		async (_, headers: Record<string, string>) => {
			const plain = {
				validateStatus: () => true,
				headers: { 'Content-Type': 'application/json', ...headers },
			};
			const s = await axios.post(
				`${sim.baseUrl}/api/generate/submit`,
				{ model: 'image-1', input: { prompt: 'x' } },
				plain,
			);
			const g = await axios.get(`${sim.baseUrl}/api/generate/status/anything`, plain);
			for (const r of [s, g]) {
				expect(r.status).toBe(401);
				expect(r.headers['content-type']).toMatch(/application\/json/);
				expect(r.data).toMatchObject({
					code: 401,
					data: null,
					msg: expect.stringMatching(/API key/),
				});
			}
			expect(sim.tasks()).toHaveLength(0);
		},
	);
	it('auth is checked before validation: an invalid body with a wrong key still gets 401', async () => {
		const r = await api.submit({ model: 'nope' }, { Authorization: 'Bearer wrong' });
		expect(r.status).toBe(401);
	});
	it('the status can be 403 instead, for clients that must cope with either', async () => {
		const s403 = await startSimulator({ badKeyStatus: 403 });
		try {
			const r = await client(s403).status('x', { Authorization: 'Bearer wrong' });
			expect([r.status, r.data.code]).toEqual([403, 403]);
		} finally {
			await s403.close();
		}
	});
	it('a custom key is honoured', async () => {
		const other = await startSimulator({ apiKey: 'k-123' });
		try {
			expect(other.apiKey).toBe('k-123');
			expect((await client(other).status('x')).status).toBe(404);
			expect((await api.status('x', { Authorization: 'Bearer k-123' })).status).toBe(401);
		} finally {
			await other.close();
		}
	});
});

describe('unknown tasks and endpoints', () => {
	it('an unknown task id gets 404 { code: 404, msg: "task not found" }', async () => {
		const r = await api.status('task_does_not_exist');
		expect([r.status, r.data]).toEqual([404, { code: 404, msg: 'task not found', data: null }]);
	});
	it.each([
		['400', 400, 400],
		['envelope', 200, 404],
	] as const)('style %s answers HTTP %i with envelope code %i', async (style, http, code) => {
		const other = await startSimulator({ unknownTaskStyle: style });
		try {
			const r = await client(other).status('nope');
			expect([r.status, r.data.code, r.data.data]).toEqual([http, code, null]);
		} finally {
			await other.close();
		}
	});
	it('a submission body over 5 MB gets 413', async () => {
		const r = await api.submit({
			model: 'image-1',
			input: { prompt: 'x'.repeat(6 * 1024 * 1024) },
		});
		expect([r.status, r.data.code]).toEqual([413, 413]);
		expect(sim.tasks()).toHaveLength(0);
	});
	it('other paths get 404 JSON, wrong methods 405', async () => {
		const auth = { headers: { Authorization: `Bearer ${sim.apiKey}` }, validateStatus: () => true };
		expect((await axios.get(`${sim.baseUrl}/api/v2/whatever`, auth)).status).toBe(404);
		expect((await axios.get(`${sim.baseUrl}/api/generate/submit`, auth)).status).toBe(405);
		expect((await axios.delete(`${sim.baseUrl}/api/generate/status/x`, auth)).status).toBe(405);
	});
});

describe('task lifecycle', () => {
	it('not_started at submission, then intermediate statuses with rising progress, then finished with files', async () => {
		const id = await api.create('image-1', { prompt: 'a fox [sim:duration=800]', n: 2 });
		const seen = await api.pollToEnd(id, 10);
		const statuses = [...new Set(seen.map((s) => s.status))];
		expect(statuses).toEqual(['not_started', 'queued', 'processing', 'finished']);
		const progress = seen.map((s) => s.progress);
		expect(progress).toEqual([...progress].sort((a, b) => a - b));
		const during = seen.filter((s) => s.status === 'processing').map((s) => s.progress);
		expect(Math.max(...during)).toBeGreaterThan(Math.min(...during));
		expect(Math.max(...during)).toBeLessThanOrEqual(99);
		for (const s of seen.filter((x) => x.status !== 'finished')) {
			expect(s.files).toBeUndefined();
			expect(s.error_message).toBeNull();
		}
		const last = seen[seen.length - 1];
		expect(last).toMatchObject({
			task_id: id,
			status: 'finished',
			progress: 100,
			error_message: null,
		});
		expect(last.files).toHaveLength(2);
		expect(last.files![0]).toEqual({
			file_url: expect.stringMatching(/\.png$/),
			file_type: 'image',
		});
		expect(new Date(last.created_time).toISOString()).toBe(last.created_time);
	});
	it('[sim:fail=...] ends failed with that error_message and no files', async () => {
		const id = await api.create('video-1', {
			prompt: 'x [sim:fail=Content policy violation] [sim:duration=50]',
		});
		const last = (await api.pollToEnd(id)).pop()!;
		expect(last).toMatchObject({
			status: 'failed',
			error_message: 'Content policy violation',
			progress: 99,
		});
		expect(last.files).toBeUndefined();
	});
	it('[sim:never] is still processing long after the default duration', async () => {
		const id = await api.create('image-1', { prompt: 'x [sim:never]' });
		await new Promise((r) => setTimeout(r, 300));
		const r = await api.status(id);
		expect(r.data.data.status).toBe('processing');
		sim.clock.advance(7 * 24 * 3600 * 1000);
		expect((await api.status(id)).data.data.status).toBe('processing');
	});
	it('status follows elapsed time, not the number of polls', async () => {
		const id = await api.create('image-1', { prompt: 'x [sim:duration=60000]' });
		for (let i = 0; i < 5; i++) expect((await api.status(id)).data.data.status).toBe('not_started');
		sim.clock.advance(60000);
		expect((await api.status(id)).data.data.status).toBe('finished');
	});
	it.each([
		['image-1', { n: 3 }, 3],
		['image-1', {}, 1],
		['image-1', { n: 3, prompt: 'x [sim:files=1]' }, 1],
		['generate-music', { prompt: 'x [sim:files=2]' }, 2],
	])('%s %p gives %i file(s)', async (model, extra, n) => {
		const files = await finishedFiles(model, { prompt: 'x', ...extra });
		expect(files).toHaveLength(n);
	});
});

describe('result files', () => {
	it('image → valid PNG, tiny by default, with every chunk CRC correct', async () => {
		const [f] = await finishedFiles('image-1', { prompt: 'x' });
		const r = await download(f.file_url);
		expect(r.status).toBe(200);
		expect(r.headers['content-type']).toBe('image/png');
		expect(r.data.length).toBeLessThan(200);
		expect(pngChunks(r.data)).toEqual(['IHDR', 'IDAT', 'IEND']);
		// The pixel data decompresses: one filter byte and one RGBA pixel.
		expect(zlib.inflateSync(r.data.subarray(8 + 25 + 8, r.data.length - 12 - 4))).toHaveLength(5);
	});
	it.each([100, 12345, 3 * 1024 * 1024 + 7])(
		'PNG of %i bytes has exactly that size and stays valid',
		async (size) => {
			const [f] = await finishedFiles('image-1', { prompt: `x [sim:size=${size}]` });
			const r = await download(f.file_url);
			expect(r.data.length).toBe(size);
			expect(Number(r.headers['content-length'])).toBe(size);
			const types = pngChunks(r.data);
			expect(types[0]).toBe('IHDR');
			expect(types[types.length - 1]).toBe('IEND');
		},
	);
	it.each(['vidmodel-1.5-pro', 'vidmodel-2.0-fast/image-to-video', 'video-1'])(
		'%s → MP4 starting with an ftyp box, boxes spanning the whole file',
		async (model) => {
			const input =
				model === 'vidmodel-1.5-pro'
					? { prompt: 'x [sim:size=5000]', aspect_ratio: '1:1', duration: 4 }
					: model === 'video-1'
						? { prompt: 'x [sim:size=5000]' }
						: { prompt: 'x [sim:size=5000]', image_urls: [sim.referenceUrl('a.png')] };
			const [f] = await finishedFiles(model, input);
			expect(f).toEqual({ file_url: expect.stringMatching(/\.mp4$/), file_type: 'video' });
			const r = await download(f.file_url);
			expect(r.headers['content-type']).toBe('video/mp4');
			expect(r.data.length).toBe(5000);
			expect(r.data.toString('ascii', 4, 12)).toBe('ftypisom');
			expect(mp4Boxes(r.data)).toEqual(['ftyp', 'free']);
		},
	);
	it.each([undefined, 1000, 1024 * 1024])(
		'music → MP3 (ID3 tag then MPEG frames), size %p',
		async (size) => {
			const prompt = size ? `x [sim:size=${size}]` : 'x';
			const [f] = await finishedFiles('generate-music', { prompt });
			expect(f).toEqual({ file_url: expect.stringMatching(/\.mp3$/), file_type: 'audio' });
			const r = await download(f.file_url);
			expect(r.headers['content-type']).toBe('audio/mpeg');
			if (size) expect(r.data.length).toBe(size);
			expect(mp3Frames(r.data)).toBeGreaterThanOrEqual(size ? Math.floor((size - 10) / 417) : 2);
		},
	);
	it('a 512 MB file streams without being held in memory (measured, printed)', async () => {
		// Garbage chunks not yet collected make RSS wobble by up to ~100 MB whatever the size
		// (1 GB measured at +50..90 MB): a file big enough to stand out of that noise is used.
		const size = 512 * 1024 * 1024;
		const [f] = await finishedFiles('video-1', { prompt: `x [sim:size=${size}]` });
		global.gc?.();
		const before = process.memoryUsage().rss;
		let peak = before;
		let bytes = 0;
		let head = Buffer.alloc(0);
		const r = await axios.get(f.file_url, { responseType: 'stream' });
		expect(Number(r.headers['content-length'])).toBe(size);
		await new Promise<void>((resolve, reject) => {
			r.data.on('data', (c: Buffer) => {
				if (head.length < 12) head = Buffer.concat([head, c.subarray(0, 12)]);
				bytes += c.length;
				if ((bytes & 0xfffff) < c.length) peak = Math.max(peak, process.memoryUsage().rss);
			});
			r.data.on('end', resolve);
			r.data.on('error', reject);
		});
		expect(bytes).toBe(size);
		expect(head.toString('ascii', 4, 8)).toBe('ftyp');
		const growthMb = (peak - before) / 1024 / 1024;
		process.stdout.write(
			`[figure] 512 MB file streamed: peak RSS growth ${growthMb.toFixed(1)} MB\n`,
		);
		// Holding the file anywhere (server or client side) would grow RSS by 512 MB.
		expect(growthMb).toBeLessThan(256);
		// Streaming 512 MB takes ~2 s on an idle machine; a loaded shared one needs far more.
	}, 60_000);
	it('files are served on another origin than the API, without auth, and the log records whether a key arrived', async () => {
		const [f] = await finishedFiles('image-1', { prompt: 'x' });
		expect(new URL(f.file_url).origin).toBe(sim.fileBaseUrl);
		expect(new URL(f.file_url).origin).not.toBe(new URL(sim.baseUrl).origin);
		expect((await download(f.file_url)).status).toBe(200);
		await axios.get(f.file_url, { headers: { Authorization: 'Bearer leaked' } });
		const fileHits = sim.requests.filter((e) => e.origin === 'files');
		expect(fileHits.map((e) => e.headers.authorization)).toEqual([undefined, 'Bearer leaked']);
		expect(fileHits.every((e) => e.status === 200 && e.endpoint === 'file')).toBe(true);
	});
	it('a file expires 24 hours after generation (moved clock) and then gets 404', async () => {
		const [f] = await finishedFiles('image-1', { prompt: 'x' });
		sim.clock.advance(FILE_VALIDITY_MS - 5000);
		expect((await download(f.file_url)).status).toBe(200);
		sim.clock.advance(10000);
		const r = await download(f.file_url);
		expect(r.status).toBe(404);
		expect(JSON.parse(r.data.toString()).msg).toBe('file expired');
	});
	it('HEAD tells type and size without a body', async () => {
		const [f] = await finishedFiles('generate-music', { prompt: 'x [sim:size=50000]' });
		const r = await axios.head(f.file_url);
		expect([r.status, r.headers['content-type'], r.headers['content-length'], r.data]).toEqual([
			200,
			'audio/mpeg',
			'50000',
			'',
		]);
	});
	it('unknown or tampered file URLs get 404', async () => {
		const [f] = await finishedFiles('image-1', { prompt: 'x' });
		expect((await download(f.file_url.replace(/-[^-/]+\.png$/, '-deadbeef.png'))).status).toBe(404);
		expect((await download(`${sim.fileBaseUrl}/files/task_nope/0-abc.png`)).status).toBe(404);
	});
});

describe('reference images on the file host', () => {
	const get = (url: string, headers: Record<string, string> = {}) =>
		axios
			.get<ArrayBuffer>(url, { responseType: 'arraybuffer', headers, validateStatus: () => true })
			.then((r) => ({
				status: r.status,
				headers: r.headers,
				body: Buffer.from(r.data),
			}));
	it.each([
		['start.png', 'image/png', (b: Buffer) => expect(pngChunks(b)[0]).toBe('IHDR')],
		[
			'start.jpg',
			'image/jpeg',
			(b: Buffer) => {
				expect([...b.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
				// Segments (marker + length) chain from SOI exactly to EOI.
				let o = 2;
				while (b[o + 1] !== 0xd9) {
					expect(b[o]).toBe(0xff);
					o += 2 + b.readUInt16BE(o + 2);
				}
				expect(o).toBe(b.length - 2);
			},
		],
		[
			'start.webp',
			'image/webp',
			(b: Buffer) => {
				expect([b.toString('ascii', 0, 4), b.toString('ascii', 8, 12)]).toEqual(['RIFF', 'WEBP']);
				expect(b.readUInt32LE(4)).toBe(b.length - 8);
			},
		],
		['start.gif', 'image/gif', (b: Buffer) => expect(b.toString('ascii', 0, 6)).toBe('GIF89a')],
	])('%s is served as %s at the size asked for, with its signature', async (name, type, check) => {
		const size = 10 * 1024 * 1024 + 2;
		const r = await get(sim.referenceUrl(name, { size }));
		expect([r.status, r.headers['content-type'], r.body.length]).toEqual([200, type, size]);
		check(r.body);
	});
	it('HEAD tells type and size; a Range GET gets 206 with just those bytes', async () => {
		const url = sim.referenceUrl('a.jpg', { size: 5000 });
		const head = await axios.head(url);
		expect([head.headers['content-type'], head.headers['content-length']]).toEqual([
			'image/jpeg',
			'5000',
		]);
		const part = await get(url, { Range: 'bytes=0-11' });
		expect([part.status, part.headers['content-range'], part.body.length]).toEqual([
			206,
			'bytes 0-11/5000',
			12,
		]);
		expect([...part.body.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
		const tail = await get(url, { Range: 'bytes=4990-' });
		expect([tail.status, tail.body.length, [...tail.body.subarray(-2)]]).toEqual([
			206,
			10,
			[0xff, 0xd9],
		]);
	});
	it('can lie about the type, refuse HEAD, hide the length, ignore Range or fail', async () => {
		expect(
			(await axios.head(sim.referenceUrl('x.png', { type: 'application/octet-stream' }))).headers[
				'content-type'
			],
		).toBe('application/octet-stream');
		expect(
			(await axios.head(sim.referenceUrl('x.png', { head: 405 }), { validateStatus: () => true }))
				.status,
		).toBe(405);
		const chunked = await get(sim.referenceUrl('x.png', { noLength: true, size: 1000 }));
		expect([
			chunked.headers['content-length'],
			chunked.headers['transfer-encoding'],
			chunked.body.length,
		]).toEqual([undefined, 'chunked', 1000]);
		const whole = await get(sim.referenceUrl('x.png', { ignoreRange: true, size: 1000 }), {
			Range: 'bytes=0-11',
		});
		expect([whole.status, whole.body.length]).toEqual([200, 1000]);
		expect((await get(sim.referenceUrl('x.png', { status: 404 }))).status).toBe(404);
	});
	it('is logged as endpoint "reference", not as a result download', async () => {
		await axios.head(sim.referenceUrl('x.webp'));
		expect(sim.requests.map((e) => [e.origin, e.endpoint])).toEqual([['files', 'reference']]);
		expect([sim.count('reference'), sim.count('file')]).toEqual([1, 0]);
	});
});

describe('request log', () => {
	it('records every request on both origins in order, with endpoint, status, task id, headers and body', async () => {
		await api.status('missing');
		const id = await api.create('image-1', { prompt: 'x [sim:duration=0]' });
		const r = await api.status(id);
		await download(r.data.data.files[0].file_url);
		await api.submit({ model: 'image-1', input: {} });
		expect(sim.requests.map((e) => [e.origin, e.endpoint, e.method, e.status])).toEqual([
			['api', 'status', 'GET', 404],
			['api', 'submit', 'POST', 200],
			['api', 'status', 'GET', 200],
			['files', 'file', 'GET', 200],
			['api', 'submit', 'POST', 400],
		]);
		expect(sim.requests[1]).toMatchObject({
			taskId: id,
			body: { model: 'image-1', input: { prompt: 'x [sim:duration=0]' } },
		});
		expect(sim.requests[2].taskId).toBe(id);
		expect(sim.requests[2].headers.authorization).toBe(`Bearer ${sim.apiKey}`);
		expect(sim.requests[2].path).toBe(`/api/generate/status/${id}`);
		expect([
			sim.count('submit'),
			sim.count('status'),
			sim.count('file'),
			sim.count('other'),
		]).toEqual([2, 2, 1, 0]);
	});
	it('reset() clears log, tasks and faults', async () => {
		await api.create('image-1', { prompt: 'x' });
		sim.faults.add({ endpoint: 'status', kind: '500' });
		sim.reset();
		expect([sim.requests.length, sim.tasks().length, sim.faults.list().length]).toEqual([0, 0, 0]);
	});
});
