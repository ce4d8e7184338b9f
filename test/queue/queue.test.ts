// The package in n8n's queue mode, the way users scale n8n out: Redis, PostgreSQL, one main
// process, two workers and two webhook processes behind a round-robin balancer, each process
// with the package installed as a community package in its own user folder, binary data in
// filesystem mode on one shared folder (see cluster.ts and docs/queue-mode.md).
//
// What a user sees is checked: executions read back through n8n's public API, files on the
// shared disk byte for byte, the simulator's request log (what was submitted, how often), the
// workers' own logs ("Worker started execution N") for which process ran what.
//
// One cluster for the whole file (start-up costs about a minute): the tests run in order and
// change the cluster as they go (worker-2 is stopped for the one-worker figure, worker-1 is
// killed, worker-3 replaces it, the main is restarted).
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';

import { signCallbackUrl } from '../../nodes/shared/callbackUrl';
import { mediaChunks, startSimulator, type Simulator } from '../simulator';
import { client } from '../simulator/client';
import { CREDENTIAL_TYPE, removeEmptyRunFolder, type BinaryJson, type ItemJson } from '../e2e/n8n';
import { QueueCluster, type ExecutionSummary, type N8nProcess } from './cluster';
import { durableFlow, generateFlow, submitFlow, triggerFlow, twoStepFlow, type CredentialRef } from './workflows';

jest.setTimeout(600_000);

const MB = 1024 * 1024;
const WORKER_CONCURRENCY = 5;
const TAG = `q${process.pid}`;
const PATHS = {
	batch: `${TAG}-batch`,
	submit: `${TAG}-submit`,
	retry: `${TAG}-retry`,
	onePerCall: `${TAG}-one`,
	twoStep: `${TAG}-two`,
	killOne: `${TAG}-kill`,
	timeout: `${TAG}-timeout`,
	durable: `${TAG}-durable`,
};
const TRIGGER_WEBHOOK_ID = randomUUID();

let sim: Simulator;
let cluster: QueueCluster;
const wf: Record<'batch' | 'trigger' | 'submit' | 'retry' | 'onePerCall' | 'twoStep' | 'killOne' | 'timeout' | 'durable', string> = {
	batch: '',
	trigger: '',
	submit: '',
	retry: '',
	onePerCall: '',
	twoStep: '',
	killOne: '',
	timeout: '',
	durable: '',
};
/** Figures printed at the end (and by each test as it measures them). */
const figures: Record<string, unknown> = {};

function say(line: string) {
	process.stdout.write(`[queue] ${line}\n`);
}

const mb = (bytes: number) => Math.round(bytes / MB);

function sha256(chunks: Iterable<Buffer>): string {
	const h = createHash('sha256');
	for (const c of chunks) h.update(c);
	return h.digest('hex');
}

/** POST JSON through the balancer (i.e. to a webhook process); returns status and parsed body. */
async function post(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
	const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
	const text = await res.text();
	let parsed: unknown = text;
	try {
		parsed = JSON.parse(text);
	} catch {
		// Not JSON: keep the text.
	}
	return { status: res.status, body: parsed };
}

const hook = (path: string) => `${cluster.balancer.url}/webhook/${path}`;
const triggerPath = `${TRIGGER_WEBHOOK_ID}/media-generation`;

/** How many tasks the service created per prompt (a prompt is unique per row in these tests). */
function submissionsByPrompt(prefix: string): Map<string, number> {
	const counts = new Map<string, number>();
	for (const t of sim.tasks()) if (t.prompt.startsWith(prefix)) counts.set(t.prompt, (counts.get(t.prompt) ?? 0) + 1);
	return counts;
}

function lastItems(execution: ExecutionSummary, node: string): ItemJson[] {
	const runs = execution.data?.resultData.runData[node];
	if (!runs?.length) return [];
	return runs[runs.length - 1].data?.main[0] ?? [];
}

/** Every binary of the item is in the shared store, byte for byte what the service served. */
function expectFilesAsServed(item: ItemJson) {
	const task = sim.task(String(item.json.task_id));
	expect(task).toBeDefined();
	const binaries = Object.values(item.binary ?? {}) as BinaryJson[];
	expect(binaries).toHaveLength(task!.files.length);
	for (const [i, file] of task!.files.entries()) {
		const onDisk = cluster.binaryFile(binaries[i]);
		expect(fs.statSync(onDisk).size).toBe(file.size);
		expect(sha256([fs.readFileSync(onDisk)])).toBe(sha256(mediaChunks(file.kind, file.size)));
	}
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, everyMs = 250): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const v = await fn();
		if (v !== undefined && v !== false) return v;
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await new Promise((r) => setTimeout(r, everyMs));
	}
}

/** Peak RSS per process while `fn` runs (sampled every 500 ms). */
async function withMemory<T>(fn: () => Promise<T>): Promise<{ result: T; peaks: Record<string, { self: number; tree: number }> }> {
	const peaks: Record<string, { self: number; tree: number }> = {};
	const take = () => {
		for (const [name, m] of Object.entries(cluster.memory())) {
			const p = (peaks[name] ??= { self: 0, tree: 0 });
			p.self = Math.max(p.self, m.self);
			p.tree = Math.max(p.tree, m.tree);
		}
	};
	take();
	const timer = setInterval(take, 500);
	try {
		const result = await fn();
		take();
		return { result, peaks };
	} finally {
		clearInterval(timer);
	}
}

function memoryLine(peaks: Record<string, { self: number; tree: number }>) {
	return Object.entries(peaks)
		.map(([name, m]) => `${name} ${mb(m.self)} MB${m.tree > m.self + MB ? ` (+runner ${mb(m.tree - m.self)})` : ''}`)
		.join(', ');
}

beforeAll(async () => {
	const started = Date.now();
	sim = await startSimulator({ apiKey: `queue-${process.pid}-secret` });
	cluster = await QueueCluster.create({ workerConcurrency: WORKER_CONCURRENCY });
	await cluster.explain(async () => {
		await cluster.startMain();
		await cluster.setUpOwner();
		const credential: CredentialRef = {
			name: 'Media Generation (simulator)',
			// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
			id: await cluster.createCredential('Media Generation (simulator)', CREDENTIAL_TYPE, { apiKey: sim.apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: true }),
		};
		// Published before the webhook processes start; they look the webhooks up in the database.
		wf.batch = await cluster.createWorkflow(generateFlow('queue batch', PATHS.batch, credential, { generate: { options: {} } }));
		wf.trigger = await cluster.createWorkflow(triggerFlow('queue trigger', TRIGGER_WEBHOOK_ID, credential));
		wf.submit = await cluster.createWorkflow(submitFlow('queue submit', PATHS.submit, credential, hook(triggerPath)));
		wf.retry = await cluster.createWorkflow(
			generateFlow('queue retry', PATHS.retry, credential, {
				generate: { options: { timeoutMinutes: 0.03 } },
				node: { retryOnFail: true, maxTries: 3, waitBetweenTries: 0 },
			}),
		);
		wf.onePerCall = await cluster.createWorkflow(generateFlow('queue one-step', PATHS.onePerCall, credential, { respond: 'onReceived' }));
		wf.twoStep = await cluster.createWorkflow(twoStepFlow('queue two-step', PATHS.twoStep, credential, true));
		wf.killOne = await cluster.createWorkflow(
			generateFlow('queue one-step with callback', PATHS.killOne, credential, {
				respond: 'onReceived',
				generate: { options: { callbackUrl: hook(triggerPath), callbackReference: '={{ $json.ref }}' } },
			}),
		);
		wf.timeout = await cluster.createWorkflow(
			generateFlow('queue timeout', PATHS.timeout, credential, { respond: 'onReceived', generate: { options: { timeoutMinutes: 0.03 } } }),
		);
		wf.durable = await cluster.createWorkflow(durableFlow('queue durable wait', PATHS.durable, credential));
		await cluster.addWorker();
		await cluster.addWorker();
		await cluster.addWebhook();
		await cluster.addWebhook();
	});
	figures.startup = { totalMs: Date.now() - started, ...cluster.timings };
	say(`cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(cluster.timings)} (ms); postgres runs as ${cluster.postgres.runsAs}`);
});

afterAll(async () => {
	say(`figures: ${JSON.stringify(figures)}`);
	await cluster?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

describe('polling through workers', () => {
	test('a batch of 50 runs on one worker: each task submitted once, every file in the shared store', () =>
		cluster.explain(async () => {
			const prefix = `${TAG} batch`;
			const rows = Array.from({ length: 50 }, (_, i) => ({
				prompt: `${prefix} ${i} [sim:duration=${300 + ((i * 97) % 1500)}] [sim:size=${20_000 + i * 3_000}]`,
			}));
			const t0 = Date.now();
			const res = await post(hook(PATHS.batch), { rows });
			const wall = Date.now() - t0;
			expect(res.status).toBe(200);
			const answered = res.body as Array<Record<string, unknown>>;
			expect(answered).toHaveLength(50);
			expect(answered.every((i) => i.status === 'finished')).toBe(true);

			const [execution] = await cluster.endedExecutions(wf.batch, 1);
			expect(execution.status).toBe('success');
			const ranOn = cluster.workersThatRan(execution.id);
			expect(ranOn).toHaveLength(1);
			// Neither the main nor a webhook process ran it.
			for (const p of [cluster.main, ...cluster.webhooks]) expect(p.logText()).not.toContain(`Worker started execution ${execution.id} (job`);
			const items = lastItems(execution, 'Generate');
			expect(items).toHaveLength(50);
			for (const item of items) expectFilesAsServed(item);
			// Each row became exactly one task at the service.
			const counts = submissionsByPrompt(prefix);
			expect(counts.size).toBe(50);
			expect([...counts.values()].every((n) => n === 1)).toBe(true);
			expect(sim.requests.filter((r) => r.endpoint === 'submit' && String((r.body as { input?: { prompt?: string } })?.input?.prompt ?? '').startsWith(prefix))).toHaveLength(50);
			const balancer = cluster.balancer.log.filter((r) => r.path.includes(PATHS.batch));
			figures.batch50 = { wallMs: wall, worker: ranOn[0], webhookProcess: balancer.map((b) => b.backend) };
			say(`batch of 50: ${wall} ms through ${balancer[0]?.backend}, execution ${execution.id} ran on ${ranOn[0]}`);
		}));
});

/** How many times a worker's log says it started (or resumed) this execution: `Worker started execution N (job …)`. */
function workerRuns(executionId: string): Record<string, number> {
	const re = new RegExp(`Worker started execution ${executionId} \\(job`, 'g');
	const runs: Record<string, number> = {};
	for (const w of cluster.workers) {
		const n = (w.logText().match(re) ?? []).length;
		if (n) runs[w.name] = n;
	}
	return runs;
}

describe('durable wait (Park Until Callbacks) through the webhook processes and workers', () => {
	test('parked by a worker, the main restarted, the callbacks spread over both webhook processes: the last one resumes it, a worker finishes it with every file, each task submitted once', () =>
		cluster.explain(async () => {
			const N = 8;
			const prefix = `${TAG} durable`;
			// Ten-minute videos a minute apart: each ends only when the simulator's clock reaches it,
			// so the callbacks come one by one, after the main's restart.
			const rows = Array.from({ length: N }, (_, i) => ({ prompt: `${prefix} ${i} [sim:duration=${600_000 + i * 60_000}] [sim:size=${30_000 + i * 1_000}]`, ref: `durable-${i}` }));
			expect((await post(hook(PATHS.durable), { rows })).status).toBe(200);
			const parked = await waitFor('the execution parked (status waiting)', async () => (await cluster.executions(wf.durable, false)).find((e) => e.status === 'waiting'), 90_000, 500);
			const tasks = sim.tasks().filter((t) => t.prompt.startsWith(prefix)).sort((a, b) => a.durationMs - b.durationMs);
			expect(tasks).toHaveLength(N);
			const ids = new Set(tasks.map((t) => t.id));
			// The resume URL was computed on the worker from WEBHOOK_URL: the balancer.
			for (const t of tasks) expect(t.callbackUrl?.startsWith(`${cluster.balancer.url}/webhook-waiting/${parked.id}?`)).toBe(true);
			const reads = () => sim.requests.filter((r) => r.endpoint === 'status' && r.taskId !== undefined && ids.has(r.taskId)).length;
			const readsAtPark = reads();
			expect(readsAtPark).toBe(N);
			const firstRun = workerRuns(parked.id);
			expect(Object.values(firstRun).reduce((a, b) => a + b, 0)).toBe(1);

			const restartMs = await cluster.restartMain();
			expect((await cluster.execution(parked.id)).status).toBe('waiting');
			// Nothing read while parked, over the restart.
			expect(reads()).toBe(readsAtPark);

			// The tasks end one after another; each callback is answered before the next task ends.
			let lastCallbackAt = 0;
			for (const [i, t] of tasks.entries()) {
				const due = t.createdAt + t.durationMs - sim.clock.now();
				if (due > 0) sim.clock.advance(due + 1);
				await waitFor(`the callback of task ${i}`, () => sim.callbacks.find((c) => c.taskId === t.id && c.status !== 0), 30_000, 50);
				await sim.idle();
				lastCallbackAt = Date.now();
			}
			const readsWhileParked = reads() - readsAtPark;
			const done = await waitFor(
				'the resumed execution to end (it would stay parked until its 30-minute Timeout if the last callback did not resume it)',
				async () => {
					const e = await cluster.execution(parked.id);
					return ['running', 'new', 'waiting'].includes(e.status) ? undefined : e;
				},
				90_000,
				200,
			);
			const resumedToFinishedMs = Date.parse(done.stoppedAt ?? '') - lastCallbackAt;
			expect(done.status).toBe('success');

			// Every file, in input order, each task submitted once.
			const items = lastItems(done, 'Finish');
			expect(items.map((i) => i.json.task_id)).toEqual(tasks.map((t) => t.id));
			expect(items.map((i) => i.json.status)).toEqual(Array(N).fill('finished'));
			for (const item of items) expectFilesAsServed(item);
			const counts = submissionsByPrompt(prefix);
			expect(counts.size).toBe(N);
			expect([...counts.values()].every((n) => n === 1)).toBe(true);
			// Each callback answered 2xx; they went through the balancer to both webhook processes.
			const callbacks = sim.callbacks.filter((c) => ids.has(c.taskId));
			expect(callbacks.every((c) => c.status >= 200 && c.status < 300)).toBe(true);
			const received = cluster.balancer.log.filter((r) => r.path.startsWith(`/webhook-waiting/${parked.id}`));
			expect(received).toHaveLength(callbacks.length);
			const perProcess: Record<string, number> = {};
			for (const r of received) perProcess[r.backend] = (perProcess[r.backend] ?? 0) + 1;
			expect(Object.keys(perProcess).sort()).toEqual(cluster.webhooks.map((w) => w.name).sort());
			// The resumed run ran on a worker (a second "started execution" line), not on the main.
			const runs = workerRuns(parked.id);
			expect(Object.values(runs).reduce((a, b) => a + b, 0)).toBe(2);
			expect(cluster.main.logText()).not.toContain(`Worker started execution ${parked.id} (job`);
			// Status reads: one per task when parking, none between parking and the first callback
			// (checked above, over the restart). While parked, a webhook process (which did not
			// park the execution) reads its callback's task, learns each task the other process
			// confirmed at most once, and reads at most as many still-pending tasks as it learned,
			// plus one, per callback: at most 2 × (processes + 1) reads per task. None after the
			// resume (the finishing node takes the confirmed tasks as they are).
			expect(readsWhileParked).toBeLessThanOrEqual(2 * (cluster.webhooks.length + 1) * N);
			expect(reads() - readsAtPark - readsWhileParked).toBe(0);

			figures.durableWait = {
				tasks: N,
				mainRestartMs: restartMs,
				statusReads: { atPark: readsAtPark, whileParked: readsWhileParked, afterResume: 0 },
				callbacksPerWebhookProcess: perProcess,
				workerRuns: runs,
				lastCallbackToFinishedMs: resumedToFinishedMs,
			};
			say(
				`durable wait: execution ${parked.id} parked with ${N} tasks, main restarted in ${(restartMs / 1000).toFixed(1)} s while parked; ` +
					`callbacks per webhook process ${JSON.stringify(perProcess)}; worker runs ${JSON.stringify(runs)}; ` +
					`status reads ${readsAtPark} at park, ${readsWhileParked} while parked, 0 after; last callback → resumed execution finished ${resumedToFinishedMs} ms`,
			);
		}));
});

/**
 * Trigger executions per task id (of the given tasks), read back through the public API: waits
 * for at least `atLeast` ended executions, then until no new one appears for 3 s (duplicates
 * that start late are counted too).
 */
async function triggerRunsByTask(taskIds: string[], atLeast: number, timeoutMs = 60_000): Promise<Map<string, ExecutionSummary[]>> {
	const wanted = new Set(taskIds);
	const collect = async () => {
		const all = await cluster.executions(wf.trigger, true);
		const byTask = new Map<string, ExecutionSummary[]>();
		let unfinished = 0;
		for (const e of all) {
			const [item] = lastItems(e, 'Media Generation Trigger');
			const id = String(item?.json.task_id ?? '');
			if (!wanted.has(id)) continue;
			if (['running', 'new', 'waiting'].includes(e.status)) unfinished++;
			else byTask.set(id, [...(byTask.get(id) ?? []), e]);
		}
		return { byTask, unfinished, total: [...byTask.values()].reduce((s, l) => s + l.length, 0) };
	};
	let last = await waitFor(`${atLeast} trigger executions`, async () => {
		const c = await collect();
		return c.total >= atLeast && c.unfinished === 0 ? c : undefined;
	}, timeoutMs, 500);
	for (;;) {
		await new Promise((r) => setTimeout(r, 3000));
		const again = await collect();
		if (again.total === last.total && again.unfinished === 0) return again.byTask;
		last = again;
	}
}

/** Finished tasks made straight at the service (no callback URL): callbacks are then posted by hand. */
async function finishedTasks(prefix: string, n: number): Promise<string[]> {
	const api = client(sim);
	const ids = await Promise.all(
		Array.from({ length: n }, (_, i) => api.create(sim.videoModelId, { prompt: `${prefix} ${i} [sim:duration=50]`, aspect_ratio: '16:9', duration: 4 })),
	);
	await Promise.all(ids.map((id) => api.pollToEnd(id)));
	return ids;
}

/** The callback the service would send for a task, posted to one webhook process directly. */
/**
 * The service delivering a task's callback again: the same URL every time, signed as the node
 * signs it (the trigger refuses unsigned callbacks). Every copy is the same request.
 */
function deliver(to: N8nProcess, taskId: string) {
	const url = signCallbackUrl(`${to.baseUrl}/webhook/${triggerPath}?ref=${encodeURIComponent(`redelivered-${taskId}`)}`, sim.apiKey);
	return post(url, { code: 200, msg: 'success', data: sim.view(taskId) });
}

describe('callbacks through the webhook processes', () => {
	test('one trigger execution per task; callbacks spread over both webhook processes; files in the shared store', () =>
		cluster.explain(async () => {
			const prefix = `${TAG} callback`;
			const rows = Array.from({ length: 10 }, (_, i) => ({ ref: `cb-${i}`, prompt: `${prefix} ${i} [sim:duration=${400 + i * 120}]` }));
			const res = await post(hook(PATHS.submit), { rows });
			expect(res.status).toBe(200);
			const taskIds = (res.body as Array<{ task_id: string }>).map((i) => String(i.task_id));
			expect(taskIds).toHaveLength(10);
			const byTask = await triggerRunsByTask(taskIds, 10);
			await sim.idle();
			for (const [index, id] of taskIds.entries()) {
				const runs = byTask.get(id) ?? [];
				expect(runs).toHaveLength(1);
				const [execution] = runs;
				expect(execution.status).toBe('success');
				const [item] = lastItems(execution, 'Media Generation Trigger');
				expect(item.json.reference).toBe(rows[index].ref);
				expectFilesAsServed(item);
				// The rest of the workflow ran on a worker.
				expect(lastItems(execution, 'Received')).toHaveLength(1);
				expect(cluster.workersThatRan(execution.id)).toHaveLength(1);
			}
			// The service's callbacks: each answered 2xx once, each task once.
			const callbacks = sim.callbacks.filter((c) => taskIds.includes(c.taskId));
			expect(callbacks.map((c) => c.taskId).sort()).toEqual([...taskIds].sort());
			expect(callbacks.every((c) => c.status >= 200 && c.status < 300)).toBe(true);
			// They reached both webhook processes (round robin) and no other process.
			const received = cluster.balancer.log.filter((r) => r.path.includes(TRIGGER_WEBHOOK_ID));
			const perProcess: Record<string, number> = {};
			for (const r of received) perProcess[r.backend] = (perProcess[r.backend] ?? 0) + 1;
			expect(Object.keys(perProcess).sort()).toEqual(cluster.webhooks.map((w) => w.name).sort());
			figures.callbacks = { tasks: 10, executions: 10, perWebhookProcess: perProcess };
			say(`callbacks: 10 tasks, 10 executions; per webhook process ${JSON.stringify(perProcess)}`);
		}));

	test('the same callback at once: twice to one process starts one execution; to both processes, measured', () =>
		cluster.explain(async () => {
			const [a, b] = cluster.webhooks;
			const sameProcess = await finishedTasks(`${TAG} dup-same`, 5);
			const bothProcesses = await finishedTasks(`${TAG} dup-both`, 5);
			const answers: Record<string, Array<{ status: number; body: unknown }>> = {};
			// One task at a time, its two copies at the same moment.
			for (const id of sameProcess) answers[id] = await Promise.all([deliver(a, id), deliver(a, id)]);
			for (const id of bothProcesses) answers[id] = await Promise.all([deliver(a, id), deliver(b, id)]);
			for (const list of Object.values(answers)) for (const r of list) expect(r.status).toBe(200);
			const byTask = await triggerRunsByTask([...sameProcess, ...bothProcesses], 10);
			const count = (ids: string[]) => ids.map((id) => (byTask.get(id) ?? []).length);
			// No callback is lost: every task started at least once.
			for (const n of count([...sameProcess, ...bothProcesses])) expect(n).toBeGreaterThanOrEqual(1);
			// Within one process the second copy is dropped (the process remembers what it handles).
			expect(count(sameProcess)).toEqual([1, 1, 1, 1, 1]);
			// Across processes: at most one execution per process. What the current code does is measured.
			for (const n of count(bothProcesses)) expect(n).toBeLessThanOrEqual(2);
			const acrossProcesses = count(bothProcesses);

			// A burst of different tasks over both processes, then each callback again, later, to the
			// other process: only the static data (one JSON object per workflow, written back whole
			// after each call, last writer wins) can recognise those.
			const burst = await finishedTasks(`${TAG} dup-later`, 10);
			const first = await Promise.all(burst.map((id, i) => deliver(i % 2 ? b : a, id)));
			for (const r of first) expect(r.status).toBe(200);
			const firstRuns = await triggerRunsByTask(burst, 10);
			for (const id of burst) expect((firstRuns.get(id) ?? []).length).toBe(1);
			for (const [i, id] of burst.entries()) expect((await deliver(i % 2 ? a : b, id)).status).toBe(200);
			const burstRuns = await triggerRunsByTask(burst, 10);
			const restarted = [...burstRuns.values()].reduce((s, l) => s + l.length, 0) - 10;

			figures.duplicateCallbacks = {
				sameProcessAtOnce: count(sameProcess),
				bothProcessesAtOnce: acrossProcesses,
				redeliveredLaterToOtherProcess: { tasks: burst.length, startedAgain: restarted },
			};
			say(
				`duplicate callbacks: same process at once → executions per task ${JSON.stringify(count(sameProcess))}; ` +
					`both processes at once → ${JSON.stringify(acrossProcesses)}; ` +
					`burst of ${burst.length} then each again to the other process → ${restarted} started again`,
			);
		}));
});

describe('Retry On Fail on a worker', () => {
	test('the retries run in the same worker process and resume the tasks: each task submitted once', () =>
		cluster.explain(async () => {
			// 4 s of work, 1.8 s of patience per try, 3 tries: the third try succeeds only by resuming.
			const prefix = `${TAG} retry`;
			const rows = Array.from({ length: 3 }, (_, i) => ({ prompt: `${prefix} ${i} [sim:duration=4000]` }));
			const res = await post(hook(PATHS.retry), { rows });
			expect(res.status).toBe(200);
			const [execution] = await cluster.endedExecutions(wf.retry, 1);
			expect(execution.status).toBe('success');
			const items = lastItems(execution, 'Generate');
			expect(items.map((i) => i.json.status)).toEqual(['finished', 'finished', 'finished']);
			for (const item of items) expectFilesAsServed(item);
			expect([...submissionsByPrompt(prefix).values()]).toEqual([1, 1, 1]);
			// Several tries (status reads span the three tries), one worker, one job.
			const reads = sim.requests.filter((r) => r.endpoint === 'status' && items.some((i) => r.taskId === i.json.task_id));
			expect(reads.length).toBeGreaterThan(3);
			expect(cluster.workersThatRan(execution.id)).toHaveLength(1);
			say(`Retry On Fail: execution ${execution.id} on ${cluster.workersThatRan(execution.id)[0]}, 3 tasks, 3 submissions, ${reads.length} status reads`);
		}));
});

/** Figure: 200 tasks of `T`, as 20 executions of 10 (one webhook call each, answered at once). */
const FIGURE = { executions: 20, perExecution: 10, taskMs: 4000 };

async function measureThroughput(label: string) {
	const prefix = `${TAG} figure-${label}`;
	const before = new Set((await cluster.executions(wf.onePerCall, false)).map((e) => e.id));
	const t0 = Date.now();
	const { result: executions, peaks } = await withMemory(async () => {
		const answers = await Promise.all(
			Array.from({ length: FIGURE.executions }, (_, e) =>
				post(hook(PATHS.onePerCall), {
					rows: Array.from({ length: FIGURE.perExecution }, (_, i) => ({ prompt: `${prefix} e${e} i${i} [sim:duration=${FIGURE.taskMs}]` })),
				}),
			),
		);
		for (const a of answers) expect(a.status).toBe(200);
		return await waitFor(
			`${FIGURE.executions} executions of ${label}`,
			async () => {
				const ended = (await cluster.executions(wf.onePerCall, false)).filter((e) => !before.has(e.id) && !['running', 'new', 'waiting'].includes(e.status));
				return ended.length >= FIGURE.executions ? ended : undefined;
			},
			240_000,
			250,
		);
	});
	const wallMs = Math.max(...executions.map((e) => Date.parse(e.stoppedAt ?? ''))) - t0;
	for (const e of executions) expect(e.status).toBe('success');
	const counts = submissionsByPrompt(prefix);
	expect(counts.size).toBe(FIGURE.executions * FIGURE.perExecution);
	expect([...counts.values()].every((n) => n === 1)).toBe(true);
	const perWorker: Record<string, number> = {};
	for (const e of executions) for (const w of cluster.workersThatRan(e.id)) perWorker[w] = (perWorker[w] ?? 0) + 1;
	const figure = { wallMs, ratioToT: +(wallMs / FIGURE.taskMs).toFixed(2), executionsPerWorker: perWorker, peakRssMB: Object.fromEntries(Object.entries(peaks).map(([k, v]) => [k, { self: mb(v.self), withRunner: mb(v.tree) }])) };
	say(`200 tasks × ${FIGURE.taskMs / 1000} s, ${label}: ${(wallMs / 1000).toFixed(1)} s (${figure.ratioToT} × T); executions per worker ${JSON.stringify(perWorker)}; peak RSS: ${memoryLine(peaks)}`);
	return figure;
}

describe("the editor's Retry of a failed execution", () => {
	test('runs the failed node again in a new execution, on any worker: its tasks are submitted again (the error names them)', () =>
		cluster.explain(async () => {
			// 4 s of work, 1.8 s of patience, no Retry On Fail: the execution fails with the task id.
			const prefix = `${TAG} timeout`;
			expect((await post(hook(PATHS.timeout), { rows: [{ prompt: `${prefix} 0 [sim:duration=4000]` }] })).status).toBe(200);
			const [failed] = await cluster.endedExecutions(wf.timeout, 1);
			expect(failed.status).toBe('error');
			const [task] = sim.tasks().filter((t) => t.prompt.startsWith(prefix));
			expect(JSON.stringify(failed.data?.resultData.error ?? {})).toContain(task.id);
			await cluster.retry(failed.id);
			const retried = await waitFor('the retry', async () => {
				const r = (await cluster.executions(wf.timeout, false)).find((e) => String(e.retryOf ?? '') === failed.id && !['running', 'new'].includes(e.status));
				return r ? await cluster.execution(r.id) : undefined;
			});
			// The node's memory of accepted tasks is per execution and per process: a new execution
			// does not have it, so the task is submitted (and billed) again.
			expect([...submissionsByPrompt(prefix).values()]).toEqual([2]);
			figures.editorRetryOfFailedNode = { submissionsPerRow: 2, retryStatus: retried.status, ranOn: cluster.workersThatRan(retried.id) };
			say(`editor Retry of a failed Generate: execution ${retried.id} (${retried.status}) on ${cluster.workersThatRan(retried.id).join(', ')}: the row was submitted a second time`);
		}));
});

describe('throughput and memory', () => {
	test(`200 tasks (${FIGURE.executions} executions × ${FIGURE.perExecution}) with 2 workers, each task submitted once`, () =>
		cluster.explain(async () => {
			expect(cluster.workers.filter((w) => w.running)).toHaveLength(2);
			figures.twoWorkers = await measureThroughput('2 workers');
		}));

	test('the same with one worker (worker-2 stopped gracefully)', () =>
		cluster.explain(async () => {
			await cluster.workers[1].stop();
			expect(cluster.workers.filter((w) => w.running)).toHaveLength(1);
			figures.oneWorker = await measureThroughput('1 worker');
		}));
});

describe('a worker killed mid-poll (SIGKILL)', () => {
	test('its executions end in error and are never re-run; saved progress is wiped; the Callback URL delivers every task to the trigger; Retry submits nothing', () =>
		cluster.explain(async () => {
			// One worker, so that both executions land on it.
			for (const w of cluster.workers.filter((p) => p.running).slice(1)) await w.stop();
			const [victim] = cluster.workers.filter((w) => w.running);
			const oneStep = `${TAG} kill-one`;
			const twoStep = `${TAG} kill-two`;
			const rows = (prefix: string) =>
				Array.from({ length: 5 }, (_, i) => ({ ref: `${prefix.split(' ')[1]}-${i}`, prompt: `${prefix} ${i} [sim:duration=15000]` }));
			// Generate (waits) with the trigger's URL as Callback URL; and the two-step pattern with
			// "Save execution progress".
			expect((await post(hook(PATHS.killOne), { rows: rows(oneStep) })).status).toBe(200);
			expect((await post(hook(PATHS.twoStep), { rows: rows(twoStep) })).status).toBe(200);

			const running = async (workflowId: string) => (await cluster.executions(workflowId, false)).find((e) => e.status === 'running');
			const x = await waitFor('the one-step execution running', () => running(wf.killOne));
			const y = await waitFor('the two-step execution running', () => running(wf.twoStep));
			await waitFor('status reads of all 10 tasks', () => {
				const ids = sim.tasks().filter((t) => t.prompt.startsWith(oneStep) || t.prompt.startsWith(twoStep)).map((t) => t.id);
				return ids.length === 10 && ids.every((id) => sim.requests.some((r) => r.endpoint === 'status' && r.taskId === id)) ? true : undefined;
			});
			// While it runs, the two-step execution shows its task ids (saved after Submit).
			const savedSubmit = await waitFor('the two-step task ids saved', async () => {
				const items = lastItems(await cluster.execution(y.id), 'Submit');
				return items.length === 5 ? items : undefined;
			});
			expect(cluster.workersThatRan(x.id)).toEqual([victim.name]);
			expect(cluster.workersThatRan(y.id)).toEqual([victim.name]);
			const jobs = [cluster.jobOf(x.id)!, cluster.jobOf(y.id)!];

			const killedAt = Date.now();
			await victim.kill();
			// A new worker (a restarted container) takes over the queue.
			const replacement = await cluster.addWorker();
			// Bull notices the dead worker's jobs once their lock expires and fails them: n8n sets
			// maxStalledCount 0, so a stalled job never runs a second time.
			await waitFor("the dead worker's jobs to leave Bull's active list", async () => ((await Promise.all(jobs.map((j) => cluster.jobActive(j)))).some(Boolean) ? undefined : true), 90_000, 500);
			const stalledAfterMs = Date.now() - killedAt;

			// The process that queued them (a webhook process here) gives the job 30 s of grace,
			// then stores the execution as failed, with no node data.
			const ended = async (id: string) =>
				await waitFor(`execution ${id} to end`, async () => {
					const e = await cluster.execution(id);
					return ['running', 'new'].includes(e.status) ? undefined : e;
				}, 120_000, 1000);
			const [endX, endY] = await Promise.all([ended(x.id), ended(y.id)]);
			const endedAfterMs = Date.now() - killedAt;
			for (const e of [endX, endY]) {
				expect(e.status).toBe('error');
				expect(e.data?.resultData.runData ?? {}).toEqual({});
			}
			expect(endX.data?.resultData.error?.message).toMatch(/failed to be processed too many times/);
			// "Save execution progress" does not help: the task ids shown while it ran are gone.
			expect(lastItems(endY, 'Submit')).toHaveLength(0);
			// Nobody re-ran them: one submission per row.
			expect([...submissionsByPrompt(oneStep).values()]).toEqual([1, 1, 1, 1, 1]);
			expect([...submissionsByPrompt(twoStep).values()]).toEqual([1, 1, 1, 1, 1]);

			// The recovery: the tasks kept running at the service, and the one-step rows, which
			// carried the trigger's URL as Callback URL, each arrive in the trigger's workflow with
			// their reference and files.
			const oneStepIds = sim.tasks().filter((t) => t.prompt.startsWith(oneStep)).map((t) => t.id);
			const byTask = await triggerRunsByTask(oneStepIds, 5, 90_000);
			for (const id of oneStepIds) {
				const [run] = byTask.get(id) ?? [];
				expect(run?.status).toBe('success');
				const [item] = lastItems(run, 'Media Generation Trigger');
				expect(item.json.reference).toBe(`kill-one-${sim.task(id)!.prompt.split(' ')[2]}`);
				expectFilesAsServed(item);
			}

			// The editor's Retry of a killed execution (now on the replacement worker) starts from the
			// empty data n8n stored: it ends in error at once and submits nothing.
			await cluster.retry(x.id);
			await cluster.retry(y.id);
			for (const [workflowId, of] of [[wf.killOne, x.id], [wf.twoStep, y.id]]) {
				const retried = (await cluster.executions(workflowId, false)).find((e) => String(e.retryOf ?? '') === of);
				expect(retried?.status).toBe('error');
			}
			expect([...submissionsByPrompt(oneStep).values()]).toEqual([1, 1, 1, 1, 1]);
			expect([...submissionsByPrompt(twoStep).values()]).toEqual([1, 1, 1, 1, 1]);
			// The two-step task ids (lost in n8n) are still readable at the service by id.
			expect(savedSubmit.map((i) => sim.view(String(i.json.task_id))?.status)).toEqual(Array(5).fill('finished'));

			figures.workerKilled = {
				lockMs: Number(cluster.main.instance.env.QUEUE_WORKER_LOCK_DURATION),
				jobFailedAfterMs: stalledAfterMs,
				executionEndedAfterMs: endedAfterMs,
				finalStatus: endX.status,
				replacement: replacement.name,
			};
			say(
				`worker killed: jobs failed by Bull ${(stalledAfterMs / 1000).toFixed(1)} s later (lock ${cluster.main.instance.env.QUEUE_WORKER_LOCK_DURATION} ms), executions "${endX.status}" after ${(endedAfterMs / 1000).toFixed(1)} s with no node data; ` +
					`5 of 5 callback tasks recovered through the trigger; Retry submitted 0`,
			);
		}));
});

describe('the main restarted', () => {
	test('while a worker runs an execution started through a webhook process: it finishes, and the API sees it', () =>
		cluster.explain(async () => {
			// What a parked execution resumed through a webhook process relies on too.
			const prefix = `${TAG} during-restart`;
			const alongside = post(hook(PATHS.batch), { rows: [{ prompt: `${prefix} 0 [sim:duration=6000]` }] });
			await waitFor('the task submitted', () => (submissionsByPrompt(prefix).size === 1 ? true : undefined));
			const restartMs = await cluster.restartMain();
			const during = await alongside;
			expect(during.status).toBe(200);
			expect((during.body as Array<{ status: string }>)[0].status).toBe('finished');
			const list = await cluster.executions(wf.batch, false);
			expect(list.filter((e) => e.status === 'success').length).toBeGreaterThanOrEqual(2);
			figures.mainRestartMs = restartMs;
			say(`main restarted in ${(restartMs / 1000).toFixed(1)} s while a worker ran an execution: it finished`);
		}));
});
