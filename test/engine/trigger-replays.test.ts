// The Media Generation Trigger against replays and a faulty status endpoint (issue 19,
// finding 5), over real HTTP: the simulator (or a faulty service) answers, callbacks are posted
// to the trigger served by the webhook harness with n8n-core's WebhookContext.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

import type { INodeParameters } from 'n8n-workflow';

import { MEDIA_GENERATION_TRIGGER_TYPE, NOOP_TYPE, chain, mediaCredentials } from '../harness';
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
		workflow: chain(
			{
				name: 'Media Generation Trigger',
				type: MEDIA_GENERATION_TRIGGER_TYPE,
				parameters,
				credentials: mediaCredentials(),
			},
			{ name: 'Downstream', type: NOOP_TYPE },
		),
		// allowPrivateFileHosts: the simulator's file host is on this machine (127.0.0.1).
		credentials: { mediaGenerationApi: { apiKey: API_KEY, baseUrl, allowPrivateFileHosts: true } },
	});
	closers.push(async () => await receiver.close());
	return receiver;
}

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

	test('a genuine signed callback still runs after an unsigned one for its task came first', async () => {
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
		expect((await sim.sendCallback(taskId, { url: signedUrl })).status).toBe(200);
		const [unsigned, genuine] = await receiver.waitFor(2);
		expect(unsigned.answer).toEqual({ received: true, task_id: taskId });
		expect(genuine.answer).toEqual({ received: true, task_id: taskId });
		const executions = await receiver.executions();
		expect(executions).toHaveLength(2);
		expect(executions.map((e) => e.outputOf('Downstream')[0].json.signed).sort()).toEqual([
			false,
			true,
		]);
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
