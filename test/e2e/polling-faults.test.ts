// Issue 46 in a real n8n: a batch of 10 image tasks of 3 s while the service answers each task's
// first status read 429 (Retry-After: 1) and each first file download 502, as a service under
// load does (both allowed by the spec). What the user sees is checked: the node's own run time
// (n8n's executionTime) against the task's, every item with its file, one submission per item.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { startSimulator, type Simulator } from '../simulator';
import { N8nInstance, outputItems, removeEmptyRunFolder } from './n8n';
import { credentialImport, manualTrigger, mediaNode, rowItems, workflow } from './workflows';

jest.setTimeout(300_000);

const ID = 'mgenFaults00001';
const TASK_MS = 3_000;
const ITEMS = 10;
let sim: Simulator;
let n8n: N8nInstance;

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-faults-${process.pid}-secret` });
	n8n = await N8nInstance.create('polling-faults');
	await n8n.explain(async () => {
		await n8n.importCredentials([credentialImport(sim.baseUrl, sim.apiKey)]);
		await n8n.importWorkflows([
			workflow(
				ID,
				[
					manualTrigger(),
					...rowItems(
						Array.from({ length: ITEMS }, (_, i) => ({
							prompt: `picture ${i} [sim:duration=${TASK_MS}]`,
						})),
					),
					// The defaults a new user gets (Check for Results: Balanced, files downloaded).
					mediaNode('Generate', {
						resource: 'image',
						operation: 'generate',
						modelId: sim.imageModelId,
						prompt: '={{ $json.prompt }}',
					}),
				],
				{
					Start: { main: [[{ node: 'Rows', type: 'main', index: 0 }]] },
					Rows: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
					Split: { main: [[{ node: 'Generate', type: 'main', index: 0 }]] },
				},
			),
		]);
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

test('10 tasks of 3 s, first status read 429 and first download 502 each: every file, one submission each, the time printed against the task', () =>
	n8n.explain(async () => {
		sim.faults.add({ endpoint: 'status', kind: '429', retryAfter: 1, perTask: 1 });
		sim.faults.add({ endpoint: 'file', kind: '502', perTask: 1 });
		const { run } = await n8n.execute(ID);
		expect(run.data.resultData.error).toBeUndefined();
		const items = outputItems(run, 'Generate');
		expect(items).toHaveLength(ITEMS);
		const node = run.data.resultData.runData.Generate[0];
		const reads = items.map((item) => {
			const task = sim.task(String(item.json.task_id))!;
			return sim.requests
				.filter((r) => r.endpoint === 'status' && r.taskId === task.id)
				.map((r) => `${((r.at - task.createdAt) / 1000).toFixed(1)}${r.status === 429 ? '!' : ''}`)
				.join(' ');
		});
		process.stdout.write(
			`[issue 46] node run ${node.executionTime} ms = ${((node.executionTime ?? 0) / TASK_MS).toFixed(2)}x the task; status reads per task (s from submission, ! = 429): ${reads.map((r) => `[${r}]`).join(' ')}\n`,
		);
		for (const item of items) {
			expect(item.json.status).toBe('finished');
			expect(Object.keys(item.binary ?? {})).toHaveLength(1);
		}
		// Both faults did happen, to every task.
		expect(sim.requests.filter((r) => r.endpoint === 'status' && r.status === 429)).toHaveLength(
			ITEMS,
		);
		expect(sim.requests.filter((r) => r.endpoint === 'file' && r.status === 502)).toHaveLength(
			ITEMS,
		);
		// One submission per item: a fault never made the node submit again.
		expect(sim.requests.filter((r) => r.endpoint === 'submit')).toHaveLength(ITEMS);
		expect(new Set(items.map((i) => i.json.task_id)).size).toBe(ITEMS);
		// The time against the task (the issue's target: at most 2.5x) is a figure, printed above and
		// recorded in bench/results/n8n-faults.txt, not asserted: a shared machine's load decides it too.
	}));
