// The Media Generation Trigger under hostile callers and a misbehaving service, through n8n-core's
// real WebhookContext and WorkflowExecute (test/harness/webhook.ts), over real HTTP: signed
// references, the 503 default, the per-trigger status-read budget, the negative cache, the
// answer bound, scrubbing, and duplicate suppression under concurrency and restarts.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { ANSWER_WITHIN_MS } from '../../nodes/MediaGenerationTrigger/handler';
import { SIGNING_KEY_REFRESH_MS } from '../../nodes/MediaGenerationTrigger/memory';
import { URL_READ_LIMITS } from '../../nodes/MediaGenerationTrigger/statusReads';
import { signCallbackUrl, triggerWebhookIdOf } from '../../nodes/shared/callbackUrl';
import { triggerWorkflow } from '../harness';
import { HarnessCredentialsHelper, credentialResolutions } from '../harness/credentials';
import { startCallbackReceiver, type CallbackReceiver } from '../harness/webhook';
import { startSimulator, type Simulator, type SimulatorOptions } from '../simulator';
import { client } from '../simulator/client';

/** Measured figures go to stdout (printed by jest's runner, read by people, not asserted). */
const report = (line: string) => process.stdout.write(`${line}\n`);

jest.setTimeout(60_000);

const API_KEY = `sk-${randomBytes(12).toString('hex')}`;
const signed = (url: string, key = API_KEY) => signCallbackUrl(url, key);

interface Setup {
	sim: Simulator;
	receiver: CallbackReceiver;
}
const open: Array<{ close(): Promise<void> }> = [];

async function setup(
	parameters: INodeParameters = {},
	simOptions: SimulatorOptions = {},
): Promise<Setup> {
	const sim = await startSimulator({ apiKey: API_KEY, defaultDurationMs: 30, ...simOptions });
	const receiver = await startCallbackReceiver({
		workflow: triggerWorkflow(parameters),
		// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
		credentials: {
			mediaGenerationApi: { apiKey: API_KEY, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
		},
	});
	open.push({
		close: async () => {
			await sim.idle();
			await receiver.close();
			await sim.close();
		},
	});
	return { sim, receiver };
}

afterEach(async () => {
	for (const o of open.splice(0)) await o.close();
});

/** A finished task at the service whose own callback has not been sent (the test sends it). */
/** Sends a task's own callback once; its answer and how long it took, reported. */
async function timedCallback(s: Setup, taskId: string, what: string) {
	const started = Date.now();
	const entry = await s.sim.sendCallback(taskId);
	const took = Date.now() - started;
	report(
		`[trigger] answer with ${what}: HTTP ${entry.status} after ${took} ms (bound ${ANSWER_WITHIN_MS} ms)`,
	);
	return { entry, took };
}

async function finishedTask(s: Setup, ref = 'row-1', prompt = 'fox [sim:never]'): Promise<string> {
	const id = await client(s.sim).create(
		s.sim.imageModelId,
		{ prompt },
		{
			callback_url: signed(s.receiver.callbackUrl({ ref })),
		},
	);
	const task = s.sim.task(id)!;
	task.outcome = 'finish';
	task.callbackDone = true;
	s.sim.clock.advance(60_000);
	return id;
}

const statusReads = (sim: Simulator) => sim.requests.filter((r) => r.endpoint === 'status').length;
const body = (taskId: string) => ({ code: 200, data: { task_id: taskId, status: 'finished' } });

describe('the callback reference is authenticated', () => {
	it('a forged reference on a real task is refused (401) before any status read; the genuine callback still starts the one execution', async () => {
		const s = await setup();
		const taskId = await finishedTask(s, 'row-genuine');
		const genuineUrl = s.sim.task(taskId)!.callbackUrl!;
		// The attacker knows the task id and the trigger URL, and tries their own reference:
		// unsigned, with the genuine signature, and with a signature of their own making.
		const sig = new URL(genuineUrl).searchParams.get('sig')!;
		const forgedUrls = [
			s.receiver.callbackUrl({ ref: 'row-evil' }),
			s.receiver.callbackUrl({ ref: 'row-evil', sig }),
			signed(s.receiver.callbackUrl({ ref: 'row-evil' }), 'sk-attackers-own-key'),
			`${genuineUrl}&ref=row-evil`.replace(/ref=row-genuine&?/, ''),
		];
		for (const url of forgedUrls) {
			const entry = await s.sim.sendCallback(taskId, { url, body: body(taskId) });
			expect(entry.status).toBe(401);
		}
		expect(statusReads(s.sim)).toBe(0);
		const genuine = await s.sim.sendCallback(taskId);
		expect(genuine.status).toBe(200);
		const deliveries = await s.receiver.waitFor(forgedUrls.length + 1);
		const executions = await s.receiver.executions();
		expect(executions).toHaveLength(1);
		const [item] = executions[0].outputOf('Downstream');
		expect(item.json).toMatchObject({
			task_id: taskId,
			reference: 'row-genuine',
			signed: true,
			verified: true,
		});
		// No answer quotes the signature.
		expect(JSON.stringify(deliveries.map((d) => d.answer))).not.toContain(sig);
	});

	it("a validly signed URL of another task posted with this task's id before this task's own callback: one run, and this task's own callback a duplicate (the one residual of one run per task, issue 44)", async () => {
		const s = await setup();
		const mine = await finishedTask(s, 'row-mine');
		const other = await finishedTask(s, 'row-other');
		// A URL (of `other`) leaked before its own callback, posted with `mine`'s id first: the
		// trigger cannot tell which URL `mine` was submitted with (the service does not say), so
		// the first URL to bring the task takes its one run.
		const leaked = await s.sim.sendCallback(mine, {
			url: s.sim.task(other)!.callbackUrl!,
			body: body(mine),
		});
		const own = await s.sim.sendCallback(mine);
		expect([leaked.status, own.status]).toEqual([200, 200]);
		const [, second] = await s.receiver.waitFor(2);
		expect(second.answer).toEqual({ received: true, duplicate: true, task_id: mine });
		const refs = (await s.receiver.executions()).map(
			(e) => e.outputOf('Downstream')[0].json.reference,
		);
		expect(refs).toEqual(['row-other']);
	});

	it("the trigger's signing key is used without reading the credential each time, yet a changed API key counts within seconds", async () => {
		const sim = await startSimulator({ apiKey: API_KEY, defaultDurationMs: 30 });
		const credentials = {
			mediaGenerationApi: { apiKey: API_KEY, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
		};
		const receiver = await startCallbackReceiver({ workflow: triggerWorkflow(), credentials });
		open.push({
			close: async () => {
				await receiver.close();
				await sim.close();
			},
		});
		const forged = (url: string, id = `task_${randomBytes(6).toString('hex')}`) =>
			sim.sendCallback(id, { url, body: body(id) });
		expect((await forged(signed(receiver.callbackUrl({ ref: 'a' })))).status).toBe(404);
		// The user puts another key in the credential: URLs signed with it are accepted once the
		// key read is older than SIGNING_KEY_REFRESH_MS (the status read then uses it; this
		// simulator knows only the first key: 503).
		const otherKey = `sk-${randomBytes(12).toString('hex')}`;
		credentials.mediaGenerationApi.apiKey = otherKey;
		await new Promise((r) => setTimeout(r, SIGNING_KEY_REFRESH_MS));
		const withNewKey = await forged(signed(receiver.callbackUrl({ ref: 'b' }), otherKey));
		expect(withNewKey.status).toBe(503);
		// The limit stated in docs/security.md (issue 51, finding 4): a URL signed with the key
		// before the change is refused from then on (no grace period for the old key).
		expect((await forged(signed(receiver.callbackUrl({ ref: 'old' })))).status).toBe(401);
		const [, d] = await receiver.waitFor(2);
		expect(String((d.answer as IDataObject).error)).toMatch(/Could not confirm task .*HTTP 401/);
		// A signature of neither key is refused.
		const wrong = await forged(signed(receiver.callbackUrl({ ref: 'c' }), 'sk-attackers-own-key'));
		expect(wrong.status).toBe(401);
	});

	it('200 well-formed but wrong signatures cost at most a few credential reads, not one each (issue 45, finding 3)', async () => {
		const s = await setup();
		const reads = () => credentialResolutions.get('mediaGenerationApi') ?? 0;
		// A genuine callback first: the key is read and cached, as on a trigger in use.
		const genuine = await finishedTask(s, 'row-genuine');
		expect((await s.sim.sendCallback(genuine)).status).toBe(200);
		const before = reads();
		const started = Date.now();
		const answers: number[] = [];
		for (let wave = 0; wave < 20; wave++) {
			const sent = Array.from({ length: 10 }, async () => {
				const id = `task_${randomBytes(6).toString('hex')}`;
				const url = signed(s.receiver.callbackUrl({ ref: `forged-${id}` }), 'sk-attackers-own-key');
				return (await s.sim.sendCallback(id, { url, body: body(id) })).status;
			});
			answers.push(...(await Promise.all(sent)));
			// Spread over more than one refresh interval: the key is read again, at most once each.
			await new Promise((r) => setTimeout(r, 350));
		}
		const seconds = (Date.now() - started) / 1000;
		const credentialReads = reads() - before;
		report(
			`[trigger] 200 wrong signatures in ${seconds.toFixed(1)} s: ${credentialReads} credential reads (one per ${SIGNING_KEY_REFRESH_MS / 1000} s at most)`,
		);
		expect(answers.every((status) => status === 401)).toBe(true);
		expect(credentialReads).toBeLessThanOrEqual(
			1 + Math.ceil((seconds * 1000) / SIGNING_KEY_REFRESH_MS),
		);
		expect(credentialReads).toBeLessThanOrEqual(5);
		expect(statusReads(s.sim)).toBe(1);
	});

	it('wrong signatures to a trigger whose credential has no API key cost one credential read, not one each (issue 51, finding 6)', async () => {
		const sim = await startSimulator({ apiKey: API_KEY, defaultDurationMs: 30 });
		const receiver = await startCallbackReceiver({
			workflow: triggerWorkflow(),
			credentials: { mediaGenerationApi: { apiKey: '', baseUrl: sim.baseUrl } },
		});
		open.push({
			close: async () => {
				await receiver.close();
				await sim.close();
			},
		});
		const reads = () => credentialResolutions.get('mediaGenerationApi') ?? 0;
		const before = reads();
		const started = Date.now();
		const answers: number[] = [];
		for (let i = 0; i < 20; i++) {
			const id = `task_${randomBytes(6).toString('hex')}`;
			const url = signed(receiver.callbackUrl({ ref: `forged-${id}` }), 'sk-attackers-own-key');
			answers.push((await sim.sendCallback(id, { url, body: body(id) })).status);
		}
		expect(answers.every((status) => status === 401)).toBe(true);
		// The key's absence is remembered for a refresh interval (main's code read it 20 times).
		const seconds = (Date.now() - started) / 1000;
		expect(reads() - before).toBeLessThanOrEqual(
			1 + Math.ceil((seconds * 1000) / SIGNING_KEY_REFRESH_MS),
		);
		expect(reads() - before).toBeLessThanOrEqual(5);
		expect(statusReads(sim)).toBe(0);
	});

	it('unsigned callbacks are refused unless "Accept Unsigned Callbacks" is on', async () => {
		const strict = await setup();
		const id = await finishedTask(strict);
		const refused = await strict.sim.sendCallback(id, {
			url: strict.receiver.callbackUrl({ ref: 'x' }),
			body: body(id),
		});
		expect(refused.status).toBe(401);
		const [d] = await strict.receiver.waitFor(1);
		expect(d.answer).toMatchObject({ error: expect.stringContaining('no "sig" query parameter') });
		expect(statusReads(strict.sim)).toBe(0);

		const lenient = await setup({ options: { acceptUnsigned: true } });
		const id2 = await finishedTask(lenient);
		const accepted = await lenient.sim.sendCallback(id2, {
			url: lenient.receiver.callbackUrl({ ref: 'x' }),
			body: body(id2),
		});
		expect(accepted.status).toBe(200);
		const [d2] = await lenient.receiver.waitFor(1);
		const [item] = (await d2.execution!).outputOf('Downstream');
		expect(item.json).toMatchObject({
			task_id: id2,
			reference: 'x',
			signed: false,
			verified: true,
		});
	});
});

describe('a status read that fails is retried after a "confirming" answer; only the service starts a run', () => {
	// A service that never calls again (issue 27, point 3): a failed read was answered 503 and the
	// genuine callback was lost. Now the trigger answers 202 at once and keeps reading.
	it('20 callbacks for one forged id while the status endpoint fails twice: all answered 202 "confirming", no execution, the reads shared (one per interval)', async () => {
		const s = await setup();
		s.sim.faults.add({ endpoint: 'status', kind: '503', times: 2 });
		const url = signed(s.receiver.callbackUrl({ ref: 'r' }));
		const entries = await Promise.all(
			Array.from({ length: 20 }, () =>
				s.sim.sendCallback('task_forged_20', { url, body: body('task_forged_20') }),
			),
		);
		expect(entries.map((e) => e.status)).toEqual(Array(20).fill(202));
		const delivered = await s.receiver.waitFor(20, 60_000);
		for (const d of delivered) {
			expect(d.answer).toEqual({ received: true, task_id: 'task_forged_20', confirming: true });
			expect(await d.execution).toBeUndefined();
		}
		expect(await s.receiver.executions()).toHaveLength(0);
		// The service called the id unknown: the next callback for it is answered from memory.
		expect(
			(await s.sim.sendCallback('task_forged_20', { url, body: body('task_forged_20') })).status,
		).toBe(404);
		report(
			`[trigger] 20 callbacks for one forged id behind a failing status endpoint: ${statusReads(s.sim)} status reads`,
		);
		// 2 failures, then the 404: 3 reads for 20 callbacks (each callback used to read on its own).
		const SHARED_READS = 3;
		expect(statusReads(s.sim)).toBe(SHARED_READS);
	});

	it('a genuine callback while the status endpoint answers 429 (Retry-After: 6) twice: 202 at once, then one run with the confirmed task', async () => {
		const s = await setup({}, { callbackRetries: 0 });
		const taskId = await finishedTask(s);
		s.sim.faults.add({ endpoint: 'status', kind: '429', retryAfter: 6, times: 2 });
		const { entry } = await timedCallback(s, taskId, '429 (Retry-After: 6) twice');
		expect(entry.status).toBe(202);
		const [d] = await s.receiver.waitFor(1, 60_000);
		expect(d.answer).toEqual({ received: true, task_id: taskId, confirming: true });
		const execution = await d.execution;
		expect(execution?.outputOf('Media Generation Trigger')[0].json).toMatchObject({
			task_id: taskId,
			status: 'finished',
			verified: true,
		});
		expect(await s.receiver.executions()).toHaveLength(1);
		expect(statusReads(s.sim)).toBe(3);
	});
});

describe('the answer comes within the bound whatever the service does', () => {
	it.each([
		['429 with Retry-After: 3600', { endpoint: 'status', kind: '429', retryAfter: 3600 }],
		['503 with Retry-After: 3600', { endpoint: 'status', kind: '503', retryAfter: 3600 }],
	] as const)('%s', async (_name, rule) => {
		const s = await setup();
		const taskId = await finishedTask(s);
		s.sim.faults.add({ ...rule });
		const { entry, took } = await timedCallback(s, taskId, _name);
		expect(entry.status).toBe(503);
		// Answered without waiting the hour (at once: the wait is beyond the confirmation window);
		// the margin is for a loaded machine, far from the hour or the 60 s window.
		expect(took).toBeLessThan(30_000);
		const [d] = await s.receiver.waitFor(1);
		expect(d.execution).toBeUndefined();
		expect(String((d.answer as IDataObject).error)).toMatch(
			/beyond the trigger's 60 s confirmation window/,
		);
	});

	it('a status endpoint that takes 8 s: answered "confirming" at the bound, the run starts once the service confirms', async () => {
		// A loaded n8n or a slow service: the genuine callback is not lost (was: 503, and a
		// service that never calls again lost it). Nothing starts before the service confirms.
		const s = await setup();
		const taskId = await finishedTask(s);
		const SLOW_MS = 8_000;
		s.sim.faults.add({ endpoint: 'status', kind: 'slow', delayMs: SLOW_MS, times: 1 });
		const { entry, took } = await timedCallback(s, taskId, 'a status endpoint taking 8 s');
		expect(entry.status).toBe(202);
		// At the bound (5 s), before the read returned: the 8 s tell the code apart, not a margin.
		expect(took).toBeLessThan(SLOW_MS);
		const [d] = await s.receiver.waitFor(1);
		expect(d.answer).toEqual({ received: true, task_id: taskId, confirming: true });
		const execution = await d.execution;
		expect(execution?.outputOf('Media Generation Trigger')[0].json).toMatchObject({
			task_id: taskId,
			status: 'finished',
			verified: true,
		});
	});

	it('answered "confirming", then the service does not know the task: nothing starts', async () => {
		const s = await setup();
		const forged = `task_${randomBytes(8).toString('hex')}`;
		s.sim.faults.add({ endpoint: 'status', kind: 'slow', delayMs: 6_000, times: 1 });
		const url = signed(s.receiver.callbackUrl({ ref: 'row-1' }));
		const entry = await s.sim.sendCallback(forged, { url, body: body(forged) });
		expect(entry.status).toBe(202);
		const [d] = await s.receiver.waitFor(1);
		expect(await d.execution).toBeUndefined();
		expect(await s.receiver.executions()).toHaveLength(0);
	});
});

describe('floods cost a bounded number of status reads', () => {
	it('1,000 callbacks for unknown ids to one URL: at most its allowance of status reads, then 429 at once; replayed ids answered from the negative cache', async () => {
		const s = await setup();
		const url = signed(s.receiver.callbackUrl());
		const ids = Array.from({ length: 1000 }, (_, i) => `task_unknown_${i}`);
		const started = Date.now();
		const statuses: number[] = [];
		for (let i = 0; i < ids.length; i += 50) {
			const batch = ids
				.slice(i, i + 50)
				.map((id) => s.sim.sendCallback(id, { url, body: body(id) }));
			statuses.push(...(await Promise.all(batch)).map((e) => e.status));
		}
		const seconds = (Date.now() - started) / 1000;
		const reads = statusReads(s.sim);
		const allowed = URL_READ_LIMITS.own.burst + Math.ceil(URL_READ_LIMITS.own.perSecond * seconds);
		const count = (code: number) => statuses.filter((c) => c === code).length;
		report(
			`[trigger] flood of 1,000 unknown ids to one URL in ${seconds.toFixed(1)} s: ${reads} status reads (allowance ${allowed}), ${count(404)} × 404, ${count(429)} × 429`,
		);
		expect(count(404) + count(429)).toBe(1000);
		expect(reads).toBeLessThanOrEqual(allowed);
		const throttled = s.receiver.deliveries.find((d) => d.status === 429)!;
		expect(throttled.answer).toMatchObject({
			error: expect.stringContaining('This callback URL has brought more task ids'),
		});

		// The ids found unknown are answered again without a status read.
		const unknown = s.receiver.deliveries.filter((d) => d.status === 404).length;
		const before = statusReads(s.sim);
		const replays = await Promise.all(
			ids.slice(0, 20).map((id) => s.sim.sendCallback(id, { url, body: body(id) })),
		);
		expect(unknown).toBeGreaterThan(0);
		const cached = replays.filter((r) => r.status === 404).length;
		expect(statusReads(s.sim) - before).toBeLessThanOrEqual(20 - cached);
		expect(await s.receiver.executions()).toHaveLength(0);
	});

	it('one forged id sent for 30 simulated minutes beside new forged ids: its URL costs at most 3 + 1 a minute status reads (issue 45, finding 2)', async () => {
		const s = await setup();
		const url = signed(s.receiver.callbackUrl({ ref: 'seen' }));
		// The trigger's clock (Date.now) runs 20 s further between waves: 90 waves, 30 minutes.
		const realNow = Date.now.bind(Date);
		let offset = 0;
		const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
		const forged = 'task_forged_for_ever';
		try {
			for (let wave = 0; wave < 90; wave++) {
				const fresh = `task_forged_${wave}`;
				await s.sim.sendCallback(forged, { url, body: body(forged) });
				await s.sim.sendCallback(fresh, { url, body: body(fresh) });
				offset += 20_000;
			}
		} finally {
			clock.mockRestore();
		}
		const minutes = offset / 60_000;
		const reads = statusReads(s.sim);
		const ofForged = s.sim.requests.filter(
			(r) => r.endpoint === 'status' && r.taskId === forged,
		).length;
		const allowed =
			URL_READ_LIMITS.own.burst + Math.ceil(URL_READ_LIMITS.own.perSecond * 60 * minutes);
		report(
			`[trigger] one forged id and 90 new ones to one URL over ${minutes} simulated minutes: ${reads} status reads (allowance ${allowed}), ${ofForged} of the one id`,
		);
		// 3 + 1 a minute over 30 minutes: 33 status reads (docs/security.md cites this test).
		const MINUTES = 30;
		const ALLOWED_READS = 33;
		expect(minutes).toBe(MINUTES);
		expect(allowed).toBe(ALLOWED_READS);
		expect(reads).toBeLessThanOrEqual(allowed);
		// Answered from memory for KNOWN_TASK_MS after each read: one read per 10 minutes at most.
		const ONE_ID_READS = 4;
		expect(1 + Math.ceil(minutes / 10)).toBe(ONE_ID_READS);
		expect(ofForged).toBeLessThanOrEqual(ONE_ID_READS);
		expect(await s.receiver.executions()).toHaveLength(0);
	});
});

describe('secrets never leave the trigger', () => {
	it('a service error quoting the callback URL: the secret and the signature are scrubbed from the answer and the output', async () => {
		const secret = `s-${randomBytes(6).toString('hex')}`;
		let quoted = '';
		const service = http.createServer((req, res) => {
			// 403: nothing to retry, so "Reject" answers 503 at once, quoting the service.
			res.writeHead(403, { 'content-type': 'application/json' });
			res.end(
				JSON.stringify({
					code: 403,
					message: `callback_url ${quoted} could not be checked (key ${API_KEY})`,
				}),
			);
		});
		await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
		open.push({ close: async () => await new Promise<void>((r) => service.close(() => r())) });
		const baseUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
		for (const onVerifyError of ['reject', 'start']) {
			const receiver = await startCallbackReceiver({
				workflow: triggerWorkflow({ options: { secret, onVerifyError } }),
				// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
				credentials: {
					mediaGenerationApi: { apiKey: API_KEY, baseUrl, allowPrivateFileHosts: true },
				},
			});
			open.push(receiver);
			quoted = signed(receiver.callbackUrl({ ref: 'r1', secret }));
			const sig = new URL(quoted).searchParams.get('sig')!;
			const res = await fetch(quoted, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body('task_1')),
			});
			const text = await res.text();
			const [d] = await receiver.waitFor(1);
			const everything = text + (d.execution ? (await d.execution).dump() : '');
			expect(res.status).toBe(onVerifyError === 'reject' ? 503 : 200);
			if (onVerifyError === 'start') expect(everything).toContain('could not be checked');
			else expect(text).toContain('could not be checked');
			for (const hidden of [secret, sig, API_KEY]) expect(everything).not.toContain(hidden);
		}
	});
});

describe('duplicate suppression under concurrency and restarts', () => {
	it('Verify off: a forged "failed" posted first to a genuine URL does not take the run of the genuine "finished" (issue 51, finding 8)', async () => {
		const s = await setup({ verify: false });
		const taskId = await finishedTask(s, 'row-genuine');
		const url = s.sim.task(taskId)!.callbackUrl!;
		const forged = await s.sim.sendCallback(taskId, {
			url,
			body: { code: 200, data: { task_id: taskId, status: 'failed', error_message: 'forged' } },
		});
		expect(forged.status).toBe(200);
		// The genuine callback still runs (main's code answered it 409 "its failed run already started").
		const genuine = await s.sim.sendCallback(taskId);
		expect(genuine.status).toBe(200);
		const again = await s.sim.sendCallback(taskId);
		expect(again.status).toBe(200);
		await s.receiver.waitFor(3);
		const statuses = [];
		for (const e of await s.receiver.executions()) {
			const [item] = e.outputOf('Downstream');
			statuses.push(item.json.status);
		}
		// One run per status at most: the forged failed one, and the genuine finished one, once.
		expect(statuses.sort()).toEqual(['failed', 'finished']);
	});

	// Issue 52, item 3, point 6: calls that arrive while the Trigger reads its credential share
	// that one read (SigningKeys.read; in n8n a database read) and go on together: each passes
	// the early duplicate check before either takes the task. The check again at take time is
	// what leaves the task one run.
	it('Verify off: a "failed" arriving with the genuine "finished", both held by one credential read: one run, the finished one', async () => {
		const s = await setup({ verify: false });
		const taskId = await finishedTask(s, 'row-together');
		const url = s.sim.task(taskId)!.callbackUrl!;
		const read = HarnessCredentialsHelper.prototype.getDecrypted;
		let reads = 0;
		const slow = jest
			.spyOn(HarnessCredentialsHelper.prototype, 'getDecrypted')
			.mockImplementation(async function (this: HarnessCredentialsHelper, ...args) {
				reads += 1;
				await new Promise((r) => setTimeout(r, 400));
				return await read.apply(this, args);
			});
		let answers;
		try {
			const genuine = s.sim.sendCallback(taskId);
			const deadline = Date.now() + 10_000;
			while (reads === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
			expect(reads).toBe(1);
			const failed = s.sim.sendCallback(taskId, {
				url,
				body: { code: 200, data: { task_id: taskId, status: 'failed', error_message: 'x' } },
			});
			answers = await Promise.all([genuine, failed]);
		} finally {
			slow.mockRestore();
		}
		expect(answers.map((a) => a.status)).toEqual([200, 200]);
		const [first, second] = await s.receiver.waitFor(2);
		expect(first.answer).toMatchObject({ received: true, task_id: taskId });
		expect(first.answer).not.toHaveProperty('duplicate');
		// Was, without the check at take time: a second run, "failed", of the finished task.
		expect(second.answer).toEqual({ received: true, duplicate: true, task_id: taskId });
		const runs = await s.receiver.executions();
		expect(runs.map((e) => e.outputOf('Downstream')[0].json.status)).toEqual(['finished']);
		// Both calls waited for the same read: neither had passed the early check alone.
		expect(reads).toBe(1);
	});

	it('10 callbacks arriving together are all remembered; after a restart, replaying them starts nothing', async () => {
		const s = await setup();
		const ids = await Promise.all(
			Array.from({ length: 10 }, (_, i) => finishedTask(s, `row-${i}`)),
		);
		// Each callback three times, all 30 at once.
		const first = await Promise.all([...ids, ...ids, ...ids].map((id) => s.sim.sendCallback(id)));
		// 202 "confirming": a call answered under a burst before its status read (issue 51).
		expect(first.filter((e) => e.status !== 200 && e.status !== 202)).toEqual([]);
		await s.receiver.waitFor(30);
		expect(await s.receiver.executions()).toHaveLength(10);
		const stored = s.receiver.staticData()['node:Media Generation Trigger'] as IDataObject;
		expect(Object.keys(stored.deliveries as IDataObject)).toHaveLength(10);

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
		open.push(restarted);
		// The URLs carry the restarted receiver's address, the same query (ref, sig).
		const replays = await Promise.all(
			ids.map((id) => {
				const original = new URL(s.sim.task(id)!.callbackUrl!);
				const url = new URL(restarted.url);
				url.search = original.search;
				return s.sim.sendCallback(id, { url: url.toString() });
			}),
		);
		expect(replays.map((e) => e.status)).toEqual(Array(10).fill(200));
		const answers = (await restarted.waitFor(10)).map((d) => d.answer as IDataObject);
		expect(answers.every((a) => a.duplicate === true)).toBe(true);
		expect(await restarted.executions()).toHaveLength(0);
	});
});
