// Contract: submit accepts every value the spec's field tables allow and refuses, with a 400
// naming the field, every value they do not, before any task exists.
import { client, type Client } from './client';
import {
	ASPECT_15_PRO,
	ASPECT_20_FAST,
	DURATION_15_PRO,
	RESOLUTION_15_PRO,
	RESOLUTION_20_FAST,
	startSimulator,
	type Simulator,
} from './index';

const PRO = 'vidmodel-1.5-pro';
const FAST = 'vidmodel-2.0-fast/image-to-video';
const MUSIC = 'generate-music';
const IMG = 'https://cdn.example.com/frame.png';

let sim: Simulator;
let api: Client;
beforeAll(async () => {
	// Only what submit answers is checked here: the made-up image URLs are never fetched.
	sim = await startSimulator({ defaultDurationMs: 50, fetchImages: false });
	api = client(sim);
});
afterAll(() => sim.close());

const proBase = { prompt: 'a lighthouse at dusk', aspect_ratio: '16:9', duration: 8 };
const fastBase = { prompt: 'the frame comes alive', image_urls: [IMG] };
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

async function accepted(model: string, input: Record<string, unknown>) {
	const r = await api.submit({ model, input });
	expect({ status: r.status, body: r.data }).toMatchObject({
		status: 200,
		body: { code: 200, data: { status: 'not_started' } },
	});
	expect(typeof r.data.data.task_id).toBe('string');
	expect(new Date(r.data.data.created_time).toISOString()).toBe(r.data.data.created_time);
	expect(sim.task(r.data.data.task_id)?.model).toBe(model);
}

/** Refused with 400, the message naming `field` (and `mentions`), and no task created. */
async function refused(body: unknown, field: string, ...mentions: string[]) {
	const before = sim.tasks().length;
	const r = await api.submit(body);
	expect(r.status).toBe(400);
	expect(r.data).toMatchObject({ code: 400, data: null });
	expect(r.data.msg).toContain(field);
	for (const m of mentions) expect(r.data.msg).toContain(m);
	expect(sim.tasks().length).toBe(before);
}

describe(`${PRO}: every allowed value is accepted`, () => {
	it.each(ASPECT_15_PRO)('aspect_ratio %s', (v) => accepted(PRO, { ...proBase, aspect_ratio: v }));
	it.each(RESOLUTION_15_PRO)('resolution %s', (v) => accepted(PRO, { ...proBase, resolution: v }));
	it.each(DURATION_15_PRO)('duration %i', (v) => accepted(PRO, { ...proBase, duration: v }));
	it.each([true, false])('fixed_lens %s and generate_audio %s', (v) =>
		accepted(PRO, { ...proBase, fixed_lens: v, generate_audio: v }),
	);
	it.each([0, 1, 2])('%i image_urls (text-to-video and image-to-video)', (n) =>
		accepted(PRO, { ...proBase, image_urls: Array.from({ length: n }, (_, i) => `${IMG}?${i}`) }),
	);
	it('all fields at once', () =>
		accepted(PRO, {
			...proBase,
			image_urls: [IMG],
			resolution: '1080p',
			fixed_lens: true,
			generate_audio: false,
		}));
	it('with a callback_url', async () => {
		const r = await api.submit({
			model: PRO,
			input: proBase,
			callback_url: 'https://hooks.example.com/x?y=1',
		});
		expect(r.status).toBe(200);
		expect(sim.task(r.data.data.task_id)?.callbackUrl).toBe('https://hooks.example.com/x?y=1');
	});
});

describe(`${PRO}: every rule is enforced`, () => {
	const m = (input: Record<string, unknown>) => ({ model: PRO, input });
	const without = (k: string) =>
		Object.fromEntries(Object.entries(proBase).filter(([key]) => key !== k));
	it('prompt is required', () => refused(m(without('prompt')), 'input.prompt', 'required'));
	it('prompt must be a string', () => refused(m({ ...proBase, prompt: 42 }), 'input.prompt', '42'));
	it('prompt must not be empty', () => refused(m({ ...proBase, prompt: '  ' }), 'input.prompt'));
	it('aspect_ratio is required', () =>
		refused(m(without('aspect_ratio')), 'input.aspect_ratio', 'required', '16:9'));
	it.each(['2:1', '16:10', 'auto', '16/9', ''])('aspect_ratio %p is refused', (v) =>
		refused(m({ ...proBase, aspect_ratio: v }), 'input.aspect_ratio', JSON.stringify(v), '"21:9"'),
	);
	it.each(['4k', '1080', '720P', 1080])('resolution %p is refused', (v) =>
		refused(m({ ...proBase, resolution: v }), 'input.resolution', JSON.stringify(v), '"1080p"'),
	);
	it('duration is required', () =>
		refused(m(without('duration')), 'input.duration', 'required', '4, 8, 12'));
	it.each([0, 3, 5, 6, 10, 15, 16, -4, 8.5, '8'])('duration %p is refused', (v) =>
		refused(m({ ...proBase, duration: v }), 'input.duration', JSON.stringify(v), '4, 8, 12'),
	);
	it('at most 2 image_urls', () =>
		refused(m({ ...proBase, image_urls: [IMG, IMG, IMG] }), 'input.image_urls', '0 to 2', 'got 3'));
	it('image_urls must be an array', () =>
		refused(m({ ...proBase, image_urls: IMG }), 'input.image_urls', 'array'));
	it.each(['not a url', 'ftp://files.example.com/a.png', '/relative.png', 42])(
		'image_urls item %p must be an http(s) URL',
		(v) => refused(m({ ...proBase, image_urls: [IMG, v] }), 'input.image_urls[1]', 'URL'),
	);
	it.each(['fixed_lens', 'generate_audio'])('%s must be a boolean', (f) =>
		refused(m({ ...proBase, [f]: 'true' }), `input.${f}`, 'boolean'),
	);
	it('fields outside the table are refused', () =>
		refused(m({ ...proBase, negative_prompt: 'blur' }), 'input.negative_prompt', 'allowed fields'));
});

describe('envelope rules for every model', () => {
	it('model is required', () => refused({ input: proBase }, 'model', 'required', PRO));
	it.each(['vidmodel-1.5', 'VIDMODEL-1.5-PRO', 'vidmodel-2.0-fast', 42])(
		'model %p is refused',
		(v) =>
			refused(
				{ model: v, input: proBase },
				'model',
				JSON.stringify(v),
				PRO,
				FAST,
				MUSIC,
				'image-1',
				'video-1',
			),
	);
	it('input is required', () => refused({ model: PRO }, 'input', 'required'));
	it.each([[['x']], ['text'], [7]])('input %p must be an object', (v) =>
		refused({ model: PRO, input: v }, 'input', 'object'),
	);
	it.each(['not-a-url', 'mailto:a@b.c', 12])('callback_url %p must be an http(s) URL', (v) =>
		refused({ model: PRO, input: proBase, callback_url: v }, 'callback_url', 'URL'),
	);
	it('the body must be a JSON object', () => refused([1, 2], 'body', 'object'));
	it('a body that is not JSON is refused, naming the body', async () => {
		const r = await api.submit('{"model":', { 'Content-Type': 'application/json' });
		expect(r.status).toBe(400);
		expect(r.data.msg).toMatch(/^body/);
	});
	it('a body that is not sent as application/json is refused, naming Content-Type', async () => {
		const r = await api.submit(JSON.stringify({ model: PRO, input: proBase }), {
			'Content-Type': 'text/plain',
		});
		expect(r.status).toBe(400);
		expect(r.data.msg).toContain('Content-Type');
	});
});

describe(`${FAST}: every allowed value is accepted`, () => {
	it.each(range(4, 15))('duration %i', (v) => accepted(FAST, { ...fastBase, duration: v }));
	it.each(RESOLUTION_20_FAST)('resolution %s', (v) =>
		accepted(FAST, { ...fastBase, resolution: v }),
	);
	it.each(ASPECT_20_FAST)('aspect_ratio %s', (v) =>
		accepted(FAST, { ...fastBase, aspect_ratio: v }),
	);
	it('a start and an end frame', () =>
		accepted(FAST, { ...fastBase, image_urls: [IMG, `${IMG}?end`] }));
	it('a prompt of exactly 20,000 characters', () =>
		accepted(FAST, { ...fastBase, prompt: 'p'.repeat(20000) }));
	it('the audio option (assumed name generate_audio)', () =>
		accepted(FAST, { ...fastBase, generate_audio: true }));
	it('duration and aspect_ratio may be left out (the spec leaves it open)', () =>
		accepted(FAST, fastBase));
});

describe(`${FAST}: every rule is enforced`, () => {
	const m = (input: Record<string, unknown>) => ({ model: FAST, input });
	it('a prompt of 20,001 characters is refused', () =>
		refused(m({ ...fastBase, prompt: 'p'.repeat(20001) }), 'input.prompt', '20001', '20000'));
	it('image_urls is required', () => refused(m({ prompt: 'x' }), 'input.image_urls', 'required'));
	it.each([0, 3])('%i image_urls are refused', (n) =>
		refused(
			m({ ...fastBase, image_urls: Array.from({ length: n }, () => IMG) }),
			'input.image_urls',
			'1 to 2',
		),
	);
	it.each([3, 16, 0, 4.5, '8', -5])('duration %p is refused', (v) =>
		refused(m({ ...fastBase, duration: v }), 'input.duration', JSON.stringify(v), '4 to 15'),
	);
	it.each(['1080p', '360p'])('resolution %p is refused', (v) =>
		refused(
			m({ ...fastBase, resolution: v }),
			'input.resolution',
			JSON.stringify(v),
			'"480p", "720p"',
		),
	);
	it.each(['5:4', 'AUTO', '2:1'])('aspect_ratio %p is refused', (v) =>
		refused(m({ ...fastBase, aspect_ratio: v }), 'input.aspect_ratio', JSON.stringify(v), '"auto"'),
	);
	it.each(['reference_image_urls', 'reference_video_urls', 'reference_audio_urls'])(
		'reference field %s is refused',
		(f) =>
			refused(m({ ...fastBase, [f]: [IMG] }), `input.${f}`, 'reference fields are not accepted'),
	);
	it('fields outside the table are refused', () =>
		refused(m({ ...fastBase, fixed_lens: true }), 'input.fixed_lens', 'allowed fields'));
	it('the audio option must be a boolean', () =>
		refused(m({ ...fastBase, generate_audio: 'yes' }), 'input.generate_audio', 'boolean'));
});

describe('options for what the spec leaves open', () => {
	it('2.0 fast can require duration and aspect_ratio, and take another audio field name', async () => {
		const strict = await startSimulator({
			fastRequiresDurationAndAspect: true,
			fastAudioField: 'audio',
		});
		try {
			const c = client(strict);
			let r = await c.submit({ model: FAST, input: fastBase });
			expect([r.status, r.data.msg]).toEqual([
				400,
				expect.stringContaining('input.duration is required'),
			]);
			r = await c.submit({ model: FAST, input: { ...fastBase, duration: 5 } });
			expect([r.status, r.data.msg]).toEqual([
				400,
				expect.stringContaining('input.aspect_ratio is required'),
			]);
			r = await c.submit({
				model: FAST,
				input: { ...fastBase, duration: 5, aspect_ratio: 'auto', audio: true },
			});
			expect(r.status).toBe(200);
			r = await c.submit({
				model: FAST,
				input: { ...fastBase, duration: 5, aspect_ratio: 'auto', generate_audio: true },
			});
			expect([r.status, r.data.msg]).toEqual([
				400,
				expect.stringContaining('input.generate_audio'),
			]);
		} finally {
			await strict.close();
		}
	});
	it('the image and further video model identifiers are configurable', async () => {
		const other = await startSimulator({ imageModelId: 'pix-9', videoModelId: 'clip-3' });
		try {
			const c = client(other);
			expect((await c.submit({ model: 'pix-9', input: { prompt: 'x' } })).status).toBe(200);
			expect((await c.submit({ model: 'clip-3', input: { prompt: 'x' } })).status).toBe(200);
			const r = await c.submit({ model: 'image-1', input: { prompt: 'x' } });
			expect([r.status, r.data.msg]).toEqual([400, expect.stringContaining('pix-9')]);
		} finally {
			await other.close();
		}
	});
});

describe(`${MUSIC} (quickstart shape)`, () => {
	const full = {
		prompt: 'a calm piano',
		style: 'ambient',
		title: 'Dawn',
		custom_mode: true,
		instrumental: true,
		mv: 'V4',
	};
	it('the full quickstart shape is accepted', () => accepted(MUSIC, full));
	it('prompt alone is accepted', () => accepted(MUSIC, { prompt: 'a calm piano' }));
	it('prompt is required', () =>
		refused({ model: MUSIC, input: { style: 'x' } }, 'input.prompt', 'required'));
	it.each([
		['style', 1],
		['title', false],
		['mv', 4],
	])('%s must be a string', (f, v) =>
		refused({ model: MUSIC, input: { ...full, [f]: v } }, `input.${f}`, 'string'),
	);
	it.each(['custom_mode', 'instrumental'])('%s must be a boolean', (f) =>
		refused({ model: MUSIC, input: { ...full, [f]: 'true' } }, `input.${f}`, 'boolean'),
	);
});

describe('image model (quickstart shape)', () => {
	it.each(['1:1', '16:9', '3:4'])('size %s', (v) => accepted('image-1', { prompt: 'x', size: v }));
	it.each([1, 4, 10])('n %i', (v) => accepted('image-1', { prompt: 'x', n: v }));
	it.each(['big', '16x9', '0:1', 16])('size %p is refused', (v) =>
		refused({ model: 'image-1', input: { prompt: 'x', size: v } }, 'input.size', 'W:H'),
	);
	it.each([0, 11, 1.5, '2'])('n %p is refused', (v) =>
		refused({ model: 'image-1', input: { prompt: 'x', n: v } }, 'input.n', '1 to 10'),
	);
	it('prompt is required', () =>
		refused({ model: 'image-1', input: { n: 1 } }, 'input.prompt', 'required'));
});

describe('further video model (quickstart shape)', () => {
	it('prompt, duration and aspect_ratio', () =>
		accepted('video-1', { prompt: 'x', duration: 5, aspect_ratio: '9:16' }));
	it.each([0, '5', 2.5])('duration %p is refused', (v) =>
		refused({ model: 'video-1', input: { prompt: 'x', duration: v } }, 'input.duration', 'integer'),
	);
	it('aspect_ratio must be a ratio', () =>
		refused(
			{ model: 'video-1', input: { prompt: 'x', aspect_ratio: 'wide' } },
			'input.aspect_ratio',
			'W:H',
		));
	it('prompt is required', () =>
		refused({ model: 'video-1', input: {} }, 'input.prompt', 'required'));
});
