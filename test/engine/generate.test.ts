// Each model end to end through n8n's engine against the simulator over HTTP: what is sent,
// what comes back (task fields, binary data equal to the served bytes, mime type, file name),
// and bad input refused with a clear message before any request.
import type { IDataObject } from 'n8n-workflow';

import type { RunResult } from '../harness';
import { credentialResolutions } from '../harness/credentials';
import type { Simulator } from '../simulator';
import {
	NODE,
	expectKeyNowhere,
	mediaWorkflow,
	run,
	servedBytes,
	simTaskOf,
	snapshot,
	useSimulator,
	videoWithReferenceImages,
	type SimView,
} from './support';

const sim = useSimulator();

/** Manual Trigger → Generate with the simulator's image model by ID. */
const imageGenerate = (prompt: string, more: IDataObject = {}) =>
	mediaWorkflow({
		resource: 'image',
		operation: 'generate',
		model: 'image-by-id',
		modelId: sim().imageModelId,
		prompt,
		...more,
	});

interface ModelCase {
	label: string;
	params: (sim: Simulator) => IDataObject;
	/** The submit body the service must receive: exactly what the panel set, nothing invented. */
	body: (sim: Simulator) => IDataObject;
	mime: string;
	ext: string;
}

const FAST = '[sim:duration=300]';

const CASES: ModelCase[] = [
	{
		label: 'image model by ID',
		params: (s) => ({
			resource: 'image',
			operation: 'generate',
			model: 'image-by-id',
			modelId: s.imageModelId,
			prompt: `a lighthouse ${FAST}`,
			imageByIdOptions: { size: '16:9', n: 1 },
		}),
		body: (s) => ({
			model: s.imageModelId,
			input: { prompt: `a lighthouse ${FAST}`, size: '16:9', n: 1 },
		}),
		mime: 'image/png',
		ext: 'png',
	},
	{
		label: 'vidmodel-1.5-pro (text-to-video)',
		params: () => ({
			resource: 'video',
			operation: 'generate',
			model: 'vidmodel-1.5-pro',
			prompt: `a paper boat ${FAST}`,
			aspectRatio: '16:9',
			duration: 8,
			vidmodel15ProOptions: { resolution: '1080p', fixedLens: true },
		}),
		body: () => ({
			model: 'vidmodel-1.5-pro',
			input: {
				prompt: `a paper boat ${FAST}`,
				aspect_ratio: '16:9',
				duration: 8,
				resolution: '1080p',
				fixed_lens: true,
			},
		}),
		mime: 'video/mp4',
		ext: 'mp4',
	},
	{
		label: 'vidmodel-2.0-fast/image-to-video (start and end frames)',
		// The simulator fetches both frames as the service does: the task finishes only if they arrive.
		params: (s) => ({
			resource: 'video',
			operation: 'generate',
			model: 'vidmodel-2.0-fast/image-to-video',
			prompt: `from dawn to dusk ${FAST}`,
			startFrameUrl: s.referenceUrl('start.png'),
			vidmodel20FastOptions: {
				endFrameUrl: s.referenceUrl('end.webp'),
				duration: 15,
				resolution: '720p',
			},
		}),
		body: (s) => ({
			model: 'vidmodel-2.0-fast/image-to-video',
			input: {
				prompt: `from dawn to dusk ${FAST}`,
				image_urls: [s.referenceUrl('start.png'), s.referenceUrl('end.webp')],
				duration: 15,
				resolution: '720p',
			},
		}),
		mime: 'video/mp4',
		ext: 'mp4',
	},
	{
		label: 'further video model by ID',
		params: (s) => ({
			resource: 'video',
			operation: 'generate',
			model: 'video-by-id',
			modelId: s.videoModelId,
			prompt: `a timelapse ${FAST}`,
			videoByIdOptions: { duration: 5, aspectRatio: '9:16' },
		}),
		body: (s) => ({
			model: s.videoModelId,
			input: { prompt: `a timelapse ${FAST}`, duration: 5, aspect_ratio: '9:16' },
		}),
		mime: 'video/mp4',
		ext: 'mp4',
	},
	{
		label: 'generate-music',
		params: () => ({
			resource: 'music',
			operation: 'generate',
			model: 'generate-music',
			prompt: `lo-fi launch ${FAST}`,
			musicOptions: {
				instrumental: true,
				title: 'Launch',
				style: 'lo-fi',
				customMode: false,
				mv: 'v4',
			},
		}),
		body: () => ({
			model: 'generate-music',
			input: {
				prompt: `lo-fi launch ${FAST}`,
				instrumental: true,
				title: 'Launch',
				style: 'lo-fi',
				custom_mode: false,
				mv: 'v4',
			},
		}),
		mime: 'audio/mpeg',
		ext: 'mp3',
	},
];

describe('each model end to end with binary output', () => {
	// All five workflows run at once (the engine is re-entrant); each test then checks one.
	const results = new Map<string, RunResult>();
	let submits: Array<{ body: unknown; authorization: unknown }> = [];
	// useSimulator resets after each test: keep the log and tasks of these runs.
	let view: SimView;
	beforeAll(async () => {
		const runs = await Promise.all(CASES.map((c) => run(sim(), mediaWorkflow(c.params(sim())))));
		CASES.forEach((c, i) => results.set(c.label, runs[i]));
		submits = sim()
			.requests.filter((r) => r.endpoint === 'submit')
			.map((r) => ({ body: r.body, authorization: r.headers.authorization }));
		view = snapshot(sim());
	}, 60_000);

	it.each(CASES.map((c) => [c.label, c] as const))('%s', async (_label, c) => {
		const result = results.get(c.label)!;
		expect(result.error).toBeUndefined();
		expect(result.status).toBe('success');
		const items = result.outputOf(NODE);
		expect(items).toHaveLength(1);
		const [item] = items;
		expect(item.pairedItem).toEqual({ item: 0 });

		// Sent exactly what the panel set, with the key in the Authorization header.
		const expectedBody = c.body(sim());
		expect(submits).toContainEqual({ body: expectedBody, authorization: `Bearer ${view.apiKey}` });
		// Every image URL sent reached the service whole (the simulator fetched it).
		for (const url of ((expectedBody.input as IDataObject).image_urls as string[] | undefined) ??
			[])
			expect(view.fetches).toContainEqual(
				expect.objectContaining({ taskId: item.json.task_id, url, ok: true, status: 200 }),
			);

		// The task as the service reports it.
		expect(item.json).toMatchObject({ status: 'finished', progress: 100, error_message: null });
		expect(typeof item.json.task_id).toBe('string');
		expect(typeof item.json.expires_at).toBe('string');

		// The file: same bytes as served, right mime type and extension, streamed to disk.
		const binary = item.binary?.data;
		expect(binary).toBeDefined();
		expect(binary!.mimeType).toBe(c.mime);
		expect(binary!.fileName).toMatch(new RegExp(`\\.${c.ext}$`));
		expect(binary!.fileName).toContain(String(item.json.task_id));
		const bytes = await result.readBinary(item);
		const served = servedBytes(simTaskOf(view, item));
		expect(bytes.length).toBe(served.length);
		expect(bytes.equals(served)).toBe(true);
		expect(result.binaryPath(item)).toBeDefined();

		expectKeyNowhere(view, result);
	});
});

describe('bad input is refused before any request', () => {
	const invalid: Array<[string, IDataObject, RegExp[]]> = [
		[
			'vidmodel-1.5-pro duration outside 4, 8, 12',
			{
				resource: 'video',
				operation: 'generate',
				model: 'vidmodel-1.5-pro',
				prompt: 'p',
				aspectRatio: '16:9',
				duration: 5,
			},
			[/duration/i, /5/, /4/, /8/, /12/],
		],
		[
			'vidmodel-1.5-pro three reference images',
			{
				resource: 'video',
				operation: 'generate',
				model: 'vidmodel-1.5-pro',
				prompt: 'p',
				aspectRatio: '1:1',
				duration: 4,
				vidmodel15ProOptions: {
					imageUrls: [
						'https://a.example/1.png',
						'https://a.example/2.png',
						'https://a.example/3.png',
					],
				},
			},
			[/image_urls|reference image/i, /2/],
		],
		[
			'vidmodel-2.0-fast duration 16',
			{
				resource: 'video',
				operation: 'generate',
				model: 'vidmodel-2.0-fast/image-to-video',
				prompt: 'p',
				startFrameUrl: 'https://example.com/a.png',
				vidmodel20FastOptions: { duration: 16 },
			},
			[/duration/i, /16/, /4/, /15/],
		],
		[
			'vidmodel-2.0-fast start frame that is not a URL',
			{
				resource: 'video',
				operation: 'generate',
				model: 'vidmodel-2.0-fast/image-to-video',
				prompt: 'p',
				startFrameUrl: 'not a url',
			},
			[/start frame/i, /not a url/],
		],
		[
			'image size that is not W:H',
			{
				resource: 'image',
				operation: 'generate',
				model: 'image-by-id',
				modelId: 'image-1',
				prompt: 'p',
				imageByIdOptions: { size: 'big' },
			},
			[/size/i, /big/],
		],
		[
			'Additional Input Fields that are not JSON',
			{
				resource: 'music',
				operation: 'generate',
				model: 'generate-music',
				prompt: 'p',
				additionalInputFields: '{nope',
			},
			[/Additional Input Fields/, /JSON/],
		],
		[
			'Check for Results that is not one of its choices (issue 37)',
			{
				resource: 'music',
				operation: 'generate',
				model: 'generate-music',
				prompt: 'p',
				options: { checkForResults: 'fast' },
			},
			[/Check for Results/, /"fast"/, /sooner/, /balanced/, /fewer/],
		],
	];

	it.each(invalid)('%s', async (_label, params, patterns) => {
		const result = await run(sim(), mediaWorkflow(params));
		expect(result.status).toBe('error');
		const message = `${result.error?.message ?? ''} ${(result.error as { description?: string })?.description ?? ''}`;
		for (const pattern of patterns) expect(message).toMatch(pattern);
		expect(message).toMatch(/allowed/i);
		expect(sim().count('submit')).toBe(0);
		expect(sim().requests).toHaveLength(0);
	});

	it('an invalid item does not stop the valid ones, is reported by its index and keeps its Callback Reference', async () => {
		const result = await run(
			sim(),
			mediaWorkflow(
				{
					resource: 'video',
					operation: 'generate',
					model: 'vidmodel-1.5-pro',
					prompt: `={{ $json.prompt }}`,
					aspectRatio: '16:9',
					duration: '={{ $json.duration }}',
					options: { callbackReference: '={{ $json.sku }}' },
				},
				{ continueOnFail: true },
			),
			{
				items: [
					{ prompt: `ok ${FAST}`, duration: 4, sku: 'A-1' },
					{ prompt: 'bad', duration: 7, sku: 'B-2' },
				],
			},
		);
		expect(result.status).toBe('success');
		const [ok, bad] = result.outputOf(NODE);
		expect(ok.json.status).toBe('finished');
		expect(ok.json.reference).toBe('A-1');
		expect(String(bad.json.error)).toMatch(/Item 1/);
		expect(String(bad.json.error)).toMatch(/duration/i);
		// Refused before any request, it still says which row it is (docs/spreadsheet-to-videos.md).
		expect(bad.json.reference).toBe('B-2');
		expect(bad.pairedItem).toEqual({ item: 1 });
		// Only the valid item reached the service.
		expect(sim().count('submit')).toBe(1);
		expect(
			(sim().requests.find((r) => r.endpoint === 'submit')?.body as { input: IDataObject }).input
				.duration,
		).toBe(4);
	});
});

describe('submit without waiting', () => {
	it('returns the task at once with its task_id, and sends the callback URL with the reference', async () => {
		const result = await run(
			sim(),
			imageGenerate('later [sim:duration=60000]', {
				waitForCompletion: false,
				options: {
					callbackUrl: 'https://n8n.example.com/webhook/abc/media-generation',
					callbackReference: 'row-7',
				},
			}),
		);
		expect(result.error).toBeUndefined();
		const [item] = result.outputOf(NODE);
		expect(item.json.task_id).toEqual(sim().tasks()[0].id);
		expect(item.json.status).toBe('not_started');
		expect(item.binary).toBeUndefined();
		expect(sim().count('status')).toBe(0);
		const callbackUrl = new URL(sim().tasks()[0].callbackUrl!);
		expect(callbackUrl.origin + callbackUrl.pathname).toBe(
			'https://n8n.example.com/webhook/abc/media-generation',
		);
		expect(callbackUrl.searchParams.get('ref')).toBe('row-7');
	});
});

describe('credential', () => {
	it('read once per node run, however many requests the run sends (n8n resolves it again for each request it authenticates)', async () => {
		const before = credentialResolutions.get('mediaGenerationApi') ?? 0;
		// Two failed reads: at least three status reads, whatever the poll schedule.
		sim().faults.add({ endpoint: 'status', kind: '503', times: 2 });
		const result = await run(
			sim(),
			imageGenerate('polled [sim:duration=300]', { imageByIdOptions: { size: '1:1', n: 1 } }),
		);
		expect(result.error).toBeUndefined();
		expect(result.outputOf(NODE)[0].json.status).toBe('finished');
		// A submission and several status reads, all with the key.
		expect(sim().count('status')).toBeGreaterThanOrEqual(3);
		for (const r of sim().requests.filter((q) => q.endpoint !== 'file'))
			expect(r.headers.authorization).toMatch(/^Bearer /);
		expect((credentialResolutions.get('mediaGenerationApi') ?? 0) - before).toBe(1);
	});
});

describe('where n8n shows it', () => {
	it('a manual run sends the task progress to the editor', async () => {
		const result = await run(
			sim(),
			mediaWorkflow({
				resource: 'music',
				operation: 'generate',
				model: 'generate-music',
				prompt: 'progress [sim:duration=1500]',
			}),
		);
		expect(result.error).toBeUndefined();
		const taskId = sim().tasks()[0].id;
		const messages = result.events
			.filter((e) => e.kind === 'sendDataToUI')
			.map((e) => JSON.stringify(e.data));
		expect(messages.length).toBeGreaterThan(0);
		expect(messages.join('\n')).toContain(taskId);
		expect(messages.join('\n')).toMatch(/sendConsoleMessage/);
	});

	it("works with n8n's in-memory binary mode too", async () => {
		const result = await run(sim(), imageGenerate('in memory [sim:duration=200][sim:size=5000]'), {
			binaryMode: 'default',
		});
		expect(result.error).toBeUndefined();
		const [item] = result.outputOf(NODE);
		expect(result.binaryPath(item)).toBeUndefined();
		const served = servedBytes(simTaskOf(sim(), item));
		expect(Buffer.from(item.binary!.data.data, 'base64').equals(served)).toBe(true);
	});
});

describe('options checked before any request', () => {
	it.each([
		['Max Tasks in Flight 0', { maxConcurrentTasks: 0 }, /Max Tasks in Flight/],
		['a Callback URL that is not one', { callbackUrl: 'not a url' }, /Callback URL/],
		[
			'a binary field name with spaces',
			{ binaryPropertyName: 'my file' },
			/Put Output File in Field/,
		],
	])('%s', async (_label, options, pattern) => {
		const result = await run(
			sim(),
			mediaWorkflow({
				resource: 'music',
				operation: 'generate',
				model: 'generate-music',
				prompt: 'p',
				options,
			}),
		);
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(pattern);
		expect(result.error?.message).toMatch(/allowed/);
		expect(sim().requests).toHaveLength(0);
	});

	it('a Callback URL that already has a query keeps it, with the reference added', async () => {
		const result = await run(
			sim(),
			mediaWorkflow({
				resource: 'music',
				operation: 'generate',
				model: 'generate-music',
				prompt: 'p [sim:never]',
				waitForCompletion: false,
				options: {
					callbackUrl: 'https://n8n.example.com/webhook/x?tenant=42',
					callbackReference: 'a b&c',
				},
			}),
		);
		expect(result.error).toBeUndefined();
		const url = new URL(sim().tasks()[0].callbackUrl!);
		expect(url.searchParams.get('tenant')).toBe('42');
		expect(url.searchParams.get('ref')).toBe('a b&c');
	});
});

describe('reference image pre-check (vidmodel-1.5-pro, opt-in)', () => {
	/** A real PNG and a real MP3 on the simulator's file host: the files of finished tasks. */
	async function hostedFiles(): Promise<{ png: string; mp3: string }> {
		const image = await run(
			sim(),
			imageGenerate('reference [sim:duration=50]', { waitForCompletion: false }),
		);
		const music = await run(
			sim(),
			mediaWorkflow({
				resource: 'music',
				operation: 'generate',
				model: 'generate-music',
				prompt: 'not an image [sim:duration=50]',
				waitForCompletion: false,
			}),
		);
		sim().clock.advance(1000);
		const png = sim().task(String(image.outputOf(NODE)[0].json.task_id))!.files[0].url;
		const mp3 = sim().task(String(music.outputOf(NODE)[0].json.task_id))!.files[0].url;
		return { png, mp3 };
	}

	const videoWith = videoWithReferenceImages;

	it('a PNG passes and the task is submitted; an MP3 or a missing file is refused before submitting', async () => {
		const { png, mp3 } = await hostedFiles();
		const submitsBefore = sim().count('submit');

		const ok = await run(sim(), mediaWorkflow(videoWith([png])));
		expect(ok.error).toBeUndefined();
		expect(sim().count('submit')).toBe(submitsBefore + 1);

		const wrongType = await run(sim(), mediaWorkflow(videoWith([png, mp3])));
		expect(wrongType.status).toBe('error');
		expect(`${wrongType.error?.message}`).toMatch(/audio\/mpeg/);
		expect(`${wrongType.error?.message}`).toMatch(/jpeg|png|webp/i);

		const missing = await run(
			sim(),
			mediaWorkflow(videoWith([`${sim().fileBaseUrl}/files/nothing/0-x.png`])),
		);
		expect(missing.status).toBe('error');
		expect(`${missing.error?.message}`).toContain('/files/nothing/0-x.png');

		// Neither refused item reached the service; no request to the file host carried the key.
		expect(sim().count('submit')).toBe(submitsBefore + 1);
		expectKeyNowhere(sim(), wrongType);
	});
});
