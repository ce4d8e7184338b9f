// The Trigger under a flood (issue 35), through n8n-core's real WebhookContext and
// WorkflowExecute over real HTTP: forged callbacks cannot drain the status-read budget genuine
// callbacks need, and a slow file host cannot hold a genuine callback's run beyond its
// Download Deadline.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { PENDING_PER_URL, URL_READ_LIMITS } from '../../nodes/MediaGenerationTrigger/statusReads';
import { signCallbackUrl } from '../../nodes/shared/callbackUrl';
import { triggerWorkflow } from '../harness';
import { startCallbackReceiver, type CallbackReceiver } from '../harness/webhook';
import { startSimulator, type Simulator } from '../simulator';
import { client } from '../simulator/client';

const report = (line: string) => process.stdout.write(`${line}\n`);

jest.setTimeout(60_000);

const API_KEY = `sk-${randomBytes(12).toString('hex')}`;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
	for (const o of open.splice(0).reverse()) await o.close();
});

async function setup(
	parameters: INodeParameters,
): Promise<{ sim: Simulator; receiver: CallbackReceiver }> {
	const sim = await startSimulator({ apiKey: API_KEY, defaultDurationMs: 30 });
	const receiver = await startCallbackReceiver({
		workflow: triggerWorkflow(parameters),
		// allowPrivateFileHosts: the file hosts run on this machine (127.0.0.1).
		credentials: {
			mediaGenerationApi: { apiKey: API_KEY, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
		},
	});
	open.push(sim, { close: async () => await receiver.close() }, { close: () => sim.idle() });
	return { sim, receiver };
}

/** `n` finished tasks at the service, submitted without a reference, whose callbacks the test sends. */
async function finishedTasks(sim: Simulator, receiver: CallbackReceiver, n: number) {
	const ids = await Promise.all(
		Array.from({ length: n }, async () =>
			client(sim).create(
				sim.imageModelId,
				{ prompt: 'fox [sim:never]' },
				{ callback_url: signCallbackUrl(receiver.callbackUrl(), API_KEY) },
			),
		),
	);
	for (const id of ids) {
		const task = sim.task(id)!;
		task.outcome = 'finish';
		task.callbackDone = true;
	}
	sim.clock.advance(60_000);
	return ids;
}

const forgedId = () => `task_${randomBytes(8).toString('hex')}`;
const body = (taskId: string) => ({ code: 200, data: { task_id: taskId, status: 'finished' } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a flood of forged callbacks cannot cost a genuine callback its run', () => {
	it("500 forged callbacks at 50/s (to a genuine URL that was seen, and unsigned) among 20 genuine ones: 20 runs, each once, no forged run, the forged ids read at most the URLs' allowances", async () => {
		// The flood docs/reliability.md cites (bound figures).
		const FORGED = 500;
		const FORGED_PER_SECOND = 50;
		const GENUINE = 20;
		// Accept Unsigned on: forged callbacks need no signature at all.
		const { sim, receiver } = await setup({ options: { acceptUnsigned: true } });
		const genuine = await finishedTasks(sim, receiver, GENUINE);
		// The attacker has seen one delivered callback URL (genuine[0]'s) and floods it with task
		// ids of its making, and floods the unsigned URL too.
		const first = await sim.sendCallback(genuine[0]);
		expect(first.status).toBe(200);
		const seen = sim.task(genuine[0])!.callbackUrl!;
		const unsigned = receiver.callbackUrl();
		const started = Date.now();
		const sent: Array<Promise<{ genuine: boolean; status: number }>> = [];
		for (let i = 0; i < FORGED; i++) {
			const id = forgedId();
			const url = i % 2 ? seen : unsigned;
			sent.push(
				sim
					.sendCallback(id, { url, body: body(id) })
					.then((e) => ({ genuine: false, status: e.status })),
			);
			// The other 19 genuine callbacks, one every 25 forged ones.
			if (i % 25 === 12 && i < 475) {
				const id = genuine[1 + Math.floor(i / 25)];
				sent.push(sim.sendCallback(id).then((e) => ({ genuine: true, status: e.status })));
			}
			await sleep(Math.max(0, started + ((i + 1) * 1000) / FORGED_PER_SECOND - Date.now()));
		}
		const answers = await Promise.all(sent);
		const seconds = (Date.now() - started) / 1000;
		await receiver.waitFor(receiver.deliveries.length, 60_000);

		const runs = (await receiver.executions()).map((e) =>
			String(e.outputOf('Downstream')[0]?.json.task_id),
		);
		const genuineSet = new Set(genuine);
		const forgedReads = sim.requests.filter(
			(r) => r.endpoint === 'status' && r.taskId !== undefined && !genuineSet.has(r.taskId),
		).length;
		const count = (code: number) => answers.filter((a) => !a.genuine && a.status === code).length;
		report(
			`[trigger] flood: 500 forged in ${seconds.toFixed(1)} s beside 20 genuine: ${runs.length} runs, ${forgedReads} status reads for forged ids, forged answered ${count(404)} × 404, ${count(429)} × 429, ${count(202)} × 202; genuine answered ${JSON.stringify(answers.filter((a) => a.genuine).map((a) => a.status))}`,
		);
		expect(runs.sort()).toEqual([...genuine].sort());
		expect(runs).toHaveLength(GENUINE);
		expect(answers.filter((a) => !a.genuine)).toHaveLength(FORGED);
		// The flood lasted its pace.
		expect(seconds).toBeGreaterThanOrEqual(FORGED / FORGED_PER_SECOND);
		// At most the allowance of each URL the flood used: the seen URL's and the unsigned one's.
		const allowance = (limits: { burst: number; perSecond: number }) =>
			limits.burst + Math.ceil(limits.perSecond * seconds);
		expect(forgedReads).toBeLessThanOrEqual(
			allowance(URL_READ_LIMITS.own) + allowance(URL_READ_LIMITS.shared),
		);
		// Delivered: 200, or 202 "confirming" when answered before its confirming read (issue 51);
		// each ran once (runs above).
		expect(
			answers.filter((a) => a.genuine).every((a) => a.status === 200 || a.status === 202),
		).toBe(true);
	});
});

describe("a URL's places in the trigger's read line are capped (issue 45, finding 2)", () => {
	it('with the budget spent, a flood through the shared unsigned URL holds at most PENDING_PER_URL.shared places; a genuine callback on its own URL still gets its run', async () => {
		const { sim, receiver } = await setup({ options: { acceptUnsigned: true } });
		const [genuine] = await finishedTasks(sim, receiver, 1);
		// Spend the trigger's budget (200 at once, then 10 a second): 3 forged ids through each of
		// 74 URLs the node signed (each URL's own allowance is 3).
		const spend = Array.from({ length: 74 }, async () => {
			const url = signCallbackUrl(receiver.callbackUrl(), API_KEY);
			for (let k = 0; k < 3; k++) {
				const id = forgedId();
				await sim.sendCallback(id, { url, body: body(id) });
			}
		});
		await Promise.all(spend);
		// Now 40 forged callbacks at once through the unsigned URL (its allowance: 40 at once).
		const unsigned = receiver.callbackUrl();
		const flood = await Promise.all(
			Array.from({ length: 40 }, async () => {
				const id = forgedId();
				const entry = await sim.sendCallback(id, { url: unsigned, body: body(id) });
				return { id, status: entry.status };
			}),
		);
		const own = await sim.sendCallback(genuine);
		await receiver.waitFor(receiver.deliveries.length, 60_000);
		const answersOf = (ids: Set<string>) =>
			receiver.deliveries.filter((d) => ids.has(String((d.answer as IDataObject)?.task_id ?? '')));
		const floodIds = new Set(flood.map((f) => f.id));
		const waited = answersOf(floodIds).filter((d) => d.status === 202).length;
		const capped = receiver.deliveries.filter((d) =>
			/This callback URL already has \d+ callbacks waiting/.test(
				String((d.answer as IDataObject)?.error ?? ''),
			),
		).length;
		report(
			`[trigger] line: 40 unsigned forged callbacks with the budget spent: ${waited} waited in line (cap ${PENDING_PER_URL.shared}), ${capped} answered 503 for the URL's places; genuine answered ${own.status}`,
		);
		expect(waited).toBeLessThanOrEqual(PENDING_PER_URL.shared);
		expect(capped).toBeGreaterThan(0);
		expect([200, 202]).toContain(own.status);
		const runs = (await receiver.executions()).map((e) =>
			String(e.outputOf('Downstream')[0]?.json.task_id),
		);
		expect(runs).toEqual([genuine]);
	});
});

/** A file host that answers the headers at once, then sends nothing. */
async function slowFileHost(): Promise<{ url: string; close(): Promise<void> }> {
	const sockets = new Set<import('node:net').Socket>();
	const server = http.createServer((_req, res) => {
		res.writeHead(200, { 'content-type': 'image/png', 'content-length': '1000000' });
		res.write(Buffer.alloc(10));
	});
	server.on('connection', (s) => {
		sockets.add(s);
		s.on('close', () => sockets.delete(s));
	});
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		close: async () => {
			for (const s of sockets) s.destroy();
			await new Promise<void>((r) => server.close(() => r()));
		},
	};
}

describe('a slow file host cannot hold the Trigger', () => {
	it("4 forged callbacks listing 20 slow files each (Verify off) cannot delay a genuine callback's run beyond its Download Deadline", async () => {
		const host = await slowFileHost();
		const { sim, receiver } = await setup({ verify: false, downloadMinutes: 0.05 });
		open.push(host);
		const [taskId] = await finishedTasks(sim, receiver, 1);
		const url = sim.task(taskId)!.callbackUrl!;
		const slowFiles = (id: string, n: number) =>
			Array.from({ length: n }, (_, k) => ({
				file_url: `${host.url}/${id}/${k}.png`,
				file_type: 'image',
			}));
		const forged = Array.from({ length: 4 }, () => {
			const id = forgedId();
			return sim.sendCallback(id, {
				url,
				body: { code: 200, data: { task_id: id, status: 'finished', files: slowFiles(id, 20) } },
			});
		});
		await sleep(200);
		const sentAt = Date.now();
		// The genuine task's own file is on the slow host too: its download cannot end before the
		// host's 30 s stall window, so its run starts at the Download Deadline, every time, without
		// its files and with the error that says how to fetch them.
		const entry = await sim.sendCallback(taskId, {
			url,
			body: {
				code: 200,
				data: { task_id: taskId, status: 'finished', files: slowFiles(taskId, 1) },
			},
		});
		expect(entry.status).toBe(200);
		expect((await Promise.all(forged)).map((e) => e.status)).toEqual([200, 200, 200, 200]);
		const deadlineMs = 0.05 * 60_000;
		// Without the deadline, a download from this host ends only when its 30 s stall window
		// does: every call ends, and every run starts, well before that, whatever the load (the
		// margin is for the machine, the 30 s are what tells the code apart).
		const within = deadlineMs + 15_000;
		await receiver.waitFor(5, within);
		const delivery = receiver.deliveries.find(
			(d) => (d.answer as IDataObject)?.task_id === taskId,
		)!;
		const run = await delivery.execution!;
		const startedAfter = delivery.webhookMs;
		const item = run.outputOf('Media Generation Trigger')[0];
		report(
			`[trigger] slow file host: the genuine run started ${startedAfter} ms after its callback arrived (deadline ${deadlineMs} ms), ${item.binary ? 'with its files' : `without: ${String(item.json.error).slice(0, 120)}`}`,
		);
		expect(Date.now() - sentAt).toBeLessThan(within);
		expect(startedAfter).toBeLessThan(within);
		// The deadline path, taken: not before the deadline, without files, the error naming it.
		expect(startedAfter).toBeGreaterThanOrEqual(deadlineMs - 100);
		expect(item.binary).toBeUndefined();
		expect(item.json.task_id).toBe(taskId);
		expect(item.json.error).toMatch(/Download Deadline \(3 s\).*Task → Download Files/);
		expect(item.json.files).toEqual([expect.objectContaining({ url: expect.any(String) })]);
	});
});
