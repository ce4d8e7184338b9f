/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// Issue 44, points 5 and 7, in a real n8n (regular mode, SQLite): a Loop Over Items of 2
// batches into one Generate that waits, Save execution progress on, n8n SIGKILLed while the
// second batch waits, started again, Retry of the crashed execution; and a Retry after the
// credential's key was changed (the same account). Submissions are counted at the simulator
// (each accepted submission is a task, each task is billed).
import { startSimulator, type Simulator } from '../simulator';
import { N8nInstance, removeEmptyRunFolder } from './n8n';
import {
	activateWorkflows,
	createApiKey as createOwnerApiKey,
	endedExecutions as ended,
	expectLostRunError,
	executionsOf as listExecutions,
	newOwner,
	retryExecution,
} from './executions-api';
import { credentialImport, mediaNode, splitRows, webhookNode, workflow } from './workflows';

jest.setTimeout(300_000);

const LOOP_WF = 'mgenLostLoop001';
const LOOP_PATH = `e2e-lost-loop-${process.pid}`;
const KEY_WF = 'mgenKeyChange01';
const KEY_PATH = `e2e-key-change-${process.pid}`;
const OWNER = newOwner();
type Row = { prompt: string; timeout?: number };

let sim: Simulator;
let n8n: N8nInstance;
let apiKey = '';

const imageGenerate = (options: Record<string, unknown>) =>
	mediaNode('Generate', {
		resource: 'image',
		operation: 'generate',
		model: 'image-by-id',
		modelId: sim.imageModelId,
		prompt: '={{ $json.prompt }}',
		imageByIdOptions: { size: '1:1', n: 1 },
		waitForCompletion: true,
		options: { maxPollIntervalSeconds: 1, ...options },
	});

/** Webhook → Split → Loop Over Items (batches of 3) → Generate (waits) → back to the loop. */
function loopWorkflow() {
	const wf = workflow(
		LOOP_WF,
		[
			webhookNode(LOOP_PATH),
			splitRows(),
			{
				id: 'n-loop',
				name: 'Loop Over Items',
				type: 'n8n-nodes-base.splitInBatches',
				typeVersion: 3,
				position: [300, 0],
				parameters: { batchSize: 3, options: {} },
			},
			imageGenerate({}),
		],
		{
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Loop Over Items', type: 'main', index: 0 }]] },
			'Loop Over Items': { main: [[], [{ node: 'Generate', type: 'main', index: 0 }]] },
			Generate: { main: [[{ node: 'Loop Over Items', type: 'main', index: 0 }]] },
		},
	);
	return { ...wf, settings: { ...wf.settings, saveExecutionProgress: true } };
}

/** Webhook → Split → Generate (waits), each row's Timeout from the row. */
function keyWorkflow() {
	return workflow(
		KEY_WF,
		[
			webhookNode(KEY_PATH),
			splitRows(),
			imageGenerate({ timeoutMinutes: '={{ $json.timeout || 30 }}' }),
		],
		{
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Generate', type: 'main', index: 0 }]] },
		},
	);
}

const executionsOf = (workflowId: string) => listExecutions(n8n, apiKey, workflowId);
const submitsOf = (prefix: string) => sim.tasks().filter((t) => t.prompt.startsWith(prefix)).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function post(path: string, rows: Row[]) {
	// Right after start-up n8n may not have registered the published webhook yet (404).
	let res: Response;
	const deadline = Date.now() + 30_000;
	do {
		res = await fetch(`${n8n.baseUrl}/webhook/${path}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ rows }),
		});
		if (res.status !== 404) break;
		await res.text();
		await sleep(500);
	} while (Date.now() < deadline);
	expect(res.status).toBe(200);
}

/** The editor's Retry (Executions list) with the original workflow; resolves when it ended. */
const retry = (executionId: string, workflowId: string) =>
	retryExecution(n8n, OWNER, apiKey, executionId, workflowId);

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-lost-runs-${process.pid}-secret` });
	n8n = await N8nInstance.create('lost-runs');
	await n8n.explain(async () => {
		await n8n.importCredentials([credentialImport(sim.baseUrl, sim.apiKey)]);
		await n8n.importWorkflows([loopWorkflow(), keyWorkflow()]);
		await n8n.start();
		apiKey = (await createOwnerApiKey(n8n, OWNER)).key;
		await activateWorkflows(n8n, apiKey, [LOOP_WF, KEY_WF]);
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

test('Loop Over Items of 2 batches, n8n SIGKILLed while the second batch waits, started again: the Retry submits nothing again', () =>
	n8n.explain(async () => {
		const p = 'loop';
		// The first batch finishes at once; the second is still running at the kill.
		const rows = Array.from({ length: 6 }, (_, i) => ({
			prompt: `${p} ${i} [sim:duration=${i < 3 ? 300 : 10_000}]`,
		}));
		await post(LOOP_PATH, rows);
		const secondBatchPolled = () => {
			const second = sim.tasks().filter((t) => /^loop [345] /.test(t.prompt));
			return (
				second.length === 3 &&
				second.every((t) => sim.requests.some((r) => r.endpoint === 'status' && r.taskId === t.id))
			);
		};
		for (const end = Date.now() + 120_000; !secondBatchPolled() && Date.now() < end; )
			await sleep(100);
		expect(secondBatchPolled()).toBe(true);
		expect(submitsOf(p)).toBe(6);

		await n8n.kill();
		await n8n.start();
		// n8n's recovery marks it crashed; it records no crashed run for Generate, which has one.
		const [crashed] = (await executionsOf(LOOP_WF)).filter((e) => e.status === 'crashed');
		expect(crashed).toBeDefined();
		expect(crashed.data!.resultData.runData.Generate).toHaveLength(1);

		const retried = await retry(crashed.id, LOOP_WF);
		// Was: the second batch's 3 rows submitted again (9 tasks) and the Retry a success.
		expect(submitsOf(p)).toBe(6);
		expectLostRunError(retried);
		process.stdout.write(
			`[e2e] Loop Over Items, 2 batches, n8n killed during the second: Retry submitted 0 (was 3)\n`,
		);
	}));

test('a Retry after the key of the same account was changed: the accepted tasks are resumed, 0 submitted again', () =>
	n8n.explain(async () => {
		const p = 'key';
		// Row b outlasts its Timeout (3 s): the execution fails with both tasks accepted.
		const rows: Row[] = [
			{ prompt: `${p} a [sim:duration=300]` },
			{ prompt: `${p} b [sim:duration=6000]`, timeout: 0.05 },
		];
		const known = new Set((await executionsOf(KEY_WF)).map((e) => e.id));
		await post(KEY_PATH, rows);
		const all = await ended(n8n, apiKey, KEY_WF, known.size + 1, 120_000);
		const failed = all.find((e) => !known.has(e.id))!;
		expect(failed.status).toBe('error');
		expect(submitsOf(p)).toBe(2);

		// The key is changed (say, after a leak): the service revokes the old one, the
		// credential gets the new one.
		const rotated = `${sim.apiKey}-rotated`;
		sim.rotateKey(rotated);
		await n8n.importCredentials([credentialImport(sim.baseUrl, rotated)]);
		while (sim.tasks().some((t) => t.prompt.startsWith(p) && t.endedAt === undefined))
			await sleep(200);
		const before = sim.requests.length;

		const retried = await retry(failed.id, KEY_WF);
		// Was: both rows submitted again (4 tasks), the ledger's digest held a hash of the key.
		expect(submitsOf(p)).toBe(2);
		expect(retried.status).toBe('success');
		const out = retried.data!.resultData.runData.Generate.at(-1)!.data!.main[0]!.map((i) => i.json);
		expect(out.map((j) => j.status)).toEqual(['finished', 'finished']);
		// Read with the new key: the old one is refused by the service now.
		const reads = sim.requests.slice(before).filter((r) => r.endpoint === 'status');
		expect(reads.length).toBeGreaterThan(0);
		expect(reads.every((r) => r.headers.authorization === `Bearer ${rotated}`)).toBe(true);
		process.stdout.write(`[e2e] Retry after the key was changed: 0 submitted again (was 2)\n`);
	}));
