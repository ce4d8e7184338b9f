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

import { mediaChunks, startSimulator, type Simulator } from '../simulator';
import { client } from '../simulator/client';
import { CREDENTIAL_TYPE, removeEmptyRunFolder, type BinaryJson, type ItemJson } from '../e2e/n8n';
import { QueueCluster, type ExecutionSummary, type N8nProcess } from './cluster';
import { generateFlow, submitFlow, triggerFlow, twoStepFlow, type CredentialRef } from './workflows';

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
};
const TRIGGER_WEBHOOK_ID = randomUUID();

let sim: Simulator;
let cluster: QueueCluster;
const wf: Record<'batch' | 'trigger' | 'submit' | 'retry' | 'onePerCall' | 'twoStep', string> = {
	batch: '',
	trigger: '',
	submit: '',
	retry: '',
	onePerCall: '',
	twoStep: '',
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
			id: await cluster.createCredential('Media Generation (simulator)', CREDENTIAL_TYPE, { apiKey: sim.apiKey, baseUrl: sim.baseUrl }),
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
