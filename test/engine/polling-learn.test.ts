// What a batch teaches its own later tasks, through n8n's engine over HTTP: the status reads are
// counted on the simulator's request log, per task (never a wall-clock threshold). The simulator
// sends no progress field here ([sim:progress=none]): the case the learner exists for.
import type { IDataObject } from 'n8n-workflow';

import type { Simulator } from '../simulator';
import { NODE, mediaWorkflow, run, realSoonerPace, simTaskOf, useSimulator } from './support';

// What is measured here is the node's own Sooner pace (it checks its 2.5 s first read), and the
// learning batch reads at it: not the engine tests' quicker test pace.
realSoonerPace();
const sim = useSimulator();
jest.setTimeout(90_000);

// Images: a model whose typical duration (seconds) changes nothing before the first finish, so
// the first tasks read as when nothing at all is known and what is learnt shows.
function imageParams(options: IDataObject = {}): IDataObject {
	return {
		resource: 'image',
		operation: 'generate',
		modelId: 'image-1',
		prompt: '={{ $json.prompt }}',
		options: { downloadFiles: false, ...options },
	};
}

/** Status reads the simulator answered for one task. */
function readsOf(s: Simulator, taskId: string): number {
	return s.requests.filter((r) => r.endpoint === 'status' && r.taskId === taskId).length;
}

// 16 s: long enough for learning to save reads. A task of a few seconds is already read about as
// often as fixed 2 s polling would while nothing is known; there what is learnt cuts the lag.
const prompt = (i: number) => `learn ${i} [sim:duration=16000] [sim:progress=none]`;

describe('durations learnt within a batch and across executions', () => {
	// What the batch below left for the next execution: its node static data, and the reads of a
	// task of the same kind that knew nothing (the baseline of the second test).
	let left: { staticData: IDataObject; coldReads: number } | undefined;

	it("a batch's later tasks are polled fewer times once earlier ones of the same kind finished", async () => {
		// Two in flight: items 0-1 run first and know nothing; items 2-3 start after them.
		const items = Array.from({ length: 4 }, (_, i) => ({ prompt: prompt(i) }));
		const result = await run(sim(), mediaWorkflow(imageParams({ maxConcurrentTasks: 2 })), {
			items,
		});
		const out = result.outputOf(NODE);
		expect(out.map((i) => i.json.status)).toEqual(['finished', 'finished', 'finished', 'finished']);
		const reads = out.map((item) => readsOf(sim(), simTaskOf(sim(), item).id));
		const [a, b, c, d] = reads;
		left = {
			staticData: JSON.parse(JSON.stringify(result.workflow.staticData)) as IDataObject,
			coldReads: Math.min(a, b),
		};
		// Without progress the first two read as fixed 2 s polling does, then back off (about 8
		// reads for 16 s); the later two read early, then around the learnt 16 s (about 5 reads).
		expect(Math.max(c, d)).toBeLessThan(Math.min(a, b));
		// Lag stays small for the later tasks: each was seen finished soon after its end.
		for (const item of out.slice(2)) {
			const task = simTaskOf(sim(), item);
			const seen = sim()
				.requests.filter((r) => r.endpoint === 'status' && r.taskId === task.id)
				.map((r) => r.at)
				.find((at) => at >= task.createdAt + task.durationMs);
			expect(seen! - (task.createdAt + task.durationMs)).toBeLessThan(2_500);
		}
	});

	it('a later execution starts from the durations the last one left in node static data', async () => {
		// The batch above is the earlier execution (one 16 s run less than running a new one).
		expect(left).toBeDefined();
		const { staticData, coldReads: cold } = left!;
		// n8n saves node static data after production runs; the harness hands it on as n8n would.
		const saved = staticData[`node:${NODE}`] as IDataObject;
		expect(Object.keys(saved.taskDurations as IDataObject)).toEqual(['image-1']);

		const again = await run(
			sim(),
			{ ...mediaWorkflow(imageParams()), staticData },
			{
				items: [{ prompt: prompt(1) }],
			},
		);
		const item = again.outputOf(NODE)[0];
		expect(item.json.status).toBe('finished');
		const warm = readsOf(sim(), String(item.json.task_id));
		expect(warm).toBeLessThan(cold);
	});
});

describe('Options → Check for Results (issue 37)', () => {
	it("a lone task's first status read: about 2.5 s after the submission when sooner, 5.5 s by default", async () => {
		// One execution, the pace set per item by expression; tasks of 0 s without progress, so
		// each finishes before its first read and that read is all the schedule decides.
		const result = await run(
			sim(),
			mediaWorkflow(imageParams({ checkForResults: '={{ $json.pace }}' })),
			{
				items: [
					{ prompt: 'pace sooner [sim:duration=0] [sim:progress=none]', pace: 'sooner' },
					{ prompt: 'pace default [sim:duration=0] [sim:progress=none]', pace: 'balanced' },
				],
			},
		);
		const out = result.outputOf(NODE);
		expect(out.map((i) => i.json.status)).toEqual(['finished', 'finished']);
		const firstRead = out.map((item) => {
			const id = simTaskOf(sim(), item).id;
			const at = (endpoint: string) =>
				sim().requests.find((r) => r.endpoint === endpoint && r.taskId === id)!.at;
			return { afterSubmit: at('status') - at('submit'), at: at('status') };
		});
		// Never earlier than planned (a schedule may only be late): 2.5 s, and 5.5 s.
		expect(firstRead[0].afterSubmit).toBeGreaterThanOrEqual(2_400);
		expect(firstRead[1].afterSubmit).toBeGreaterThanOrEqual(5_400);
		expect(firstRead[0].at).toBeLessThan(firstRead[1].at);
		expect(out.map((item) => readsOf(sim(), simTaskOf(sim(), item).id))).toEqual([1, 1]);
	});
});
