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
function twoBranches(holdMs?: number, branchBSuffix = ''): WorkflowJson {
	const generate = mediaNode(imageGenerateParams(sim(), '={{ $json.prompt }}'));
	const node = (name: string, type: string, position: [number, number], parameters = {}) => ({
		id: `${name}-id`,
		name,
		type,
		typeVersion: 1,
		position,
		parameters,
	});
	const rows = (branch: string) => {
		const suffix = branch === 'B' ? branchBSuffix : '';
		return JSON.stringify([
			{ prompt: `${branch} row 1${suffix}` },
			{ prompt: `${branch} row 2${suffix}` },
		]);
	};
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

/**
 * n8n dies while Generate's second run waits for its tasks: the execution is left running (a
 * dead process ends nothing: no error, no marker removed) and what n8n stored is the progress
 * saved before that run started. `dead` is stopped by the test once it has checked the Retry.
 */
async function diesInSecondRun(workflow: WorkflowJson) {
	const dead = start(sim(), workflow, { mode: 'webhook', saveProgress: true });
	const deadline = Date.now() + 30_000;
	// Branch B's 2 tasks submitted: the second run waits for them.
	while (sim().tasks().length < 4) {
		if (Date.now() > deadline) throw new Error('the second run never submitted');
		await new Promise((r) => setTimeout(r, 20));
	}
	const starts = dead.events
		.map((e, i) => (e.kind === 'nodeExecuteBefore' && e.node === NODE ? i : -1))
		.filter((i) => i >= 0);
	expect(starts).toHaveLength(2);
	const before = dead.events.slice(0, starts[1]);
	const saved = [...before].reverse().find((e) => e.saved)?.saved;
	if (!saved) throw new Error('no progress was saved before the stop');
	const stored: IRun = {
		data: saved,
		mode: 'webhook',
		startedAt: new Date(),
		status: 'crashed',
	} as IRun;
	expect(stored.data.resultData.runData[NODE]).toHaveLength(1);
	expect(stored.data.executionData!.nodeExecutionStack[0].node.name).toBe(NODE);
	return { stored, dead };
}

const errorText = (result: { error?: unknown }) => {
	const e = result.error as { message?: string; description?: string } | undefined;
	return `${e?.message ?? ''}\n${e?.description ?? ''}`;
};

describe('Retry of an execution n8n lost during a later run of the node (progress saved)', () => {
	it('sends nothing again: the second run’s items are not re-submitted, neither by a second Retry', async () => {
		// Branch B's tasks run long: n8n dies while the second run waits for them.
		const workflow = twoBranches(undefined, ' [sim:duration=60000]');
		const { stored, dead } = await diesInSecondRun(workflow);
		// Both runs submitted: 4 tasks.
		expect(sim().tasks()).toHaveLength(4);

		const retried = await run(sim(), workflow, { retryOf: stored });
		// Was: branch B's 2 rows submitted again (6 tasks, paid twice).
		expect(sim().tasks()).toHaveLength(4);
		expect(retried.status).toBe('error');
		expect(errorText(retried)).toMatch(/n8n stopped while this node was running/);
		expect(errorText(retried)).toMatch(/NOT sent again/);

		const again = await run(sim(), workflow, { retryOf: retried.run });
		expect(sim().tasks()).toHaveLength(4);
		expect(errorText(again)).toMatch(/answer was lost/);
		await dead.cancel();
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

// Issue 51, finding 2: the start marker was keyed by the first execution of the Retry chain, so
// every Retry of one execution shared it: a Retry whose run the service refused (nothing
// accepted) made every later Retry of the same execution fail as a lost run.
describe('Retry of an execution whose earlier Retry the service refused (issue 51)', () => {
	it('A stops before the second run, Retry B is refused by the service, Retry C of A submits', async () => {
		const workflow = twoBranches(3000);
		const running = start(sim(), workflow, { mode: 'webhook', saveProgress: true });
		const deadline = Date.now() + 30_000;
		let a: Awaited<typeof running.done> | undefined;
		while (!a) {
			if (Date.now() > deadline) throw new Error('Hold never started');
			await new Promise((r) => setTimeout(r, 20));
			if (sim().count('file') >= 2) {
				await new Promise((r) => setTimeout(r, 800));
				a = await running.cancel();
			}
		}
		const holdStart = a.events.findIndex((e) => e.kind === 'nodeExecuteBefore' && e.node === HOLD);
		const storedA = storedAt(a, (i) => i === holdStart);
		expect(storedA.data.resultData.runData[NODE]).toHaveLength(1);
		expect(sim().tasks()).toHaveLength(2);

		// B: the service refuses branch B's rows (429, retry in an hour): no task was created.
		const refusal = sim().faults.add({
			endpoint: 'submit',
			kind: '429',
			when: 'before',
			match: 'B row',
			retryAfter: 3600,
		});
		const b = await run(sim(), workflow, { retryOf: storedA });
		expect(b.status).toBe('error');
		expect(errorText(b)).not.toMatch(/n8n stopped while this node was running/);
		expect(sim().tasks()).toHaveLength(2);
		sim().faults.remove(refusal);

		// C: the user retries A again. Was: "n8n stopped while this node was running", nothing sent.
		const c = await run(sim(), workflow, { retryOf: storedA });
		expect(errorText(c)).not.toMatch(/n8n stopped while this node was running/);
		expect(c.error).toBeUndefined();
		expect(sim().tasks()).toHaveLength(4);
		expect(c.outputOf(NODE, 0, 1).map((i) => i.json.status)).toEqual(['finished', 'finished']);
	});
});

// Issue 51, finding 3: the store keeps 1,000 markers per workflow and node, and every later run
// of every execution took one: a Loop Over Items of many batches soon pushed a crash's marker out,
// and the Retry submitted the lost run's items again. A run that ends now removes its marker.
describe('The marker of a lost run outlives many later runs that end (issue 51)', () => {
	it('after 1,000 later runs of another execution, the Retry still sends nothing again', async () => {
		const workflow = twoBranches(undefined, ' [sim:duration=60000]');
		const { stored, dead } = await diesInSecondRun(workflow);
		expect(sim().tasks()).toHaveLength(4);

		// Another execution of the same workflow and node: Generate (Wait for Completion off) run
		// 1,001 times, once per branch (runs 1 to 1,000 are later runs), each ending normally.
		const generate = mediaNode(
			imageGenerateParams(
				sim(),
				'={{ $json.prompt }}',
				{ maxSubmissions: 2000 },
				{ waitForCompletion: false },
			),
		);
		const many: WorkflowJson = {
			name: workflow.name,
			nodes: [
				{ ...workflow.nodes.find((n) => n.name === TRIGGER)!, parameters: {} },
				{
					...workflow.nodes.find((n) => n.name === 'Branch A')!,
					parameters: { items: JSON.stringify([{ prompt: 'loop batch' }]) },
				},
				...Array.from({ length: 1001 }, (_, i) => ({
					id: `pass-${i}`,
					name: `Pass ${i}`,
					type: 'n8n-nodes-base.noOp',
					typeVersion: 1,
					position: [440, i * 20] as [number, number],
					parameters: {},
				})),
				{
					...workflow.nodes.find((n) => n.name === NODE)!,
					parameters: generate.parameters ?? {},
				},
			],
			connections: {},
		};
		connect(many.connections, TRIGGER, 'Branch A');
		for (let i = 0; i < 1001; i++) {
			connect(many.connections, 'Branch A', `Pass ${i}`);
			connect(many.connections, `Pass ${i}`, NODE);
		}
		const loop = await run(sim(), many, { mode: 'webhook' });
		expect(loop.error).toBeUndefined();
		expect(loop.runData[NODE]).toHaveLength(1001);
		expect(sim().tasks()).toHaveLength(4 + 1001);

		const retried = await run(sim(), workflow, { retryOf: stored });
		// Was: branch B's 2 rows submitted again (the crash's marker pushed out by the 1,000).
		expect(sim().tasks()).toHaveLength(4 + 1001);
		expect(errorText(retried)).toMatch(/n8n stopped while this node was running/);
		await dead.cancel();
	}, 300_000);
});
