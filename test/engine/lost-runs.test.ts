/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// Issue 44, point 5: a lost run in any run of the node. n8n keeps the runs saved before (with
// "Save execution progress") and records no crashed run for a node that already has runs
// (ExecutionRecoveryService.amend, n8n 2.41.1): a Retry resumes at the node's next run index
// with the ledger of its earlier runs. Played through n8n's engine from the execution data
// n8n's saveExecutionProgress stores after each node (harness `saveProgress`): the data stored
// when the process died is the last save before it. Submissions are counted at the simulator.
import type { IRun } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, connect, type WorkflowJson } from '../harness';
import { NODE, TRIGGER, imageGenerateParams, mediaNode, run, start, useSimulator } from './support';

const sim = useSimulator();
jest.setTimeout(90_000);

const HOLD = 'Hold';

/**
 * Start → Branch A (2 rows) → Generate, and Start → Branch B (2 rows) → [Hold →] Generate: one
 * Generate that waits, run twice (run 0: branch A, run 1: branch B), as a Loop Over Items of two
 * batches runs it.
 */
function twoBranches(holdMs?: number): WorkflowJson {
	const generate = mediaNode(imageGenerateParams(sim(), '={{ $json.prompt }}'));
	const node = (name: string, type: string, position: [number, number], parameters = {}) => ({
		id: `${name}-id`,
		name,
		type,
		typeVersion: 1,
		position,
		parameters,
	});
	const rows = (branch: string) =>
		JSON.stringify([{ prompt: `${branch} row 1` }, { prompt: `${branch} row 2` }]);
	const wf: WorkflowJson = {
		name: 'two branches into one Generate',
		nodes: [
			node(TRIGGER, MANUAL_TRIGGER_TYPE, [0, 0]),
			node('Branch A', 'harness.items', [220, 0], { items: rows('A') }),
			node('Branch B', 'harness.items', [220, 300], { items: rows('B') }),
			{
				...node(NODE, generate.type, [660, 0], generate.parameters),
				credentials: generate.credentials,
			},
		],
		connections: {},
	};
	connect(wf.connections, TRIGGER, 'Branch A');
	connect(wf.connections, TRIGGER, 'Branch B');
	connect(wf.connections, 'Branch A', NODE);
	if (holdMs === undefined) {
		connect(wf.connections, 'Branch B', NODE);
	} else {
		wf.nodes.push(node(HOLD, 'harness.sleep', [440, 300], { ms: holdMs }));
		connect(wf.connections, 'Branch B', HOLD);
		connect(wf.connections, HOLD, NODE);
	}
	return wf;
}

/** The execution as n8n stores it when its process dies: the last progress save before `until`. */
function storedAt(
	result: Awaited<ReturnType<typeof run>>,
	until: (index: number) => boolean,
): IRun {
	const cut = result.events.findIndex((_, i) => until(i));
	const before = cut < 0 ? result.events : result.events.slice(0, cut);
	const saved = [...before].reverse().find((e) => e.saved)?.saved;
	if (!saved) throw new Error('no progress was saved before the stop');
	return { ...result.run, status: 'crashed', data: saved };
}

const errorText = (result: { error?: unknown }) => {
	const e = result.error as { message?: string; description?: string } | undefined;
	return `${e?.message ?? ''}\n${e?.description ?? ''}`;
};

describe('Retry of an execution n8n lost during a later run of the node (progress saved)', () => {
	it('sends nothing again: the second run’s items are not re-submitted, neither by a second Retry', async () => {
		const workflow = twoBranches();
		const first = await run(sim(), workflow, { mode: 'webhook', saveProgress: true });
		expect(first.error).toBeUndefined();
		// Both runs submitted: 4 tasks.
		expect(sim().tasks()).toHaveLength(4);
		const starts = first.events
			.map((e, i) => (e.kind === 'nodeExecuteBefore' && e.node === NODE ? i : -1))
			.filter((i) => i >= 0);
		expect(starts).toHaveLength(2);
		// n8n died while the second run waited: stored is the save made before that run started.
		const stored = storedAt(first, (i) => i === starts[1]);
		expect(stored.data.resultData.runData[NODE]).toHaveLength(1);
		expect(stored.data.executionData!.nodeExecutionStack[0].node.name).toBe(NODE);

		const retried = await run(sim(), workflow, { retryOf: stored });
		// Was: branch B's 2 rows submitted again (6 tasks, paid twice).
		expect(sim().tasks()).toHaveLength(4);
		expect(retried.status).toBe('error');
		expect(errorText(retried)).toMatch(/n8n stopped while this node was running/);
		expect(errorText(retried)).toMatch(/NOT sent again/);

		const again = await run(sim(), workflow, { retryOf: retried.run });
		expect(sim().tasks()).toHaveLength(4);
		expect(errorText(again)).toMatch(/answer was lost/);
	});

	it('a run index that never started (n8n stopped in the node before it) is a first run: it submits', async () => {
		const workflow = twoBranches(3000);
		const running = start(sim(), workflow, { mode: 'webhook', saveProgress: true });
		// Stopped while Hold (3 s) runs: Generate's first run has ended, its second never starts.
		const deadline = Date.now() + 30_000;
		let result: Awaited<typeof running.done> | undefined;
		while (!result) {
			if (Date.now() > deadline) throw new Error('Hold never started');
			await new Promise((r) => setTimeout(r, 20));
			// Both files downloaded: Generate's first run ends, Hold starts.
			if (sim().count('file') >= 2) {
				await new Promise((r) => setTimeout(r, 800));
				result = await running.cancel();
			}
		}
		expect(sim().tasks()).toHaveLength(2);
		const holdStart = result.events.findIndex(
			(e) => e.kind === 'nodeExecuteBefore' && e.node === HOLD,
		);
		expect(holdStart).toBeGreaterThan(0);
		const stored = storedAt(result, (i) => i === holdStart);
		expect(stored.data.resultData.runData[NODE]).toHaveLength(1);

		const retried = await run(sim(), workflow, { retryOf: stored });
		expect(retried.error).toBeUndefined();
		// Branch B's 2 rows, never sent before, are submitted once.
		expect(sim().tasks()).toHaveLength(4);
		const out = retried.outputOf(NODE, 0, 1);
		expect(out.map((i) => i.json.status)).toEqual(['finished', 'finished']);
	});
});
