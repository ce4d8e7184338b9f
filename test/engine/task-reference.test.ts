// The crash-safe layout keeps rows matched: Generate with Wait for Completion off hands each
// item's Callback Reference to Task → Wait for Completion and Task → Download Files, which put
// it (and the model, and the submission time) on their result, through n8n's engine.
import type { INodeExecutionData } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, chain } from '../harness';
import { mediaNode, run, servedBytes, simTaskOf, useSimulator } from './support';

const sim = useSimulator();
jest.setTimeout(60_000);

const GENERATE = 'Generate Videos';
const WAIT = 'Wait for Videos';
const DOWNLOAD = 'Download Again';

/** Rows in another order than their videos finish (the first row's video takes longest). */
const ROWS = [
	{ sku: 'SKU-1', prompt: 'a red kettle [sim:duration=1500]' },
	{ sku: 'SKU-2', prompt: 'a blue chair [sim:duration=200]' },
	{ sku: 'SKU-3', prompt: 'a green lamp [sim:duration=700]' },
];

function crashSafeLayout() {
	return chain(
		{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
		mediaNode(
			{
				resource: 'video',
				operation: 'generate',
				model: 'vidmodel-1.5-pro',
				prompt: '={{ $json.prompt }}',
				aspectRatio: '16:9',
				duration: 4,
				waitForCompletion: false,
				options: { callbackReference: '={{ $json.sku }}' },
			},
			{},
			GENERATE,
		),
		mediaNode(
			{ resource: 'task', operation: 'waitForCompletion', taskId: '={{ $json.task_id }}' },
			{},
			WAIT,
		),
		mediaNode(
			{ resource: 'task', operation: 'downloadFiles', taskId: '={{ $json.task_id }}' },
			{},
			DOWNLOAD,
		),
	);
}

describe('Task → Wait for Completion and Download Files after Generate (Wait for Completion off)', () => {
	it("each result carries its item's reference, model and submission time, whatever order the tasks end in", async () => {
		const result = await run(sim(), crashSafeLayout(), { items: ROWS });
		expect(result.error).toBeUndefined();
		const submitted = result.outputOf(GENERATE);
		const bySku = (items: INodeExecutionData[]) =>
			items.map((item) => ({
				reference: item.json.reference,
				prompt: simTaskOf(sim(), item).prompt,
			}));
		const expected = ROWS.map((r) => ({ reference: r.sku, prompt: r.prompt }));
		for (const node of [WAIT, DOWNLOAD]) {
			const out = result.outputOf(node);
			// The row a result belongs to is the row whose prompt made its task.
			expect(bySku(out)).toEqual(expected);
			out.forEach((item, i) => {
				expect(item.json).toMatchObject({
					task_id: submitted[i].json.task_id,
					status: 'finished',
					model: 'vidmodel-1.5-pro',
					submitted_at: submitted[i].json.submitted_at,
				});
			});
		}
		// Waited for: from the row's submission to its result.
		for (const item of result.outputOf(WAIT)) expect(item.json.wait_seconds).toBeGreaterThan(0);
		// The files are the tasks' own.
		const out = result.outputOf(WAIT);
		for (const item of out) {
			expect((await result.readBinary(item)).equals(servedBytes(simTaskOf(sim(), item)))).toBe(
				true,
			);
		}
		// The tasks did end in another order than the rows.
		const ended = ROWS.map(
			(r) =>
				sim()
					.tasks()
					.find((t) => t.prompt === r.prompt)!.endedAt ?? 0,
		);
		expect([...ended].sort((a, b) => a - b)).not.toEqual(ended);
	});

	it('an item about another task lends it nothing: its reference stays with its own task', async () => {
		// Row 2 asks for row 1's task: the result is row 1's task, whose reference row 2 does not know.
		const first = await run(sim(), crashSafeLayout(), { items: ROWS.slice(0, 2) });
		const [a] = first.outputOf(GENERATE);
		const wf = chain(
			{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
			mediaNode(
				{ resource: 'task', operation: 'waitForCompletion', taskId: String(a.json.task_id) },
				{},
				WAIT,
			),
		);
		const result = await run(sim(), wf, {
			items: [
				{ task_id: a.json.task_id, reference: 'SKU-1' },
				{ task_id: 'task_of_another_row', reference: 'SKU-2' },
				{ reference: 'SKU-9' },
			],
		});
		expect(result.error).toBeUndefined();
		expect(result.outputOf(WAIT).map((item) => item.json.reference)).toEqual([
			'SKU-1',
			null,
			'SKU-9',
		]);
	});
});
