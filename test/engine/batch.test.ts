/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// Batches through n8n's engine: all items in flight at once (checked on the simulator's own
// task records, never by wall-clock thresholds), input order and pairing kept, one failure
// never losing the others, with Continue On Fail, the error output, and neither.
import type { IDataObject } from 'n8n-workflow';

import type { Simulator, SimTask } from '../simulator';
import {
	NODE,
	errorOutputWorkflow,
	expectKeyNowhere,
	mediaWorkflow,
	run,
	servedBytes,
	simTaskOf,
	useSimulator,
} from './support';

const sim = useSimulator();
jest.setTimeout(60_000);

/** Image generation whose prompt comes from each item. */
function imageParams(s: Simulator, options: IDataObject = {}): IDataObject {
	return {
		resource: 'image',
		operation: 'generate',
		model: 'image-by-id',
		modelId: s.imageModelId,
		prompt: '={{ $json.prompt }}',
		options,
	};
}

const MIXED = [
	{ prompt: 'first [sim:duration=400]' },
	{ prompt: 'second [sim:duration=300][sim:fail=content policy violation]' },
	{ prompt: 'third [sim:duration=200]' },
	{ prompt: 'fourth [sim:duration=500][sim:files=2]' },
];

/** The largest number of tasks running on the service at the same instant. */
function peakConcurrency(tasks: SimTask[]): number {
	const edges = tasks.flatMap((t) => [
		{ at: t.createdAt, d: 1 },
		{ at: t.endedAt ?? Number.POSITIVE_INFINITY, d: -1 },
	]);
	edges.sort((a, b) => a.at - b.at || a.d - b.d);
	let now = 0;
	let peak = 0;
	for (const e of edges) {
		now += e.d;
		peak = Math.max(peak, now);
	}
	return peak;
}

describe('a batch of items', () => {
	it('runs every task at once: N tasks take about the time of one, not N times', async () => {
		const items = Array.from({ length: 6 }, (_, i) => ({
			prompt: `batch ${i} [sim:duration=2500]`,
		}));
		const result = await run(sim(), mediaWorkflow(imageParams(sim())), { items });
		expect(result.error).toBeUndefined();
		const tasks = sim().tasks();
		expect(tasks).toHaveLength(6);
		// Every task was submitted before the first one ended: all six were in flight together.
		const lastCreated = Math.max(...tasks.map((t) => t.createdAt));
		const firstEnded = Math.min(...tasks.map((t) => t.endedAt ?? Number.POSITIVE_INFINITY));
		expect(lastCreated).toBeLessThan(firstEnded);
		expect(peakConcurrency(tasks)).toBe(6);
		process.stdout.write(
			`[batch] 6 tasks of 2.5 s each: workflow took ${(result.durationMs / 1000).toFixed(1)} s, ${sim().count('status')} status reads\n`,
		);
	});

	it('honours Max Tasks in Flight', async () => {
		const items = Array.from({ length: 5 }, (_, i) => ({
			prompt: `limited ${i} [sim:duration=300]`,
		}));
		const result = await run(sim(), mediaWorkflow(imageParams(sim(), { maxConcurrentTasks: 2 })), {
			items,
		});
		expect(result.error).toBeUndefined();
		expect(result.outputOf(NODE)).toHaveLength(5);
		const tasks = sim().tasks();
		expect(tasks).toHaveLength(5);
		expect(peakConcurrency(tasks)).toBe(2);
	});

	it('with Continue On Fail: keeps order and pairing; the failed item keeps task_id and error_message', async () => {
		const result = await run(sim(), mediaWorkflow(imageParams(sim()), { continueOnFail: true }), {
			items: MIXED,
		});
		expect(result.status).toBe('success');
		const out = result.outputOf(NODE);
		expect(out).toHaveLength(4);
		expect(out.map((i) => i.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
			{ item: 3 },
		]);
		// Output order is input order, whatever order the tasks finished in.
		const prompts = out.map((i) => simTaskOf(sim(), i).prompt);
		expect(prompts).toEqual(MIXED.map((m) => m.prompt));

		const failed = out[1];
		expect(failed.json.task_id).toBe(simTaskOf(sim(), failed).id);
		expect(failed.json.status).toBe('failed');
		expect(failed.json.error_message).toBe('content policy violation');
		expect(String(failed.json.error)).toContain('content policy violation');
		expect(String(failed.json.error)).toContain(String(failed.json.task_id));
		expect(failed.binary).toBeUndefined();

		for (const index of [0, 2, 3]) {
			const item = out[index];
			expect(item.json.status).toBe('finished');
			const bytes = await result.readBinary(item, 'data');
			expect(bytes.equals(servedBytes(simTaskOf(sim(), item), 0))).toBe(true);
		}
		// The item with two files carries both: data and data_1.
		expect(Object.keys(out[3].binary ?? {}).sort()).toEqual(['data', 'data_1']);
		const second = await result.readBinary(out[3], 'data_1');
		expect(second.equals(servedBytes(simTaskOf(sim(), out[3]), 1))).toBe(true);
		expect(out[3].binary!.data.fileName).not.toBe(out[3].binary!.data_1.fileName);
		expectKeyNowhere(sim(), result);
	});

	it('with the error output: failed items go to output 2, the others to output 1, paired to their inputs', async () => {
		const result = await run(sim(), errorOutputWorkflow(imageParams(sim())), { items: MIXED });
		expect(result.status).toBe('success');
		const succeeded = result.outputOf(NODE, 0);
		const failed = result.outputOf(NODE, 1);
		expect(succeeded.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 2 }, { item: 3 }]);
		expect(failed).toHaveLength(1);
		expect(failed[0].pairedItem).toEqual({ item: 1 });
		// n8n merges the error item into its input item; the task fields sit under `details`.
		const details = failed[0].json.details as IDataObject;
		const failedTask = sim()
			.tasks()
			.find((t) => t.outcome === 'fail')!;
		expect(failed[0].json.prompt).toBe(MIXED[1].prompt);
		expect(String(failed[0].json.error)).toContain('content policy violation');
		expect(details.task_id).toBe(failedTask.id);
		expect(details.error_message).toBe('content policy violation');
		expect(details.status).toBe('failed');
		// The engine passed them on to the nodes wired to each output.
		expect(result.outputOf('Succeeded')).toHaveLength(3);
		expect(result.outputOf('Succeeded').every((i) => i.json.status === 'finished')).toBe(true);
		expect(result.outputOf('Failed')).toHaveLength(1);
		expect((result.outputOf('Failed')[0].json.details as IDataObject).task_id).toBe(failedTask.id);
	});

	it('without either: the run fails on the failed task, and says where the other tasks are', async () => {
		const result = await run(sim(), mediaWorkflow(imageParams(sim())), { items: MIXED });
		expect(result.status).toBe('error');
		const failedTask = sim()
			.tasks()
			.find((t) => t.outcome === 'fail')!;
		const error = result.error as unknown as { message: string; description?: string };
		expect(error.message).toContain(failedTask.id);
		expect(error.message).toContain('content policy violation');
		// The finished tasks are not lost: their ids are in the error, to fetch their files.
		for (const task of sim()
			.tasks()
			.filter((t) => t.outcome === 'finish')) {
			expect(error.description).toContain(task.id);
		}
		expect(sim().tasks()).toHaveLength(4);
		expect(sim().count('submit')).toBe(4);
	});
});
