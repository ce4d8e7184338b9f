// examples/table-rows-to-videos.json and its batch sub-workflow in n8n's queue mode (Redis,
// PostgreSQL, a main, a worker, webhook processes behind the balancer; see cluster.ts), the
// Data Table "products" in PostgreSQL, the worker SIGKILLed while the job waits for the videos:
// with the process that queued the run alive (n8n ends the run in error with no data), and with
// that process lost too; and two runs at once, each taken by its own worker. The table is the job's ledger, so the next run sends nothing again and
// every row ends with its own video. The job starts from a Webhook here (a run from the editor
// stays on the main; the schedules would fire runs the test did not start), otherwise both
// workflows are the examples as users import them.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import { CREDENTIAL_TYPE, removeEmptyRunFolder } from '../e2e/n8n';
import { timedSheet } from '../e2e/sheet';
import {
	Table,
	expectRowVideo,
	expectSendingOverlapped,
	tableWorkflows,
	type TableRow,
} from '../e2e/table';
import { QueueCluster, type N8nProcess } from './cluster';

jest.setTimeout(600_000);

let sim: Simulator;
let cluster: QueueCluster;
let table: Table;
let workflowId = '';
const PATH = `q${process.pid}-table`;
/** The folder every process may write the videos to (each has its own user folder). */
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-queue-table-'));

const hook = () => `${cluster.balancer.url}/webhook/${PATH}`;

async function waitFor<T>(
	what: string,
	fn: () => Promise<T | undefined | false> | T | undefined | false,
	timeoutMs = 120_000,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const v = await fn();
		if (v !== undefined && v !== false) return v;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 250));
	}
}

type Flow = ReturnType<typeof tableWorkflows>[number];

/** A workflow for the public API: our credential in its nodes, no id (n8n gives one). */
function forApi(wf: Flow, credential: { id: string; name: string }) {
	for (const n of wf.nodes) {
		if (n.credentials) n.credentials = { [CREDENTIAL_TYPE]: credential };
	}
	const { name, settings } = wf as unknown as { name: string; settings: Record<string, unknown> };
	return { name: `queue ${name}`, nodes: wf.nodes, connections: wf.connections, settings };
}

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `queue-table-${process.pid}-secret` });
	cluster = await QueueCluster.create({
		// One run per worker: two runs at once are then taken by two workers (the last test). The
		// batch sub-workflows run inside their parent's worker and take no slot of their own.
		workerConcurrency: 1,
		env: { N8N_RESTRICT_FILE_ACCESS_TO: folder },
	});
	await cluster.explain(async () => {
		await cluster.startMain();
		await cluster.setUpOwner();
		const credential = {
			name: 'Media Generation (simulator)',
			id: await cluster.createCredential('Media Generation (simulator)', CREDENTIAL_TYPE, {
				apiKey: sim.apiKey,
				baseUrl: sim.baseUrl,
				allowPrivateFileHosts: true,
			}),
		};
		table = await Table.createWith(
			async <T>(method: string, p: string, body?: unknown) =>
				await cluster.api<T>(p, { method, body }),
		);
		const [main, batch] = tableWorkflows('unused', folder, PATH);
		const batchId = await cluster.createWorkflow(forApi(batch, credential));
		// The job's two Execute Workflow nodes name the batch workflow by the id n8n gave it, as a
		// user picks it from the list after importing both.
		for (const n of main.nodes.filter((x) => x.type === 'n8n-nodes-base.executeWorkflow'))
			(n.parameters as { workflowId: { value: string } }).workflowId.value = batchId;
		workflowId = await cluster.createWorkflow(forApi(main, credential));
		await cluster.add(['worker', 'webhook', 'webhook']);
	});
});

afterAll(async () => {
	await cluster?.dispose();
	await sim?.close();
	fs.rmSync(folder, { recursive: true, force: true });
	removeEmptyRunFolder();
});

async function post(): Promise<void> {
	const res = await fetch(hook(), {
		method: 'POST',
		body: '{}',
		headers: { 'content-type': 'application/json' },
	});
	await res.text();
	expect(res.status).toBe(200);
}

const expectVideo = (row: TableRow) => expectRowVideo(row, folder, sim);

/**
 * Runs the job, SIGKILLs its worker (and `alsoKill`) once every row is submitted, starts a new
 * worker, runs the job again: the next run sends nothing and every row gets its video.
 */
async function killedMidWait(tag: string, alsoKill?: N8nProcess) {
	const rows: TableRow[] = timedSheet(25_000, () => ` ${tag}`).map((r) => ({
		...r,
		sku: `${r.sku}-${tag}`,
	}));
	await table.clear();
	await table.insert(rows);
	const sent = () => sim.tasks().filter((t) => t.prompt.includes(` ${tag} `));
	if (alsoKill) cluster.balancer.only(alsoKill);
	await post();
	cluster.balancer.restore();
	await waitFor(
		'every row submitted and written',
		async () =>
			(await table.rows()).filter((r) => r.status === 'submitted' && r.task_id).length ===
			rows.length,
	);
	const victim = cluster.workers.find((w) => w.running)!;
	await Promise.all([victim.kill(), alsoKill?.kill()]);
	expect(sent()).toHaveLength(rows.length);
	await cluster.addWorker();
	if (alsoKill) await cluster.add(['webhook']);

	// The next run (the next hour or night; here the same webhook again).
	const known = new Set((await cluster.executions(workflowId, false)).map((e) => e.id));
	await post();
	const next = await waitFor(
		'the next run to end',
		async () =>
			(await cluster.executions(workflowId, false)).find(
				(e) => !known.has(e.id) && !['running', 'new', 'waiting'].includes(e.status),
			),
		240_000,
	);
	expect(next.status).toBe('success');
	expect(sent()).toHaveLength(rows.length);
	const after = await table.rows();
	expect(after).toHaveLength(rows.length);
	for (const row of after) expectVideo(row);
	for (const f of fs.readdirSync(folder)) if (f.endsWith('.mp4')) fs.rmSync(path.join(folder, f));
}

test('the worker SIGKILLed while the job waits, the process that queued it alive: the next run sends nothing again and every row ends with its file', () =>
	cluster.explain(() => killedMidWait('(queue-a)')));

test('the worker and the webhook process that queued the job both SIGKILLed while it waits: the next run sends nothing again and every row ends with its file', () =>
	cluster.explain(() =>
		killedMidWait(
			'(queue-b)',
			cluster.webhooks.find((w) => w.running),
		),
	));

test('two runs started at the same moment, each taken by its own worker (two worker processes, one PostgreSQL): each row is paid once and ends with its video', () =>
	cluster.explain(async () => {
		const tag = '(queue-two)';
		const sample = timedSheet(1_000);
		const rows: TableRow[] = Array.from({ length: 120 }, (_, i) => {
			const s = sample[i % sample.length];
			return { sku: `${s.sku}-two-${i}`, product: s.product, prompt: `${s.prompt} ${tag} ${i}` };
		});
		await table.clear();
		await table.insert(rows);
		const alive = cluster.workers.filter((w) => w.running);
		if (alive.length < 2) await cluster.add(Array(2 - alive.length).fill('worker'));
		const known = new Set((await cluster.executions(workflowId, false)).map((e) => e.id));
		// Submissions answered after 150 ms: sending takes seconds, so the two runs' sending
		// overlaps however the workers pick the jobs up.
		const slow = sim.faults.add({ endpoint: 'submit', kind: 'slow', delayMs: 150, match: tag });
		await Promise.all([post(), post()]);
		const [a, b] = await waitFor(
			'both runs to end',
			async () => {
				const mine = (await cluster.executions(workflowId, false)).filter((e) => !known.has(e.id));
				return mine.length === 2 &&
					mine.every((e) => !['running', 'new', 'waiting'].includes(e.status))
					? mine
					: undefined;
			},
			240_000,
		);
		sim.faults.remove(slow);
		expect([a.status, b.status]).toEqual(['success', 'success']);
		// Each run on a worker of its own (otherwise this shows nothing about two workers).
		const ranOn = [a, b].map((e) => cluster.workersThatRan(e.id));
		expect(ranOn.map((w) => w.length)).toEqual([1, 1]);
		expect(ranOn[0][0]).not.toBe(ranOn[1][0]);
		// Both were sending at the same time (which one wins the claims is the machines' timing).
		const seen = expectSendingOverlapped(
			[await cluster.execution(a.id), await cluster.execution(b.id)],
			rows.length,
		);
		const submissions = (prompt: unknown) => sim.tasks().filter((t) => t.prompt === prompt).length;
		expect(rows.filter((r) => submissions(r.prompt) !== 1)).toEqual([]);
		const after = await table.rows();
		expect(after).toHaveLength(rows.length);
		for (const row of after) expectVideo(row);
		process.stdout.write(
			`[queue] table job, 2 runs at once on ${ranOn[0][0]} and ${ranOn[1][0]}: ${rows.length} rows, ${sim.tasks().filter((t) => t.prompt.includes(tag)).length} submissions; ${seen}\n`,
		);
	}));
