// Issue 9, the node's side, through n8n's engine over real HTTP: redirects never carry the API
// key to another origin (credential test, submit, status read, file download, reference-image
// pre-check); every wait respects the operation's deadline whatever Retry-After says; expires_at
// is never later than the service's times support; a finished task without files is an error;
// implausible task ids never reach the service; the prompt is counted in characters as a person
// counts them; secrets quoted by the service are masked.
import type { IDataObject } from 'n8n-workflow';

import { client } from '../simulator/client';
import { startKeyCollector, startOrigin, startRedirector, type Origin } from '../simulator/origins';
import type { Simulator } from '../simulator';
import { testCredential } from './credential-tester';
import {
	NODE,
	expectKeyNowhere,
	mediaWorkflow,
	run,
	servedBytes,
	useSimulator,
	videoWithReferenceImages,
} from './support';

const sim = useSimulator();
jest.setTimeout(90_000);

const HOUR = 60 * 60 * 1000;

/**
 * The test's credential with another Base URL (a front, a stand-in service). allowPrivateFileHosts:
 * the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
 */
const credentialsFor = (baseUrl: string) => ({
	mediaGenerationApi: { apiKey: sim().apiKey, baseUrl, allowPrivateFileHosts: true },
});

const errorText = (result: { error?: unknown }) => {
	const e = result.error as { message?: string; description?: string } | undefined;
	return `${e?.message ?? ''}\n${e?.description ?? ''}`;
};

function taskParams(operation: string, taskId: string, options: IDataObject = {}): IDataObject {
	return { resource: 'task', operation, taskId, options };
}

function imageParams(s: Simulator, prompt: string, extra: IDataObject = {}): IDataObject {
	return {
		resource: 'image',
		operation: 'generate',
		model: 'image-by-id',
		modelId: s.imageModelId,
		prompt,
		...extra,
	};
}

/** A task made straight on the simulator (plain HTTP), finished by moving its clock on. */
async function finishedTask(s: Simulator, prompt = 'quick [sim:duration=50]'): Promise<string> {
	const id = await client(s).create(s.imageModelId, { prompt, size: '1:1', n: 1 });
	s.clock.advance(1000);
	return id;
}

const origins: Origin[] = [];
async function origin(o: Promise<Origin>): Promise<Origin> {
	const started = await o;
	origins.push(started);
	return started;
}
afterEach(async () => {
	await Promise.all(origins.splice(0).map((o) => o.close()));
});

describe('redirects never carry the API key to another origin', () => {
	it('credential test: the redirect is not followed; the other origin gets nothing', async () => {
		const collector = await origin(startKeyCollector());
		const front = await origin(startRedirector(collector.url, 302));
		const result = await testCredential({ apiKey: sim().apiKey, baseUrl: front.url });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/not like this service/);
		expect(result.message).toMatch(/Redirects are not followed/);
		expect(front.requests).toHaveLength(1);
		expect(collector.requests).toHaveLength(0);
		expect(collector.sawKey(sim().apiKey)).toBe(false);
	});

	it.each([307, 308, 302])(
		'submit answered %i: nothing re-sent, nothing to the other origin',
		async (status) => {
			const collector = await origin(startKeyCollector());
			const front = await origin(startRedirector(collector.url, status));
			const result = await run(sim(), mediaWorkflow(imageParams(sim(), 'redirected')), {
				credentials: credentialsFor(front.url),
			});
			expect(result.status).toBe('error');
			expect(errorText(result)).toMatch(new RegExp(`HTTP ${status}`));
			expect(errorText(result)).toContain(`a redirect to ${collector.url}/api/generate/submit`);
			expect(front.requests.map((r) => r.method)).toEqual(['POST']);
			expect(collector.requests).toHaveLength(0);
			expect(collector.sawKey(sim().apiKey)).toBe(false);
			expect(result.dump()).not.toContain(sim().apiKey);
		},
	);

	it.each([302, 307])(
		'status read answered %i: a clear error, nothing to the other origin',
		async (status) => {
			const collector = await origin(startKeyCollector());
			const front = await origin(startRedirector(collector.url, status));
			const result = await run(sim(), mediaWorkflow(taskParams('getStatus', 'task_0123')), {
				credentials: credentialsFor(front.url),
			});
			expect(result.status).toBe('error');
			expect(errorText(result)).toMatch(/redirects are not followed/);
			expect(errorText(result)).toContain('task_0123');
			// Not retried either: a redirect is an answer, not a passing fault.
			expect(front.requests).toHaveLength(1);
			expect(collector.requests).toHaveLength(0);
		},
	);

	it('file download: a file URL that redirects to another host is fetched there without the key', async () => {
		const id = await finishedTask(sim(), 'cdn [sim:duration=50][sim:files=2]');
		// The "service" passes every API call through to the simulator but lists its file URLs on
		// its own origin, where each one redirects (302) to the simulator's file host.
		const front: Origin = await origin(
			startOrigin((req) =>
				req.url.startsWith('/cdn/')
					? { redirect: `${sim().fileBaseUrl}${req.url.slice(4)}`, status: 302 }
					: {
							proxy: sim().baseUrl,
							rewrite: (text) => text.split(sim().fileBaseUrl).join(`${front.url}/cdn`),
						},
			),
		);
		const result = await run(sim(), mediaWorkflow(taskParams('downloadFiles', id)), {
			credentials: credentialsFor(front.url),
		});
		expect(result.error).toBeUndefined();
		const [item] = result.outputOf(NODE);
		const task = sim().task(id)!;
		expect((await result.readBinary(item, 'data')).equals(servedBytes(task, 0))).toBe(true);
		expect((await result.readBinary(item, 'data_1')).equals(servedBytes(task, 1))).toBe(true);
		// The redirecting URLs were asked, and the file host answered after the redirect.
		expect(front.requests.filter((r) => r.url.startsWith('/cdn/')).length).toBeGreaterThanOrEqual(
			2,
		);
		expect(
			sim().requests.filter((r) => r.endpoint === 'file' && r.status === 200).length,
		).toBeGreaterThanOrEqual(2);
		// The key went to the service's API only: not to its file URLs, not to the file host.
		for (const r of front.requests.filter((q) => q.url.startsWith('/cdn/')))
			expect(r.headers.authorization).toBeUndefined();
		expectKeyNowhere(sim(), result);
	});

	it('reference-image pre-check: an image URL that redirects is checked without the key', async () => {
		const image = sim().referenceUrl('start.png');
		const front = await origin(startRedirector(image.slice(0, image.indexOf('/refs/')), 302));
		const redirecting = `${front.url}${image.slice(image.indexOf('/refs/'))}`;
		const result = await run(sim(), mediaWorkflow(videoWithReferenceImages([redirecting])));
		expect(result.error).toBeUndefined();
		expect(sim().count('submit')).toBe(1);
		expect(front.requests.length).toBeGreaterThanOrEqual(1);
		const checks = sim().requests.filter((r) => r.endpoint === 'reference');
		expect(checks.length).toBeGreaterThanOrEqual(1);
		expect(front.withAuthorization()).toHaveLength(0);
		expect(checks.filter((r) => r.headers.authorization !== undefined)).toHaveLength(0);
		expectKeyNowhere(sim(), result);
	});
});

describe('every wait respects the deadline, whatever Retry-After says', () => {
	it('status 429 with Retry-After: 20 under a 3 s Timeout: back near 3 s, not 41 s', async () => {
		const id = await client(sim()).create(sim().imageModelId, {
			prompt: 'slow [sim:never]',
			size: '1:1',
		});
		sim().faults.add({ endpoint: 'status', kind: '429', retryAfter: 20 });
		const started = Date.now();
		const result = await run(
			sim(),
			mediaWorkflow(taskParams('waitForCompletion', id, { timeoutMinutes: 0.05 })),
		);
		const took = Date.now() - started;
		expect(result.status).toBe('error');
		expect(errorText(result)).toMatch(/did not finish within the timeout/);
		expect(errorText(result)).toContain(id);
		// 3 s, plus at most one read's minimum time and the engine's overhead.
		expect(took).toBeGreaterThanOrEqual(2900);
		expect(took).toBeLessThan(8000);
		expect(sim().count('status')).toBeLessThanOrEqual(3);
	});

	it('submit 429 with Retry-After: 6: two submissions in about 6 s, then a clear error, no task', async () => {
		sim().faults.add({ endpoint: 'submit', kind: '429', when: 'before', retryAfter: 6 });
		const started = Date.now();
		const result = await run(sim(), mediaWorkflow(imageParams(sim(), 'busy')));
		const took = Date.now() - started;
		expect(result.status).toBe('error');
		const submits = sim().requests.filter((r) => r.endpoint === 'submit');
		expect(submits.map((r) => r.status)).toEqual([429, 429]);
		expect(submits[1].at - submits[0].at).toBeGreaterThanOrEqual(6000);
		expect(took).toBeLessThan(12_000);
		expect(sim().tasks()).toHaveLength(0);
		expect(errorText(result)).toMatch(/no task was created/);
		expect(errorText(result)).toMatch(/asked to wait 6 s/);
	});

	it('submit 429 with Retry-After: 3 once: waited out (it fits in the 10 s), one task', async () => {
		sim().faults.add({ endpoint: 'submit', kind: '429', when: 'before', times: 1, retryAfter: 3 });
		const result = await run(
			sim(),
			mediaWorkflow(imageParams(sim(), 'once busy [sim:duration=100]')),
		);
		expect(result.error).toBeUndefined();
		const submits = sim().requests.filter((r) => r.endpoint === 'submit');
		expect(submits.map((r) => r.status)).toEqual([429, 200]);
		expect(submits[1].at - submits[0].at).toBeGreaterThanOrEqual(3000);
		expect(sim().tasks()).toHaveLength(1);
	});

	it('Get Status with Retry-After: 2 once: honoured, then the answer', async () => {
		const id = await finishedTask(sim());
		sim().faults.add({ endpoint: 'status', kind: '429', times: 1, retryAfter: 2 });
		const result = await run(sim(), mediaWorkflow(taskParams('getStatus', id)));
		expect(result.error).toBeUndefined();
		expect(result.outputOf(NODE)[0].json.status).toBe('finished');
		const reads = sim().requests.filter((r) => r.endpoint === 'status');
		expect(reads).toHaveLength(2);
		expect(reads[1].at - reads[0].at).toBeGreaterThanOrEqual(2000);
	});

	it.each([
		['Get Status', 'getStatus'],
		['Download Files', 'downloadFiles'],
	])(
		'%s with Retry-After: 3600: fails at once naming the wait, never hours',
		async (_, operation) => {
			const id = await finishedTask(sim());
			sim().faults.add({ endpoint: 'status', kind: '429', retryAfter: 3600 });
			const started = Date.now();
			const result = await run(sim(), mediaWorkflow(taskParams(operation, id)));
			expect(Date.now() - started).toBeLessThan(5000);
			expect(result.status).toBe('error');
			expect(errorText(result)).toMatch(/asked to wait 3600 s/);
			expect(sim().count('status')).toBe(1);
		},
	);

	it('a download whose file host says Retry-After: 3600 fails at once, keeping task_id', async () => {
		const id = await finishedTask(sim());
		sim().faults.add({ endpoint: 'file', kind: '429', retryAfter: 3600 });
		const started = Date.now();
		const result = await run(sim(), mediaWorkflow(taskParams('downloadFiles', id)));
		expect(Date.now() - started).toBeLessThan(5000);
		expect(result.status).toBe('error');
		expect(errorText(result)).toContain(id);
		expect(sim().count('file')).toBe(1);
	});
});

describe('expires_at is never later than the service times support', () => {
	it('a task created 20 h ago and finished: every operation says creation + 24 h', async () => {
		// The simulator's clock runs 20 h behind for the creation only: created_time is 20 h ago.
		sim().clock.advance(-20 * HOUR);
		const id = await client(sim()).create(sim().imageModelId, {
			prompt: 'old [sim:duration=50]',
			size: '1:1',
		});
		sim().clock.advance(20 * HOUR);
		const created = Date.parse(String(sim().view(id)!.created_time));
		expect(Date.now() - created).toBeGreaterThan(19 * HOUR);

		const expiries: Record<string, unknown> = {};
		for (const operation of ['waitForCompletion', 'getStatus', 'downloadFiles']) {
			const result = await run(sim(), mediaWorkflow(taskParams(operation, id)));
			expect(result.error).toBeUndefined();
			expiries[operation] = result.outputOf(NODE)[0].json.expires_at;
		}
		const expected = new Date(created + 24 * HOUR).toISOString();
		expect(expiries).toEqual({
			waitForCompletion: expected,
			getStatus: expected,
			downloadFiles: expected,
		});
	});

	it('Generate with Wait: creation + 24 h as well', async () => {
		const result = await run(sim(), mediaWorkflow(imageParams(sim(), 'fresh [sim:duration=100]')));
		expect(result.error).toBeUndefined();
		const json = result.outputOf(NODE)[0].json;
		expect(Date.parse(String(json.expires_at))).toBe(
			Date.parse(String(json.created_time)) + 24 * HOUR,
		);
	});
});

describe('a finished task without files', () => {
	it.each([
		[
			'Generate with Wait',
			(s: Simulator) => imageParams(s, 'nothing [sim:duration=100][sim:files=0]'),
		],
	])('%s: an item error that keeps task_id, no silent success', async (_, params) => {
		const result = await run(sim(), mediaWorkflow(params(sim()), { continueOnFail: true }));
		expect(result.status).toBe('success');
		const [item] = result.outputOf(NODE);
		expect(item.binary).toBeUndefined();
		expect(String(item.json.error)).toMatch(/finished, but the service listed no files/);
		expect(item.json.task_id).toBe(sim().tasks()[0].id);
		expect(item.json.status).toBe('finished');
	});

	it.each(['waitForCompletion', 'downloadFiles'])(
		'Task → %s: the same error',
		async (operation) => {
			const id = await finishedTask(sim(), 'nothing [sim:duration=50][sim:files=0]');
			const result = await run(sim(), mediaWorkflow(taskParams(operation, id)));
			expect(result.status).toBe('error');
			expect(errorText(result)).toMatch(/listed no files/);
			expect(errorText(result)).toContain(id);
			expect(sim().count('file')).toBe(0);
		},
	);

	it('Task → Get Status only reports it: status finished, files []', async () => {
		const id = await finishedTask(sim(), 'nothing [sim:duration=50][sim:files=0]');
		const result = await run(sim(), mediaWorkflow(taskParams('getStatus', id)));
		expect(result.error).toBeUndefined();
		expect(result.outputOf(NODE)[0].json).toMatchObject({ status: 'finished', files: [] });
	});

	it('Download Files off: the same error (no file URL to pass on either)', async () => {
		const result = await run(
			sim(),
			mediaWorkflow(
				imageParams(sim(), 'nothing [sim:duration=100][sim:files=0]', {
					options: { downloadFiles: false },
				}),
			),
		);
		expect(result.status).toBe('error');
		expect(errorText(result)).toMatch(/listed no files/);
	});
});

describe('implausible task ids never reach the service', () => {
	it.each([
		['getStatus', '.'],
		['getStatus', '..'],
		['waitForCompletion', '..'],
		['downloadFiles', '.'],
		['getStatus', '%2e%2e'],
	])('%s with %j: a clear error before any request', async (operation, id) => {
		const result = await run(sim(), mediaWorkflow(taskParams(operation, id)));
		expect(result.status).toBe('error');
		expect(errorText(result)).toMatch(/"Task ID"/);
		expect(errorText(result)).toMatch(/allowed: 1 to 200 letters, digits/);
		expect(sim().requests).toHaveLength(0);
	});
});

describe('the 20,000-character prompt limit counts characters as a person does', () => {
	function fast(prompt: string): IDataObject {
		return {
			resource: 'video',
			operation: 'generate',
			model: 'vidmodel-2.0-fast/image-to-video',
			prompt,
			startFrameUrl: sim().referenceUrl('start.png'),
			waitForCompletion: false,
		};
	}

	it('10,001 emoji (20,002 UTF-16 units) are accepted, by the node and by the service', async () => {
		const result = await run(sim(), mediaWorkflow(fast('😀'.repeat(10_001))));
		expect(result.error).toBeUndefined();
		expect(sim().tasks()).toHaveLength(1);
	});

	it('20,001 characters are refused before any request, naming the limit', async () => {
		const result = await run(sim(), mediaWorkflow(fast('😀'.repeat(20_001))));
		expect(result.status).toBe('error');
		expect(errorText(result)).toMatch(/20,000 characters/);
		expect(errorText(result)).toMatch(/20,001 characters/);
		expect(sim().requests).toHaveLength(0);
	});

	it('where the readings part (joined emoji): the node lets it through, the service has the last word', async () => {
		// 5,000 family emoji: 5,000 characters to a person, 25,000 code points to the simulator.
		const result = await run(sim(), mediaWorkflow(fast('👨‍👩‍👧'.repeat(5000))));
		expect(result.status).toBe('error');
		expect(errorText(result)).toMatch(/rejected the submission/);
		expect(errorText(result)).toMatch(/no task was created/);
		expect(sim().tasks()).toHaveLength(0);
	});
});

describe('secrets quoted by the service are masked', () => {
	const secretUrl = (base: string) =>
		`${base}/webhook/abc/media-generation?secret=TRIGGER-SECRET-123&sig=SIGNATURE-456`;

	it('a rejection that quotes the callback_url: secret and signature masked in the error', async () => {
		const service = await origin(
			startOrigin(() => ({
				status: 400,
				headers: { 'Content-Type': 'application/json' },
				body: JSON.stringify({
					code: 400,
					msg: `callback_url ${secretUrl('https://n8n.example.com')} is not reachable from the service`,
				}),
			})),
		);
		const result = await run(
			sim(),
			mediaWorkflow(
				imageParams(sim(), 'with callback', {
					waitForCompletion: false,
					options: {
						callbackUrl: secretUrl('https://n8n.example.com'),
						callbackReference: 'row-1',
					},
				}),
				{ continueOnFail: true },
			),
			{ credentials: credentialsFor(service.url) },
		);
		const dump = result.dump();
		expect(dump).toContain('is not reachable from the service');
		expect(dump).toContain('secret=***');
		expect(dump).not.toContain('TRIGGER-SECRET-123');
		expect(dump).not.toContain('SIGNATURE-456');
	});

	it('a failed task whose error_message quotes it: masked in the error and the output', async () => {
		const result = await run(
			sim(),
			mediaWorkflow(
				imageParams(
					sim(),
					`x [sim:duration=100][sim:fail=could not POST ${secretUrl('https://n8n.example.com')}]`,
				),
				{ continueOnFail: true },
			),
		);
		const [item] = result.outputOf(NODE);
		expect(String(item.json.error_message)).toMatch(/could not POST https:\/\/n8n\.example\.com/);
		const dump = result.dump();
		expect(dump).not.toContain('TRIGGER-SECRET-123');
		expect(dump).not.toContain('SIGNATURE-456');
	});
});
