// Contract: callbacks (each body shape, retries, forging) and every fault kind.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import axios from 'axios';

import { client, receiver, waitFor, type Client, type Receiver } from './client';
import { startSimulator, type Simulator } from './index';

let sim: Simulator;
let api: Client;
let hook: Receiver;
beforeAll(async () => {
	sim = await startSimulator({ defaultDurationMs: 30 });
	api = client(sim);
	hook = await receiver();
});
afterEach(() => {
	sim.reset();
	hook.received.length = 0;
	hook.answer = () => 200;
});
afterAll(async () => {
	await sim.close();
	await hook.close();
});

const err = (p: Promise<unknown>) =>
	p.then(
		() => undefined,
		(e: { code?: string; message: string }) => e.code ?? e.message,
	);

describe('callbacks', () => {
	it('default shape: exactly the status response, POSTed as JSON once the task finishes', async () => {
		const id = await api.create('image-1', { prompt: 'x' }, { callback_url: hook.url });
		await waitFor(() => hook.received.length === 1);
		const body = JSON.parse(hook.received[0].body);
		expect(hook.received[0].headers['content-type']).toBe('application/json');
		expect(body).toEqual({ code: 200, data: sim.view(id) });
		expect(body.data).toMatchObject({
			task_id: id,
			status: 'finished',
			progress: 100,
			files: [expect.any(Object)],
		});
		// The simulator logs the delivery when the hook's answer reaches it, a moment after the
		// hook has the body: on a loaded machine that moment is measurable.
		await waitFor(() => sim.callbacks.length === 1);
		expect(sim.callbacks).toEqual([
			expect.objectContaining({
				taskId: id,
				url: hook.url,
				status: 200,
				attempt: 1,
				forged: false,
			}),
		]);
		// It is sent once: later polls do not repeat it.
		await api.status(id);
		await sim.idle();
		expect(hook.received).toHaveLength(1);
	});
	it('a failed task is called back with its error_message', async () => {
		const id = await api.create(
			'image-1',
			{ prompt: 'x [sim:fail=Out of credits]' },
			{ callback_url: hook.url },
		);
		await waitFor(() => hook.received.length === 1);
		expect(JSON.parse(hook.received[0].body).data).toMatchObject({
			task_id: id,
			status: 'failed',
			error_message: 'Out of credits',
		});
	});
	it('no callback_url, no callback; [sim:never] never calls back', async () => {
		await api.create('image-1', { prompt: 'x' });
		await api.create('image-1', { prompt: 'x [sim:never]' }, { callback_url: hook.url });
		await new Promise((r) => setTimeout(r, 150));
		await sim.idle();
		expect(hook.received).toHaveLength(0);
	});
	it.each([
		['flat', (id: string, s: Simulator) => s.view(id)],
		[
			'altKeys',
			(id: string, s: Simulator) => ({
				taskId: id,
				state: 'finished',
				progress: 100,
				outputs: [
					{ url: (s.view(id)!.files as Array<{ file_url: string }>)[0].file_url, type: 'image' },
				],
				error: null,
			}),
		],
	] as const)('shape %s', async (shape, expected) => {
		const other = await startSimulator({ callbackShape: shape, defaultDurationMs: 10 });
		try {
			const id = await client(other).create('image-1', { prompt: 'x' }, { callback_url: hook.url });
			await waitFor(() => hook.received.length === 1);
			expect(JSON.parse(hook.received[0].body)).toEqual(expected(id, other));
		} finally {
			await other.close();
		}
	});
	it('non-2xx answers are retried with backoff until one succeeds', async () => {
		hook.answer = (n) => (n < 2 ? 503 : 204);
		const id = await api.create('image-1', { prompt: 'x' }, { callback_url: hook.url });
		await waitFor(() => hook.received.length === 3);
		await sim.idle();
		expect(sim.callbacks.map((c) => [c.taskId, c.attempt, c.status])).toEqual([
			[id, 1, 503],
			[id, 2, 503],
			[id, 3, 204],
		]);
		expect(hook.received.map((r) => r.body)).toEqual(Array(3).fill(hook.received[0].body));
		expect(hook.received[2].at - hook.received[1].at).toBeGreaterThanOrEqual(
			hook.received[1].at - hook.received[0].at,
		);
	});
	it('gives up after callbackRetries retries, and an unreachable receiver is logged with status 0', async () => {
		hook.answer = () => 500;
		await api.create('image-1', { prompt: 'x' }, { callback_url: hook.url });
		await waitFor(() => hook.received.length === 4);
		await sim.idle();
		expect(sim.callbacks.map((c) => c.status)).toEqual([500, 500, 500, 500]);
		sim.reset();
		const none = await startSimulator({ callbackRetries: 1, defaultDurationMs: 10 });
		try {
			await client(none).create(
				'image-1',
				{ prompt: 'x' },
				{ callback_url: 'http://127.0.0.1:9/nothing-listens' },
			);
			await waitFor(() => none.callbacks.length === 2);
			expect(none.callbacks.map((c) => [c.attempt, c.status, typeof c.error])).toEqual([
				[1, 0, 'string'],
				[2, 0, 'string'],
			]);
		} finally {
			await none.close();
		}
	});
	it("moving the clock past a task's end sends its callback at once", async () => {
		await api.create('image-1', { prompt: 'x [sim:duration=3600000]' }, { callback_url: hook.url });
		await sim.idle();
		expect(hook.received).toHaveLength(0);
		sim.clock.advance(3600000);
		await sim.idle();
		expect(hook.received).toHaveLength(1);
		expect(JSON.parse(hook.received[0].body).data.status).toBe('finished');
	});
	it('sendCallback forges or replays a callback once, to any URL with any body', async () => {
		const id = await api.create('image-1', { prompt: 'x [sim:never]' }, { callback_url: hook.url });
		const forged = await sim.sendCallback(id, {
			body: { code: 200, data: { task_id: id, status: 'finished' } },
		});
		expect(forged).toMatchObject({ status: 200, forged: true, attempt: 1 });
		const replay = await sim.sendCallback(id, { url: `${hook.url}&again=1` });
		expect(replay.status).toBe(200);
		expect(hook.received.map((r) => JSON.parse(r.body).data.status)).toEqual([
			'finished',
			expect.stringMatching(/^(not_started|queued|processing)$/),
		]);
		await expect(sim.sendCallback('task_unknown')).rejects.toThrow(/no callback_url/);
	});
	it("callback fault 'drop' loses the callback; 'malformed' sends invalid JSON", async () => {
		sim.faults.add({ endpoint: 'callback', kind: 'drop', times: 1 });
		sim.faults.add({ endpoint: 'callback', kind: 'malformed', times: 1 });
		await api.create('image-1', { prompt: 'a' }, { callback_url: hook.url });
		await new Promise((r) => setTimeout(r, 100));
		await sim.idle();
		expect(hook.received).toHaveLength(0);
		await api.create('image-1', { prompt: 'b' }, { callback_url: hook.url });
		await waitFor(() => hook.received.length === 1);
		expect(() => JSON.parse(hook.received[0].body)).toThrow();
	});
});

describe('fault rules are checked when added', () => {
	it.each([
		[
			{ endpoint: 'submit', kind: 'truncate' },
			'fault kind "truncate" does not apply to submit; allowed: 429',
		],
		[{ endpoint: 'file', kind: 'unknownTask' }, 'does not apply to file'],
		[{ endpoint: 'callback', kind: '500' }, 'allowed: drop, slow, malformed'],
		[
			{ endpoint: 'poll', kind: '500' },
			'fault endpoint "poll" is invalid; allowed: submit, status, file, callback',
		],
		[{ endpoint: 'status', kind: '500', rate: 1.5 }, 'fault rate 1.5 is invalid; allowed: 0 to 1'],
		[{ endpoint: 'status', kind: '500', times: -1 }, 'fault times -1 is invalid'],
		[{ endpoint: 'status', kind: '500', when: 'after' }, 'when applies to submit only'],
	])('%p is refused', (rule, message) => {
		expect(() => sim.faults.add(rule as never)).toThrow(message);
		expect(sim.faults.list()).toHaveLength(0);
	});
	it('remove() and applied() track a rule by id', async () => {
		const id = sim.faults.add({ endpoint: 'status', kind: '500' });
		await api.status('x');
		expect(sim.faults.applied(id)).toBe(1);
		sim.faults.remove(id);
		expect((await api.status('x')).status).toBe(404);
	});
});

describe('faults on submit', () => {
	const valid = { model: 'image-1', input: { prompt: 'x' } };
	it('429 carries Retry-After and creates no task; times limits it', async () => {
		const id = sim.faults.add({ endpoint: 'submit', kind: '429', retryAfter: 7, times: 1 });
		const r = await api.submit(valid);
		expect([r.status, r.headers['retry-after'], r.data.code]).toEqual([429, '7', 429]);
		expect(sim.tasks()).toHaveLength(0);
		expect((await api.submit(valid)).status).toBe(200);
		expect(sim.faults.applied(id)).toBe(1);
	});
	it.each([
		['500', 500, 'application/json'],
		['502', 502, 'text/html'],
		['503', 503, 'application/json'],
	] as const)('%s answers HTTP %i (%s) and creates no task', async (kind, status, type) => {
		sim.faults.add({ endpoint: 'submit', kind });
		const r = await api.submit(valid);
		expect(r.status).toBe(status);
		expect(r.headers['content-type']).toContain(type);
		expect(sim.tasks()).toHaveLength(0);
	});
	it('drop before: connection reset, no task', async () => {
		sim.faults.add({ endpoint: 'submit', kind: 'drop' });
		expect(await err(api.submit(valid))).toMatch(/ECONNRESET|socket hang up/);
		expect(sim.tasks()).toHaveLength(0);
		expect(sim.requests[0]).toMatchObject({ endpoint: 'submit', status: 0, fault: 'drop' });
	});
	it.each(['drop', '500', '502', 'malformed'] as const)(
		'%s after: the task was accepted (exists, will finish) though the answer is lost',
		async (kind) => {
			sim.faults.add({ endpoint: 'submit', kind, when: 'after' });
			await err(api.submit(valid));
			expect(sim.tasks()).toHaveLength(1);
			expect(sim.requests[0].taskId).toBe(sim.tasks()[0].id);
		},
	);
	it('malformed answers 200 with a body that is not JSON', async () => {
		sim.faults.add({ endpoint: 'submit', kind: 'malformed' });
		const r = await axios.post(`${sim.baseUrl}/api/generate/submit`, valid, {
			headers: { Authorization: `Bearer ${sim.apiKey}` },
			responseType: 'text',
			transformResponse: (x) => x,
		});
		expect(r.status).toBe(200);
		expect(() => JSON.parse(r.data)).toThrow();
	});
	it('code answers HTTP 200 with envelope code 500', async () => {
		sim.faults.add({ endpoint: 'submit', kind: 'code' });
		const r = await api.submit(valid);
		expect([r.status, r.data.code, r.data.data]).toEqual([200, 500, null]);
	});
	it('match limits a rule to prompts containing the text', async () => {
		sim.faults.add({ endpoint: 'submit', kind: '500', match: 'boom' });
		expect((await api.submit(valid)).status).toBe(200);
		expect((await api.submit({ model: 'image-1', input: { prompt: 'kaboom' } })).status).toBe(500);
	});
});

describe('faults on status', () => {
	it('slow delays the normal answer by delayMs', async () => {
		const id = await api.create('image-1', { prompt: 'x' });
		sim.faults.add({ endpoint: 'status', kind: 'slow', delayMs: 300 });
		const t0 = Date.now();
		const r = await api.status(id);
		expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
		expect([r.status, r.data.data.task_id]).toEqual([200, id]);
	});
	it('unknownTask answers 404 task not found for a task that exists', async () => {
		const id = await api.create('image-1', { prompt: 'x' });
		sim.faults.add({ endpoint: 'status', kind: 'unknownTask', times: 1 });
		expect((await api.status(id)).data).toEqual({ code: 404, msg: 'task not found', data: null });
		expect((await api.status(id)).status).toBe(200);
	});
	it.each([
		['429', 429],
		['500', 500],
		['502', 502],
		['503', 503],
	] as const)('%s answers %i', async (kind, status) => {
		const id = await api.create('image-1', { prompt: 'x' });
		sim.faults.add({ endpoint: 'status', kind, times: 1 });
		expect((await api.status(id)).status).toBe(status);
		expect((await api.status(id)).status).toBe(200);
	});
	it("perTask: each task's first read is refused, not only the first task's", async () => {
		const a = await api.create('image-1', { prompt: 'a' });
		const b = await api.create('image-1', { prompt: 'b' });
		const id = sim.faults.add({ endpoint: 'status', kind: '429', retryAfter: 1, perTask: 1 });
		const statuses = [];
		for (const task of [a, a, b, b]) statuses.push((await api.status(task)).status);
		expect(statuses).toEqual([429, 200, 429, 200]);
		expect(sim.faults.applied(id)).toBe(2);
		expect(() => sim.faults.add({ endpoint: 'submit', kind: '429', perTask: 1 })).toThrow(
			'fault perTask 1 on submit is invalid',
		);
	});
	it('drop, malformed and code', async () => {
		const id = await api.create('image-1', { prompt: 'x' });
		sim.faults.add({ endpoint: 'status', kind: 'drop', times: 1 });
		sim.faults.add({ endpoint: 'status', kind: 'code', times: 1 });
		expect(await err(api.status(id))).toMatch(/ECONNRESET|socket hang up/);
		expect((await api.status(id)).data.code).toBe(500);
		sim.faults.add({ endpoint: 'status', kind: 'malformed', times: 1 });
		await expect(
			axios
				.get(`${sim.baseUrl}/api/generate/status/${id}`, {
					headers: { Authorization: `Bearer ${sim.apiKey}` },
					responseType: 'text',
					transformResponse: (x) => x,
				})
				.then((r) => JSON.parse(r.data)),
		).rejects.toThrow(SyntaxError);
	});
	it('rates use a seeded PRNG: about the rate, and the same sequence for the same seed', async () => {
		const pattern = async (s: Simulator) => {
			const c = client(s);
			const id = await c.create('image-1', { prompt: 'x' });
			s.faults.add({ endpoint: 'status', kind: '503', rate: 0.3 });
			const out: number[] = [];
			for (let i = 0; i < 60; i++) out.push((await c.status(id)).status);
			return out;
		};
		const a = await pattern(sim);
		sim.reset();
		const b = await pattern(sim);
		const failures = a.filter((s) => s === 503).length;
		expect(failures).toBeGreaterThan(6);
		expect(failures).toBeLessThan(36);
		expect(b).toEqual(a);
		const other = await startSimulator({ seed: 7 });
		try {
			expect(await pattern(other)).not.toEqual(a);
		} finally {
			await other.close();
		}
	});
});

describe('faults on files', () => {
	async function fileUrl(prompt = 'x [sim:size=1000000]') {
		const id = await api.create('image-1', { prompt });
		return (await api.pollToEnd(id)).pop()!.files![0].file_url;
	}
	it('truncate sends the full Content-Length then closes early', async () => {
		const url = await fileUrl();
		sim.faults.add({ endpoint: 'file', kind: 'truncate', times: 1 });
		const r = await axios.get(url, { responseType: 'stream' });
		expect(Number(r.headers['content-length'])).toBe(1000000);
		let got = 0;
		const outcome = await new Promise<string>((resolve) => {
			r.data.on('data', (c: Buffer) => (got += c.length));
			r.data.on('end', () => resolve('end'));
			r.data.on('error', (e: Error) => resolve(e.message));
			r.data.on('aborted', () => resolve('aborted'));
		});
		expect(got).toBeLessThan(1000000);
		expect(outcome).not.toBe('end');
		const whole = await axios.get(url, { responseType: 'arraybuffer' });
		expect(whole.data.byteLength).toBe(1000000);
	});
	it.each(['429', '500', '502', '503'] as const)('%s on the file host', async (kind) => {
		const url = await fileUrl();
		sim.faults.add({ endpoint: 'file', kind, times: 1 });
		expect((await axios.get(url, { validateStatus: () => true })).status).toBe(Number(kind));
	});
	it('drop and slow on the file host', async () => {
		const url = await fileUrl();
		sim.faults.add({ endpoint: 'file', kind: 'drop', times: 1 });
		expect(await err(axios.get(url))).toMatch(/ECONNRESET|socket hang up/);
		sim.faults.add({ endpoint: 'file', kind: 'slow', delayMs: 200, times: 1 });
		const t0 = Date.now();
		expect((await axios.get(url, { responseType: 'arraybuffer' })).data.byteLength).toBe(1000000);
		expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
	});
	it('match limits a file fault to one task', async () => {
		const a = await fileUrl('keep [sim:size=100]');
		const b = await fileUrl('break-me [sim:size=100]');
		sim.faults.add({ endpoint: 'file', kind: '503', match: 'break-me' });
		expect((await axios.get(a, { validateStatus: () => true })).status).toBe(200);
		expect((await axios.get(b, { validateStatus: () => true })).status).toBe(503);
	});
});
