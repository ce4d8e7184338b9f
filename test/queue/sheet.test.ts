// examples/spreadsheet-rows-to-videos.json in n8n's queue mode (Redis, PostgreSQL, a main, a
// worker, webhook processes behind the balancer; see cluster.ts), its worker SIGKILLed while it
// waits for the videos: with the process that queued the run alive (n8n ends the run in error
// with no data), and with that process lost too. The sheet is the job's ledger, so the next run
// sends nothing again and every row ends with its own video. The job starts from a Webhook here
// (a run from the editor stays on the main), otherwise it is the example as users import it.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import { CREDENTIAL_TYPE, removeEmptyRunFolder } from '../e2e/n8n';
import { SHEET_FILE, sheetWorkflow, toCsv } from '../e2e/sheet';
import { expectEveryRowWithItsVideo, sheetNow, timedSheet } from '../e2e/sheetChecks';
import { QueueCluster, type N8nProcess } from './cluster';

jest.setTimeout(600_000);

let sim: Simulator;
let cluster: QueueCluster;
let workflowId = '';
const PATH = `q${process.pid}-sheet`;
/** The folder every process may read and write (each has its own user folder). */
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-queue-sheet-'));

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

/** The example with a Webhook in place of its two triggers, our credential in its nodes. */
function sheetFlow(credential: { id: string; name: string }) {
	const wf = sheetWorkflow('unused', folder) as unknown as {
		name: string;
		nodes: Array<Record<string, unknown> & { name: string; type: string }>;
		connections: Record<string, unknown>;
		settings: Record<string, unknown>;
	};
	const nodes = wf.nodes.filter((n) => n.name !== 'Every Night at 1:00');
	const start = nodes.find((n) => n.name === 'Try It Now')!;
	Object.assign(start, {
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: { httpMethod: 'POST', path: PATH, responseMode: 'onReceived', options: {} },
	});
	for (const n of nodes) {
		if (n.credentials) n.credentials = { [CREDENTIAL_TYPE]: credential };
	}
	const connections = { ...wf.connections };
	delete connections['Every Night at 1:00'];
	return { name: `queue ${wf.name}`, nodes, connections, settings: wf.settings };
}

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `queue-sheet-${process.pid}-secret` });
	cluster = await QueueCluster.create({
		workerConcurrency: 5,
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
		workflowId = await cluster.createWorkflow(sheetFlow(credential));
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

/**
 * Runs the job, SIGKILLs its worker (and `alsoKill`) once every row is submitted, starts a new
 * worker, runs the job again: the next run sends nothing and every row gets its video.
 */
async function killedMidWait(tag: string, alsoKill?: N8nProcess) {
	const rows = timedSheet(25_000, () => ` ${tag}`);
	fs.writeFileSync(path.join(folder, SHEET_FILE), toCsv(rows));
	const sent = () => sim.tasks().filter((t) => t.prompt.includes(tag));
	if (alsoKill) cluster.balancer.only(alsoKill);
	await post();
	cluster.balancer.restore();
	await waitFor(
		'every row submitted and written',
		() =>
			sheetNow(folder).filter((r) => r.status === 'submitted' && r.task_id).length === rows.length,
	);
	const victim = cluster.workers.find((w) => w.running)!;
	await Promise.all([victim.kill(), alsoKill?.kill()]);
	expect(sent()).toHaveLength(rows.length);
	await cluster.addWorker();
	if (alsoKill) await cluster.add(['webhook']);

	// The next run (the next night; here the same webhook again).
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
	expectEveryRowWithItsVideo(folder, rows, sim);
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
