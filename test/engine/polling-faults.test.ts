// The schedule under the service's usual faults (issue 46), through n8n's engine over HTTP: a
// status read answered 429 (Retry-After: 1) and a file download answered 502, each a task's first.
// What is checked is when the service saw each status read (its request log, service time), never
// a wall-clock threshold of the test.
import type { Simulator } from '../simulator';
import { NODE, imageGenerateParams, mediaWorkflow, run, simTaskOf, useSimulator } from './support';

const sim = useSimulator();
jest.setTimeout(90_000);

/** The status reads of one task: ms after its submission, and whether the service refused it. */
function readsOf(s: Simulator, taskId: string) {
	const task = s.task(taskId)!;
	return s.requests
		.filter((r) => r.endpoint === 'status' && r.taskId === taskId)
		.map((r) => ({ at: r.at - task.createdAt, refused: r.status !== 200 }));
}

/** One task alone at the default pace, its files not downloaded; its output item. */
async function runOne(prompt: string) {
	const result = await run(
		sim(),
		mediaWorkflow(
			imageGenerateParams(sim(), prompt, { checkForResults: 'balanced', downloadFiles: false }),
		),
	);
	const [item] = result.outputOf(NODE);
	expect(item.json.status).toBe('finished');
	return item;
}

it("a status read refused even after the transport's retries is followed by a read at its Retry-After, not at the schedule's next step", async () => {
	// Every attempt of the first read (the first and its two retries) answered 429, Retry-After 1.
	sim().faults.add({ endpoint: 'status', kind: '429', retryAfter: 1, perTask: 3 });
	// A task of 10 s: still running at the read after the refused ones (about 8.5 s), done by the
	// schedule's next step (about 13.5 s), so the run ends there.
	const item = await runOne('refused [sim:duration=10000] [sim:progress=none]');
	const reads = readsOf(sim(), simTaskOf(sim(), item).id);
	expect(reads.slice(0, 4).map((r) => r.refused)).toEqual([true, true, true, false]);
	// The schedule's next step for a lone task would be 5 s later; the service asked for 1 s.
	// The bounds leave room for a loaded machine's late timers: the old code's gaps were 5 s.
	expect(reads[3].at - reads[2].at).toBeLessThan(3_500);
	expect(reads[3].at - reads[2].at).toBeGreaterThanOrEqual(1_000);
});

it('a task seen almost done (progress 90 or more) is read again soon, not at the next 5 s step', async () => {
	// A lone task of 5.9 s: its first read, at 5.5 s, sees progress 90.
	const item = await runOne('almost [sim:duration=5900]');
	const task = simTaskOf(sim(), item);
	const reads = readsOf(sim(), task.id);
	expect(reads).toHaveLength(2);
	expect(reads[0].at).toBeGreaterThanOrEqual(5_400);
	expect(reads[1].at - reads[0].at).toBeLessThan(3_500);
	expect(reads[1].at - task.durationMs).toBeLessThan(3_000);
});

it('a batch of 10 tasks of 3 s under the usual faults: every task seen within 3.5 s of its end, each with its file, one submission each', async () => {
	sim().faults.add({ endpoint: 'status', kind: '429', retryAfter: 1, perTask: 1 });
	sim().faults.add({ endpoint: 'file', kind: '502', perTask: 1 });
	const items = Array.from({ length: 10 }, (_, i) => ({ i }));
	const result = await run(
		sim(),
		mediaWorkflow(
			// No progress field: the tasks that wait on the batch's first finishes (followers) hear
			// of them although the refused reads hid the first tasks while they ran.
			imageGenerateParams(
				sim(),
				'={{ "batch " + $json.i + " [sim:duration=3000] [sim:progress=none]" }}',
				{
					checkForResults: 'balanced',
				},
			),
		),
		{ items },
	);
	const out = result.outputOf(NODE);
	expect(out.map((i) => i.json.status)).toEqual(Array(10).fill('finished'));
	expect(out.every((i) => Object.keys(i.binary ?? {}).length === 1)).toBe(true);
	expect(sim().requests.filter((r) => r.endpoint === 'submit')).toHaveLength(10);
	for (const item of out) {
		const task = simTaskOf(sim(), item);
		const seen = readsOf(sim(), task.id).find((r) => !r.refused && r.at >= task.durationMs)!;
		expect(seen.at - task.durationMs).toBeLessThan(3_500);
	}
});
