// Durations learnt in one execution carry over to the next through the node's static data, in a
// real n8n: two `n8n execute` runs (mode "cli": n8n saves static data after every mode but
// "manual"), each one task of the same kind whose status has no progress field. What is checked
// is what the service sees (status reads per task) and what n8n stored (the workflow's export).
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import { N8nInstance, outputItems, removeEmptyRunFolder } from './n8n';
import { credentialImport, manualTrigger, mediaNode, workflow } from './workflows';

jest.setTimeout(300_000);

const ID = 'mgenLearn000001';
let sim: Simulator;
let n8n: N8nInstance;

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-learn-${process.pid}-secret` });
	n8n = await N8nInstance.create('learn');
	await n8n.explain(async () => {
		await n8n.importCredentials([credentialImport(sim.baseUrl, sim.apiKey)]);
		await n8n.importWorkflows([
			workflow(
				ID,
				[
					manualTrigger(),
					mediaNode('Generate', {
						resource: 'image',
						operation: 'generate',
						modelId: sim.imageModelId,
						// 16 s: long enough for learning to save reads, of a model whose typical duration
						// (seconds) changes nothing before (see test/engine/polling-learn.test.ts).
						prompt: 'a slow image [sim:duration=16000] [sim:progress=none]',
						// The sooner pace reads a task of a kind never seen every 2.5 s: what is learnt
						// then saves reads at 16 s. (Balanced, the default since issue 37, reads such a
						// task only every 5 s, as often as a learnt one: there learning buys lag.)
						options: { downloadFiles: false, checkForResults: 'sooner' },
					}),
				],
				{ Start: { main: [[{ node: 'Generate', type: 'main', index: 0 }]] } },
			),
		]);
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

async function runOnce(): Promise<number> {
	const { run } = await n8n.execute(ID);
	expect(run.data.resultData.error).toBeUndefined();
	const [item] = outputItems(run, 'Generate');
	expect(item.json.status).toBe('finished');
	return sim.requests.filter((r) => r.endpoint === 'status' && r.taskId === item.json.task_id)
		.length;
}

test('the second execution reads around the duration the first one learnt and n8n saved', () =>
	n8n.explain(async () => {
		// Nothing known: every 2.5 s, then a back-off (about 7 reads for 16 s).
		const cold = await runOnce();
		const file = path.join(n8n.dir, 'learn-export.json');
		await n8n.cli(['export:workflow', `--id=${ID}`, `--output=${file}`], { label: 'export-learn' });
		const exported = JSON.parse(fs.readFileSync(file, 'utf8')) as Array<{ staticData?: unknown }>;
		const staticData = (Array.isArray(exported) ? exported[0] : exported).staticData as Record<
			string,
			{ taskDurations?: Record<string, unknown> }
		>;
		expect(Object.keys(staticData['node:Generate'].taskDurations ?? {})).toEqual([
			sim.imageModelId,
		]);
		// Learnt: early reads, then around 16 s (about 5).
		const warm = await runOnce();
		expect(warm).toBeLessThanOrEqual(cold - 2);
	}));
