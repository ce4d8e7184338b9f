// The Media Generation Trigger against replays and a faulty status endpoint (issue 19,
// finding 5), over real HTTP: the simulator (or a faulty service) answers, callbacks are posted
// to the trigger served by the webhook harness with n8n-core's WebhookContext.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

import type { INodeParameters } from 'n8n-workflow';

import { triggerWorkflow } from '../harness';
import { startCallbackReceiver, type CallbackReceiver } from '../harness/webhook';
import { startSimulator, type Simulator } from '../simulator';
import { client } from '../simulator/client';
import { signCallbackUrl } from '../../nodes/shared/callbackUrl';

const API_KEY = `sk-${randomBytes(12).toString('hex')}`;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
	for (const close of closers.splice(0).reverse()) await close();
});

async function trigger(
	baseUrl: string,
	parameters: INodeParameters = {},
): Promise<CallbackReceiver> {
	const receiver = await startCallbackReceiver({
		workflow: triggerWorkflow(parameters),
		// allowPrivateFileHosts: the simulator's file host is on this machine (127.0.0.1).
		credentials: { mediaGenerationApi: { apiKey: API_KEY, baseUrl, allowPrivateFileHosts: true } },
	});
	closers.push(async () => await receiver.close());
	return receiver;
}

const statusReads = (sim: Simulator) => sim.requests.filter((r) => r.endpoint === 'status').length;

async function simulator(): Promise<Simulator> {
	const sim = await startSimulator({ apiKey: API_KEY, defaultDurationMs: 30 });
	closers.push(async () => {
		await sim.idle();
		await sim.close();
	});
	return sim;
}

describe('with Accept Unsigned Callbacks on', () => {
	test('an unsigned replay of a callback whose task ran from its signed callback is a duplicate: one execution', async () => {
		const sim = await simulator();
		const receiver = await trigger(sim.baseUrl, { options: { acceptUnsigned: true } });
		const signedUrl = signCallbackUrl(receiver.callbackUrl({ ref: 'row-1' }), API_KEY);
		const taskId = await client(sim).create(
			sim.imageModelId,
			{ prompt: 'a fox' },
			{ callback_url: signedUrl },
		);
		await receiver.waitFor(1);
		await sim.idle();
		expect(receiver.deliveries[0].status).toBe(200);

		// The same body to the URL without its signature (and with another reference).
		const replay = await sim.sendCallback(taskId, { url: receiver.callbackUrl({ ref: 'forged' }) });
		expect(replay.status).toBe(200);
		await receiver.waitFor(2);
		expect(receiver.deliveries[1].answer).toMatchObject({ duplicate: true, task_id: taskId });
		expect(await receiver.executions()).toHaveLength(1);
	});

	test('an unsigned callback for a task that came first takes its one run: the signed one is then a duplicate, answered without a status read (one run per task, issue 44)', async () => {
		const sim = await simulator();
		const receiver = await trigger(sim.baseUrl, { options: { acceptUnsigned: true } });
		const signedUrl = signCallbackUrl(receiver.callbackUrl({ ref: 'row-2' }), API_KEY);
		// The task's own callback is lost: the unsigned one comes first, then the signed one.
		sim.faults.add({ endpoint: 'callback', kind: 'drop' });
		const taskId = await client(sim).create(
			sim.imageModelId,
			{ prompt: 'a fox' },
			{ callback_url: signedUrl },
		);
		await client(sim).pollToEnd(taskId);
		expect((await sim.sendCallback(taskId, { url: receiver.callbackUrl() })).status).toBe(200);
		const reads = statusReads(sim);
		expect((await sim.sendCallback(taskId, { url: signedUrl })).status).toBe(200);
		const [unsigned, signed] = await receiver.waitFor(2);
		expect(unsigned.answer).toEqual({ received: true, task_id: taskId });
		expect(signed.answer).toEqual({ received: true, duplicate: true, task_id: taskId });
		expect(statusReads(sim)).toBe(reads);
		expect(await receiver.executions()).toHaveLength(1);
	});
});

describe('one run per task, whatever URL brings it (issue 44, item 6)', () => {
	test("two tasks' genuine callbacks replayed to each other's URL three times: 2 runs with their own references, every replay a duplicate answered without a status read", async () => {
		const sim = await simulator();
		const receiver = await trigger(sim.baseUrl);
		const urlA = signCallbackUrl(receiver.callbackUrl({ ref: 'row-A' }), API_KEY);
		const urlB = signCallbackUrl(receiver.callbackUrl({ ref: 'row-B' }), API_KEY);
		const create = (url: string) =>
			client(sim).create(sim.imageModelId, { prompt: 'a fox' }, { callback_url: url });
		const [taskA, taskB] = [await create(urlA), await create(urlB)];
		await receiver.waitFor(2);
		await sim.idle();
		expect(receiver.deliveries.map((d) => d.status)).toEqual([200, 200]);
		const reads = statusReads(sim);

		const replays = [];
		for (let i = 0; i < 3; i++) {
			replays.push(await sim.sendCallback(taskA, { url: urlB }));
			replays.push(await sim.sendCallback(taskB, { url: urlA }));
		}
		expect(replays.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
		const answers = (await receiver.waitFor(8)).slice(2).map((d) => d.answer);
		expect(answers).toEqual(
			[taskA, taskB, taskA, taskB, taskA, taskB].map((task_id) => ({
				received: true,
				duplicate: true,
				task_id,
			})),
		);
		expect(statusReads(sim)).toBe(reads);
		const runs = (await receiver.executions()).map((e) => e.outputOf('Downstream')[0].json);
		expect(runs.map((j) => [j.task_id, j.reference]).sort()).toEqual(
			[
				[taskA, 'row-A'],
				[taskB, 'row-B'],
			].sort(),
		);
	});

	test("a genuine callback's query sent to a second Trigger on the same credential: 401 there, no status read, nothing started; the first Trigger runs it (issue 51, finding 1)", async () => {
		const sim = await simulator();
		const first = await trigger(sim.baseUrl);
		const second = await trigger(sim.baseUrl);
		const signedUrl = signCallbackUrl(first.callbackUrl({ ref: 'row-X' }), API_KEY);
		const taskId = await client(sim).create(
			sim.imageModelId,
			{ prompt: 'a fox' },
			{ callback_url: signedUrl },
		);
		await first.waitFor(1);
		await sim.idle();
		expect(first.deliveries[0].status).toBe(200);
		const reads = statusReads(sim);
		// The query and body of the first Trigger's callback, posted to the second one's URL.
		const replay = await sim.sendCallback(taskId, {
			url: `${second.url}${new URL(signedUrl).search}`,
		});
		expect(replay.status).toBe(401);
		expect(statusReads(sim)).toBe(reads);
		expect(await second.executions()).toHaveLength(0);
		const [run] = await first.executions();
		expect(run.outputOf('Media Generation Trigger')[0].json).toMatchObject({
			task_id: taskId,
			reference: 'row-X',
		});
	});

	test('a task being confirmed on one URL starts nothing on another: 503 at once, no status read of its own; called again, a duplicate', async () => {
		const sim = await simulator();
		const receiver = await trigger(sim.baseUrl);
		const urlA = signCallbackUrl(receiver.callbackUrl({ ref: 'row-A' }), API_KEY);
		const urlB = signCallbackUrl(receiver.callbackUrl({ ref: 'row-B' }), API_KEY);
		sim.faults.add({ endpoint: 'callback', kind: 'drop' });
		const taskA = await client(sim).create(
			sim.imageModelId,
			{ prompt: 'a fox' },
			{ callback_url: urlA },
		);
		await client(sim).pollToEnd(taskA);
		// The status endpoint is slow: A's own callback is still being confirmed when the replay comes.
		sim.faults.add({ endpoint: 'status', kind: 'slow', delayMs: 1_500, times: 1 });
		const reads = statusReads(sim);
		const own = sim.sendCallback(taskA, { url: urlA });
		await new Promise((r) => setTimeout(r, 300));
		const elsewhere = await sim.sendCallback(taskA, { url: urlB });
		expect(elsewhere.status).toBe(503);
		expect((await own).status).toBe(200);
		expect(statusReads(sim)).toBe(reads + 1);
		const again = await sim.sendCallback(taskA, { url: urlB });
		expect(again.status).toBe(200);
		const deliveries = await receiver.waitFor(3);
		expect(deliveries.map((d) => d.answer)).toContainEqual(
			expect.objectContaining({
				error: expect.stringMatching(/being confirmed from another callback URL/),
			}),
		);
		const runs = await receiver.executions();
		expect(runs.map((e) => e.outputOf('Downstream')[0].json.reference)).toEqual(['row-A']);
	});
});

test("a status answer for another task than the callback's: 409, nothing started", async () => {
	// A faulty service: its status endpoint answers with another task_id, finished, with a file.
	const other = `task_${'b'.repeat(32)}`;
	const service = http.createServer((req, res) => {
		res.writeHead(200, { 'content-type': 'application/json' });
		res.end(
			JSON.stringify({
				code: 200,
				data: {
					task_id: other,
					status: 'finished',
					progress: 100,
					files: [{ file_url: 'http://127.0.0.1:9/x.png', file_type: 'image' }],
				},
			}),
		);
	});
	await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
	closers.push(async () => await new Promise<void>((resolve) => service.close(() => resolve())));
	const receiver = await trigger(`http://127.0.0.1:${(service.address() as AddressInfo).port}`);
	const taskId = `task_${'a'.repeat(32)}`;
	const res = await fetch(signCallbackUrl(receiver.callbackUrl({ ref: 'row-3' }), API_KEY), {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ code: 200, data: { task_id: taskId, status: 'finished' } }),
	});
	expect(res.status).toBe(409);
	expect(((await res.json()) as { error: string }).error).toMatch(
		/answered with task "task_b+"; nothing was started/,
	);
	await receiver.waitFor(1);
	expect(await receiver.executions()).toHaveLength(0);
});
