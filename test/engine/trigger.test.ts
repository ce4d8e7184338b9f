// The Media Generation Trigger through n8n-core's real WebhookContext and WorkflowExecute,
// called over HTTP by the simulator's own callbacks (and by forged ones), confirming with the
// simulator's status endpoint and downloading from its file origin.
import { randomBytes } from 'crypto';

import type { IDataObject, INodeParameters } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { triggerWorkflow } from '../harness';
import { credentialResolutions } from '../harness/credentials';
import { startCallbackReceiver, type CallbackReceiver, type Delivery } from '../harness/webhook';
import { startSimulator, type Simulator, type SimulatorOptions } from '../simulator';
import { client } from '../simulator/client';
import { signCallbackUrl, triggerWebhookIdOf } from '../../nodes/shared/callbackUrl';

/** A fresh key per run: any place it shows up in is a leak. */
const API_KEY = `sk-${randomBytes(12).toString('hex')}`;

interface Setup {
	sim: Simulator;
	receiver: CallbackReceiver;
}

const open: Setup[] = [];

async function setup(
	parameters: INodeParameters = {},
	simOptions: SimulatorOptions = {},
	typeVersion = 1,
): Promise<Setup> {
	const sim = await startSimulator({ apiKey: API_KEY, defaultDurationMs: 30, ...simOptions });
	const workflow = triggerWorkflow(parameters, typeVersion);
	const receiver = await startCallbackReceiver({
		workflow,
		// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
		credentials: {
			mediaGenerationApi: { apiKey: API_KEY, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
		},
	});
	const s = { sim, receiver };
	open.push(s);
	return s;
}

afterEach(async () => {
	for (const { sim, receiver } of open.splice(0)) {
		await sim.idle();
		await receiver.close();
		await sim.close();
	}
});

/** A callback URL as the Media Generation node writes it: signed with the credential's key. */
const signed = (url: string, key = API_KEY) => signCallbackUrl(url, key);

/** Submits an image task whose callback goes to the trigger; returns its id. */
async function submit(
	{ sim, receiver }: Setup,
	prompt = 'a red fox',
	query: Record<string, string> = { ref: 'row-7' },
): Promise<string> {
	return await client(sim).create(
		sim.imageModelId,
		{ prompt },
		{ callback_url: signed(receiver.callbackUrl(query)) },
	);
}

/** Waits for the simulator's own callback (and its retries) and what the trigger did with it. */
async function settle({ sim, receiver }: Setup, deliveries: number): Promise<Delivery[]> {
	await receiver.waitFor(deliveries);
	await sim.idle();
	return await receiver.waitFor(receiver.deliveries.length);
}

async function executionOf(delivery: Delivery) {
	expect(delivery.execution).toBeDefined();
	return await delivery.execution!;
}

function fileRequests(sim: Simulator) {
	return sim.requests.filter((r) => r.endpoint === 'file');
}

describe('Media Generation Trigger: genuine callbacks', () => {
	it.each(['status', 'flat', 'altKeys'] as const)(
		'a %s-shaped callback starts one execution with the confirmed task, the reference and the files',
		async (callbackShape) => {
			const s = await setup({}, { callbackShape });
			const taskId = await submit(s, 'a red fox [sim:files=2]');
			const [delivery] = await settle(s, 1);

			expect(delivery.status).toBe(200);
			expect(delivery.answer).toEqual({ received: true, task_id: taskId });
			const execution = await executionOf(delivery);
			expect(execution.status).toBe('success');
			const [item] = execution.outputOf('Downstream');
			expect(item.json).toMatchObject({
				task_id: taskId,
				status: 'finished',
				progress: 100,
				reference: 'row-7',
				verified: true,
				error_message: null,
			});
			expect(item.json.error).toBeUndefined();
			const files = item.json.files as IDataObject[];
			const serviceFiles = s.sim.view(taskId)!.files as IDataObject[];
			expect(files.map((f) => f.url)).toEqual(serviceFiles.map((f) => f.file_url));
			expect(Object.keys(item.binary ?? {})).toEqual(['data', 'data_1']);
			const bytes = await s.receiver.readBinary(item, 'data');
			expect(bytes.subarray(0, 4)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
			expect(item.binary!.data.mimeType).toBe('image/png');
			expect(files[0]).toMatchObject({ binary_property: 'data', size: bytes.length });

			// Confirmed with the status endpoint, with the key; files fetched without it.
			const statusCalls = s.sim.requests.filter(
				(r) => r.endpoint === 'status' && r.taskId === taskId,
			);
			expect(statusCalls.length).toBeGreaterThanOrEqual(1);
			expect(statusCalls[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
			expect(fileRequests(s.sim)).toHaveLength(2);
			for (const r of fileRequests(s.sim)) expect(r.headers.authorization).toBeUndefined();
			expect(JSON.stringify(fileRequests(s.sim).map((r) => r.headers))).not.toContain(API_KEY);
			expect(execution.dump()).not.toContain(API_KEY);
			expect(JSON.stringify(s.receiver.deliveries.map((d) => d.answer))).not.toContain(API_KEY);
			// The service got its 2xx at once: no retry of the callback.
			expect(s.sim.callbacks.filter((c) => c.taskId === taskId)).toHaveLength(1);
		},
	);

	it('many tasks at once: one execution each, every result matched to its own reference', async () => {
		const s = await setup();
		const refs = Array.from({ length: 12 }, (_, i) => `row-${i}`);
		const ids = await Promise.all(
			refs.map((ref, i) => submit(s, `fox ${i} [sim:duration=${20 + i * 5}]`, { ref })),
		);
		const deliveries = await settle(s, refs.length);
		expect(deliveries).toHaveLength(refs.length);
		const executions = await s.receiver.executions();
		const seen = new Map<string, unknown>();
		for (const execution of executions) {
			const [item] = execution.outputOf('Downstream');
			seen.set(item.json.task_id as string, item.json.reference);
			expect(item.binary?.data).toBeDefined();
		}
		expect(seen).toEqual(new Map(ids.map((id, i) => [id, refs[i]])));
	});

	it('answers the service before downloading the files', async () => {
		const s = await setup();
		// A large file: if the answer waited for the download, it would come after it.
		const taskId = await submit(s, 'big [sim:size=40000000]');
		const [delivery] = await settle(s, 1);
		const execution = await executionOf(delivery);
		const [item] = execution.outputOf('Downstream');
		expect(item.json.task_id).toBe(taskId);
		expect((item.json.files as IDataObject[])[0].size).toBe(40_000_000);
		// Ordering, not a timing target: the answer was complete while webhook() still ran.
		expect(delivery.answeredMs).toBeLessThan(delivery.webhookMs);
	});

	it('a failed task reaches a "Failed" trigger with its error message and no files', async () => {
		const s = await setup({ event: 'failed' });
		const taskId = await submit(s, 'doomed [sim:fail=content policy]');
		const [delivery] = await settle(s, 1);
		const [item] = (await executionOf(delivery)).outputOf('Downstream');
		expect(item.json).toMatchObject({
			task_id: taskId,
			status: 'failed',
			error_message: 'content policy',
			reference: 'row-7',
			files: [],
		});
		expect(item.binary).toBeUndefined();
		expect(fileRequests(s.sim)).toHaveLength(0);
	});

	it('a "Finished" trigger ignores a failed task (answers 2xx so the service stops retrying)', async () => {
		const s = await setup({ event: 'finished' });
		await submit(s, 'doomed [sim:fail]');
		const [delivery] = await settle(s, 1);
		expect(delivery.status).toBe(200);
		expect(delivery.answer).toMatchObject({
			received: true,
			ignored: 'failed events are not selected',
		});
		expect(delivery.execution).toBeUndefined();
		expect(s.receiver.deliveries).toHaveLength(1);
	});

	it('a "Failed" trigger ignores a finished task and downloads nothing', async () => {
		const s = await setup({ event: 'failed' });
		await submit(s);
		const [delivery] = await settle(s, 1);
		expect(delivery.answer).toMatchObject({ ignored: 'finished events are not selected' });
		expect(delivery.execution).toBeUndefined();
		expect(fileRequests(s.sim)).toHaveLength(0);
	});

	it('Download Files off: the task and its URLs, no binary, nothing fetched', async () => {
		const s = await setup({ download: false });
		const taskId = await submit(s);
		const [item] = (await executionOf((await settle(s, 1))[0])).outputOf('Downstream');
		expect(item.json.task_id).toBe(taskId);
		expect((item.json.files as IDataObject[])[0].url).toBe(
			(s.sim.view(taskId)!.files as IDataObject[])[0].file_url,
		);
		expect(item.binary).toBeUndefined();
		expect(fileRequests(s.sim)).toHaveLength(0);
	});

	it('puts the files in the chosen binary field', async () => {
		const s = await setup({ binaryPropertyName: 'video' });
		await submit(s, 'fox [sim:files=2]');
		const [item] = (await executionOf((await settle(s, 1))[0])).outputOf('Downstream');
		expect(Object.keys(item.binary ?? {})).toEqual(['video', 'video_1']);
	});
});

describe('Media Generation Trigger: forged, replayed and malformed calls start nothing', () => {
	it('a task unknown to the service: 404, no execution, no download', async () => {
		for (const unknownTaskStyle of ['404', '400', 'envelope'] as const) {
			const s = await setup({}, { unknownTaskStyle });
			const forged = {
				code: 200,
				data: {
					task_id: 'task_forged',
					status: 'finished',
					files: [{ file_url: `${s.sim.fileBaseUrl}/evil.png` }],
				},
			};
			const entry = await s.sim.sendCallback('task_forged', {
				url: signed(s.receiver.callbackUrl()),
				body: forged,
			});
			expect(entry.status).toBe(404);
			const [delivery] = await s.receiver.waitFor(1);
			expect(delivery.answer).toMatchObject({
				error: expect.stringContaining('task_forged is unknown'),
			});
			expect(delivery.execution).toBeUndefined();
			expect(fileRequests(s.sim)).toHaveLength(0);
		}
	});

	it('a "finished" claim for a task still processing: 409, no execution', async () => {
		const s = await setup();
		const taskId = await submit(s, 'slow [sim:never]');
		const body = {
			code: 200,
			data: {
				task_id: taskId,
				status: 'finished',
				files: [{ file_url: 'http://127.0.0.1:1/x.png' }],
			},
		};
		const entry = await s.sim.sendCallback(taskId, { body });
		expect(entry.status).toBe(409);
		const [delivery] = await s.receiver.waitFor(1);
		expect(delivery.answer).toMatchObject({
			error: expect.stringMatching(
				/callback says .* is finished, the service says (not_started|queued|processing)/,
			),
		});
		expect(delivery.execution).toBeUndefined();
		expect(fileRequests(s.sim)).toHaveLength(0);
	});

	it('a "failed" claim for a task that finished: 409, no execution', async () => {
		const s = await setup();
		const taskId = await submit(s, 'fox');
		await settle(s, 1);
		const entry = await s.sim.sendCallback(taskId, {
			body: { task_id: taskId, status: 'failed', error_message: 'forged' },
		});
		expect(entry.status).toBe(409);
		expect(s.receiver.deliveries[1].execution).toBeUndefined();
		expect(await s.receiver.executions()).toHaveLength(1);
	});

	it("files injected into the body are never fetched: the service's files are", async () => {
		const s = await setup();
		const taskId = await submit(s, 'fox [sim:never]');
		// Make the task end without its own callback: forge one for the real, finished task.
		s.sim.task(taskId)!.outcome = 'finish';
		s.sim.task(taskId)!.callbackDone = true;
		s.sim.clock.advance(60_000);
		const evil = `${s.sim.fileBaseUrl}/files/evil/0-injected.png`;
		const body = {
			code: 200,
			data: {
				task_id: taskId,
				status: 'finished',
				files: [{ file_url: evil, file_type: 'image' }],
			},
		};
		const entry = await s.sim.sendCallback(taskId, { body });
		expect(entry.status).toBe(200);
		const [delivery] = await s.receiver.waitFor(1);
		const [item] = (await executionOf(delivery)).outputOf('Downstream');
		const real = (s.sim.view(taskId)!.files as IDataObject[]).map((f) => f.file_url);
		expect((item.json.files as IDataObject[]).map((f) => f.url)).toEqual(real);
		expect(fileRequests(s.sim).map((r) => r.path)).not.toContain(new URL(evil).pathname);
	});

	it('a callback without a task id: 400 with a clear message, nothing asked of the service', async () => {
		const s = await setup();
		const entry = await s.sim.sendCallback('x', {
			url: signed(s.receiver.callbackUrl()),
			body: { hello: 'world' },
		});
		expect(entry.status).toBe(400);
		const [delivery] = await s.receiver.waitFor(1);
		expect(delivery.answer).toEqual({
			error: expect.stringContaining('The callback body has no task id'),
		});
		expect(delivery.execution).toBeUndefined();
		expect(s.sim.count('status')).toBe(0);
	});

	it('a truncated (malformed) JSON callback: 400, no execution', async () => {
		const s = await setup();
		await submit(s);
		s.sim.faults.add({ endpoint: 'callback', kind: 'malformed', times: 1 });
		await settle(s, 2);
		// The simulator retried after the 400 with the whole body: exactly one execution.
		expect(s.receiver.deliveries.map((d) => d.status)).toEqual([400, 200]);
		expect(await s.receiver.executions()).toHaveLength(1);
	});

	it.each([1, 1.1])(
		'version %s: a JSON callback sent as application/octet-stream (a body n8n does not parse) starts one execution',
		async (typeVersion) => {
			const s = await setup({}, {}, typeVersion);
			s.sim.faults.add({ endpoint: 'callback', kind: 'drop' });
			const taskId = await submit(s);
			while (s.sim.task(taskId)?.endedAt === undefined) await sleep(20);
			const res = await fetch(s.sim.task(taskId)!.callbackUrl!, {
				method: 'POST',
				headers: { 'content-type': 'application/octet-stream' },
				body: JSON.stringify({ task_id: taskId, status: 'finished' }),
			});
			expect(res.status).toBe(200);
			const [delivery] = await s.receiver.waitFor(1);
			const execution = await executionOf(delivery);
			expect(execution.outputOf('Downstream')[0].json).toMatchObject({
				task_id: taskId,
				status: 'finished',
			});
			expect(await s.receiver.executions()).toHaveLength(1);
		},
	);

	it('a callback resolves the credential once: its signature and its status read use the same read', async () => {
		const s = await setup();
		const before = credentialResolutions.get('mediaGenerationApi') ?? 0;
		await submit(s);
		const [delivery] = await settle(s, 1);
		expect(delivery.status).toBe(200);
		await executionOf(delivery);
		// submit() above is the simulator's client, not the node: every resolution is the trigger's.
		expect((credentialResolutions.get('mediaGenerationApi') ?? 0) - before).toBe(1);
	});

	it('a duplicate callback (same task, same status) does not run the workflow twice', async () => {
		const s = await setup();
		const taskId = await submit(s);
		await settle(s, 1);
		const replay = await s.sim.sendCallback(taskId);
		expect(replay.status).toBe(200);
		const [, second] = await s.receiver.waitFor(2);
		expect(second.answer).toEqual({ received: true, duplicate: true, task_id: taskId });
		expect(second.execution).toBeUndefined();
		expect(await s.receiver.executions()).toHaveLength(1);
		// Remembered in the workflow's static data, which n8n stores for active workflows.
		expect(s.receiver.staticData()).toMatchObject({
			'node:Media Generation Trigger': {
				deliveries: {
					// Task and status, whatever URL brought it (issue 44: one run per task).
					[`${taskId}:finished`]: expect.any(Number),
				},
			},
		});
	});

	it('the remembered delivery survives a restart (static data, not process memory)', async () => {
		const s = await setup();
		const taskId = await submit(s);
		await settle(s, 1);
		// Another n8n process (or the same after a restart) loads the stored static data.
		const restarted = await startCallbackReceiver({
			workflow: triggerWorkflow(),
			workflowId: 'restarted-process',
			// The same Trigger after a restart: n8n keeps its webhookId.
			webhookId: triggerWebhookIdOf(s.receiver.url),
			staticData: s.receiver.staticData(),
			// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
			credentials: {
				mediaGenerationApi: {
					apiKey: API_KEY,
					baseUrl: s.sim.baseUrl,
					allowPrivateFileHosts: true,
				},
			},
		});
		try {
			// The same URL (query: ref, nonce, sig), at the restarted receiver's address.
			const url = new URL(restarted.url);
			url.search = new URL(s.sim.task(taskId)!.callbackUrl!).search;
			const replay = await s.sim.sendCallback(taskId, { url: url.toString() });
			expect(replay.status).toBe(200);
			const [delivery] = await restarted.waitFor(1);
			expect(delivery.answer).toMatchObject({ duplicate: true });
			expect(await restarted.executions()).toHaveLength(0);
		} finally {
			await restarted.close();
		}
	});

	it('with the Test URL (manual mode) a replayed call runs again: nothing is remembered', async () => {
		const s = await setup();
		const manual = await startCallbackReceiver({
			workflow: triggerWorkflow(),
			mode: 'manual',
			// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
			credentials: {
				mediaGenerationApi: {
					apiKey: API_KEY,
					baseUrl: s.sim.baseUrl,
					allowPrivateFileHosts: true,
				},
			},
		});
		try {
			const taskId = await client(s.sim).create(
				s.sim.imageModelId,
				{ prompt: 'fox' },
				{ callback_url: signed(manual.callbackUrl()) },
			);
			await manual.waitFor(1);
			await s.sim.idle();
			await s.sim.sendCallback(taskId);
			const deliveries = await manual.waitFor(2);
			expect(deliveries.map((d) => d.status)).toEqual([200, 200]);
			expect(await manual.executions()).toHaveLength(2);
			expect(manual.staticData()).toEqual({});
		} finally {
			await manual.close();
		}
	});

	it('duplicates arriving together start one execution', async () => {
		const s = await setup();
		const taskId = await submit(s, 'fox [sim:never]');
		s.sim.task(taskId)!.outcome = 'finish';
		s.sim.task(taskId)!.callbackDone = true;
		s.sim.clock.advance(60_000);
		const entries = await Promise.all([1, 2, 3].map(() => s.sim.sendCallback(taskId)));
		expect(entries.map((e) => e.status)).toEqual([200, 200, 200]);
		await s.receiver.waitFor(3);
		expect(await s.receiver.executions()).toHaveLength(1);
		expect(
			s.receiver.deliveries.filter((d) => (d.answer as IDataObject).duplicate === true),
		).toHaveLength(2);
	});
});

describe('Media Generation Trigger: secret in the callback URL', () => {
	const secret = randomBytes(8).toString('hex');

	it('refuses a callback without the secret or with a wrong one (401), accepts the right one', async () => {
		const s = await setup({ options: { secret } });
		const taskId = await submit(s, 'fox [sim:never]', { ref: 'r1' });
		s.sim.task(taskId)!.outcome = 'finish';
		s.sim.task(taskId)!.callbackDone = true;
		s.sim.clock.advance(60_000);

		const none = await s.sim.sendCallback(taskId);
		const wrong = await s.sim.sendCallback(taskId, {
			url: s.receiver.callbackUrl({ ref: 'r1', secret: 'guess' }),
		});
		expect([none.status, wrong.status]).toEqual([401, 401]);
		expect(s.sim.count('status')).toBe(0);

		const right = await s.sim.sendCallback(taskId, {
			url: signed(s.receiver.callbackUrl({ ref: 'r1', secret })),
		});
		expect(right.status).toBe(200);
		const deliveries = await s.receiver.waitFor(3);
		expect(deliveries.map((d) => d.execution !== undefined)).toEqual([false, false, true]);
		const [item] = (await deliveries[2].execution!).outputOf('Downstream');
		expect(item.json.reference).toBe('r1');
		expect(JSON.stringify(item.json)).not.toContain(secret);
		expect(JSON.stringify(deliveries.map((d) => d.answer))).not.toContain(secret);
	});
});

describe('Media Generation Trigger: when verification or download fails nothing is lost', () => {
	it('status endpoint down, "Start With Error" chosen: the execution starts with the task id and an error, no status or files', async () => {
		const s = await setup({ options: { onVerifyError: 'start' } });
		const taskId = await submit(s, 'fox');
		s.sim.faults.add({ endpoint: 'status', kind: '503', times: 100 });
		const [delivery] = await settle(s, 1);
		expect(delivery.status).toBe(200);
		expect(delivery.answer).toEqual({ received: true, task_id: taskId, verified: false });
		const [item] = (await executionOf(delivery)).outputOf('Downstream');
		expect(item.json).toMatchObject({
			task_id: taskId,
			status: 'unverified',
			verified: false,
			claimed_status: 'finished',
			reference: 'row-7',
			files: [],
			error: expect.stringContaining('Could not confirm the callback with the status endpoint'),
		});
		expect(item.json.error).toContain('HTTP 503');
		expect(item.binary).toBeUndefined();
		expect(fileRequests(s.sim)).toHaveLength(0);
		// Bounded: the service's answer does not wait for the node's full retry budget.
		expect(s.sim.count('status')).toBe(3);
	});

	it('On Verification Error "Reject": a status endpoint failing 3 times is answered 202 "confirming", then the run starts once, confirmed', async () => {
		const s = await setup({ options: { onVerifyError: 'reject' } }, { callbackRetries: 3 });
		const taskId = await submit(s, 'fox');
		// Every read the trigger made before answering fails (was: 503, and a service that never
		// calls again lost the task); it answers at the first failure and reads again after.
		s.sim.faults.add({ endpoint: 'status', kind: '500', times: 3 });
		const deliveries = await settle(s, 1);
		expect(deliveries.map((d) => d.status)).toEqual([202]);
		expect(deliveries[0].answer).toEqual({ received: true, task_id: taskId, confirming: true });
		const [item] = (await executionOf(deliveries[0])).outputOf('Downstream');
		expect(item.json).toMatchObject({ task_id: taskId, status: 'finished', verified: true });
		expect(await s.receiver.executions()).toHaveLength(1);
		expect(s.sim.count('status')).toBe(4);
	}, 30_000);

	it('a wrong API key: the execution starts with an error that never contains the key', async () => {
		const s = await setup();
		const workflow = triggerWorkflow();
		const wrongKey = `sk-${randomBytes(12).toString('hex')}`;
		workflow.nodes[0].parameters = { options: { onVerifyError: 'start' } };
		const receiver = await startCallbackReceiver({
			workflow,
			// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
			credentials: {
				mediaGenerationApi: {
					apiKey: wrongKey,
					baseUrl: s.sim.baseUrl,
					allowPrivateFileHosts: true,
				},
			},
		});
		try {
			// Node and trigger share the (wrong) credential: the signature holds, the status read fails.
			const taskId = await client(s.sim).create(
				s.sim.imageModelId,
				{ prompt: 'fox' },
				{ callback_url: signed(receiver.callbackUrl(), wrongKey) },
			);
			await receiver.waitFor(1);
			const [delivery] = await receiver.waitFor(1);
			const execution = await executionOf(delivery);
			const [item] = execution.outputOf('Downstream');
			expect(item.json).toMatchObject({ task_id: taskId, verified: false });
			expect(item.json.error).toMatch(/HTTP 40[13].*API key/);
			expect(execution.dump()).not.toContain(wrongKey);
			expect(JSON.stringify(delivery.answer)).not.toContain(wrongKey);
		} finally {
			await s.sim.idle();
			await receiver.close();
		}
	});

	it('download fails (links expired): answered 200, the execution starts with the confirmed task, its URLs and an error', async () => {
		const s = await setup();
		const taskId = await submit(s, 'fox');
		// The callback is handled after the 24-hour validity: the file host answers 404.
		s.sim.clock.advance(25 * 60 * 60 * 1000);
		const [delivery] = await settle(s, 1);
		expect(delivery.status).toBe(200);
		const [item] = (await executionOf(delivery)).outputOf('Downstream');
		expect(item.json).toMatchObject({
			task_id: taskId,
			status: 'finished',
			verified: true,
			reference: 'row-7',
		});
		expect((item.json.files as IDataObject[])[0].url).toBe(
			(s.sim.view(taskId)!.files as IDataObject[])[0].file_url,
		);
		expect(item.json.error).toMatch(/Downloading the files failed: .*HTTP 404.*expired/);
		expect(item.binary).toBeUndefined();
		// The callback was answered once: the service has nothing to retry.
		expect(s.sim.callbacks.filter((c) => c.taskId === taskId).map((c) => c.status)).toEqual([200]);
	});

	it("a file over the Trigger's Max File Size: refused on its Content-Length, the limit named (issue 37)", async () => {
		// 4.5 GiB announced, never sent: refused before reading, by the option and by the default.
		const huge = 4.5 * 1024 ** 3;
		const set = await setup({ options: { maxFileSizeMb: 4000 } });
		const automatic = await setup();
		await submit(set, `huge [sim:size=${huge}]`);
		await submit(automatic, `huge [sim:size=${huge}]`);
		const [fromOption] = (await executionOf((await settle(set, 1))[0])).outputOf('Downstream');
		const [fromDefault] = (await executionOf((await settle(automatic, 1))[0])).outputOf(
			'Downstream',
		);
		expect(fromOption.json.error).toContain(
			'over the limit of 4000 MB set in Options → Max File Size (MB)',
		);
		expect(fromDefault.json.error).toMatch(/over the default limit of \d+ MB/);
		expect([fromOption.binary, fromDefault.binary]).toEqual([undefined, undefined]);
	});

	it('a file host failing transiently is retried after the service was answered', async () => {
		const s = await setup();
		const taskId = await submit(s, 'fox');
		s.sim.faults.add({ endpoint: 'file', kind: '502', times: 1 });
		const [delivery] = await settle(s, 1);
		const [item] = (await executionOf(delivery)).outputOf('Downstream');
		expect(item.json).toMatchObject({ task_id: taskId, status: 'finished' });
		expect(item.json.error).toBeUndefined();
		expect(item.binary?.data).toBeDefined();
		expect(fileRequests(s.sim).map((r) => r.status)).toEqual([502, 200]);
	});
});

describe('Media Generation Trigger: Verify With Status Endpoint off', () => {
	it('trusts the body: no status read, files from the body', async () => {
		const s = await setup({ verify: false });
		const taskId = await submit(s);
		const [delivery] = await settle(s, 1);
		const [item] = (await executionOf(delivery)).outputOf('Downstream');
		expect(item.json).toMatchObject({ task_id: taskId, status: 'finished', verified: false });
		expect(item.binary?.data).toBeDefined();
		expect(s.sim.requests.filter((r) => r.endpoint === 'status')).toHaveLength(0);
	});

	it('refuses a body without a recognisable status (400)', async () => {
		const s = await setup({ verify: false });
		const entry = await s.sim.sendCallback('t', {
			url: signed(s.receiver.callbackUrl()),
			body: { task_id: 't' },
		});
		expect(entry.status).toBe(400);
		const [delivery] = await s.receiver.waitFor(1);
		expect(delivery.answer).toMatchObject({
			error: expect.stringContaining('no recognisable status'),
		});
	});
});
