// The crash-safe layout keeps rows matched: Generate with Wait for Completion off hands each
// item's Callback Reference to Task → Wait for Completion and Task → Download Files, which put
// it (and the model, and the submission time) on their result, through n8n's engine.
import type { INodeExecutionData } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, chain, triggerWorkflow } from '../harness';
import { startCallbackReceiver } from '../harness/webhook';
import { client } from '../simulator/client';
import { credentialsFor, mediaNode, run, servedBytes, simTaskOf, useSimulator } from './support';

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

// Issue 52, item 3, point 4: an item Download Files cannot complete still finds its row.
describe('Task → Download Files: an error item keeps its reference', () => {
	it('a task the service does not know, one still running, one whose file host fails: each error item carries its reference', async () => {
		const api = client(sim());
		const running = await api.create(sim().imageModelId, { prompt: 'still going [sim:never]' });
		const unreachable = await api.create(sim().imageModelId, { prompt: 'its file fails' });
		await api.pollToEnd(unreachable);
		sim().faults.add({ endpoint: 'file', kind: '500', match: unreachable });
		const wf = chain(
			{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
			mediaNode(
				{ resource: 'task', operation: 'downloadFiles', taskId: '={{ $json.task_id }}' },
				{ onError: 'continueRegularOutput' },
				DOWNLOAD,
			),
		);
		const result = await run(sim(), wf, {
			items: [
				{ task_id: 'task_nobody_knows', reference: 'SKU-404' },
				{ task_id: running, reference: 'SKU-RUNNING' },
				{ task_id: unreachable, reference: 'SKU-500' },
			],
		});
		expect(result.status).toBe('success');
		const out = result.outputOf(DOWNLOAD);
		expect(out.map((item) => typeof item.json.error)).toEqual(['string', 'string', 'string']);
		// Was, for the unknown task: reference missing, the row it came from lost.
		expect(out.map((item) => item.json.reference)).toEqual(['SKU-404', 'SKU-RUNNING', 'SKU-500']);
		expect(out.map((item) => item.json.task_id)).toEqual([
			'task_nobody_knows',
			running,
			unreachable,
		]);
		expect(String(out[0].json.error)).toMatch(
			/could not read the status of task task_nobody_knows/,
		);
		expect(String(out[1].json.error)).toMatch(/is not finished yet/);
		expect(out.slice(1).map((item) => item.json.outcome)).toEqual([
			'still running',
			'download failed',
		]);
	});
});

// Issue 52, item 3, point 5: a Callback Reference an expression gives as a number (a row ID
// column) is the same reference everywhere it comes back: in the item, in the callback, and on
// a Task operation's result.
describe('a numeric Callback Reference', () => {
	it('comes back as the same reference from Generate, the Trigger and Task → Wait for Completion', async () => {
		const receiver = await startCallbackReceiver({
			workflow: triggerWorkflow(),
			credentials: credentialsFor(sim()),
		});
		try {
			const wf = chain(
				{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
				mediaNode(
					{
						resource: 'image',
						operation: 'generate',
						model: 'image-by-id',
						modelId: sim().imageModelId,
						prompt: '={{ $json.prompt }}',
						imageByIdOptions: { size: '1:1', n: 1 },
						waitForCompletion: false,
						options: { callbackReference: '={{ $json.rowId }}', callbackUrl: receiver.url },
					},
					{},
					GENERATE,
				),
				mediaNode(
					{ resource: 'task', operation: 'waitForCompletion', taskId: '={{ $json.task_id }}' },
					{},
					WAIT,
				),
			);
			const result = await run(sim(), wf, {
				items: [
					{ rowId: 42, prompt: 'row forty-two' },
					{ rowId: 7.5, prompt: 'row seven and a half' },
				],
			});
			expect(result.error).toBeUndefined();
			// Was, with a number not taken for a reference: null.
			expect(result.outputOf(GENERATE).map((i) => i.json.reference)).toEqual(['42', '7.5']);
			expect(result.outputOf(WAIT).map((i) => i.json.reference)).toEqual(['42', '7.5']);
			const deliveries = await receiver.waitFor(2);
			const byTask = new Map<unknown, unknown>();
			for (const delivery of deliveries) {
				expect(delivery.status).toBe(200);
				const [item] = (await delivery.execution!).outputOf('Downstream');
				expect(item.json.signed).toBe(true);
				byTask.set(item.json.task_id, item.json.reference);
			}
			const ids = result.outputOf(GENERATE).map((i) => i.json.task_id);
			expect(ids.map((id) => byTask.get(id))).toEqual(['42', '7.5']);
		} finally {
			await sim().idle();
			await receiver.close();
		}
	});

	it('a row carrying a numeric reference keeps it on Task → Download Files', async () => {
		const api = client(sim());
		const id = await api.create(sim().imageModelId, { prompt: 'from a sheet' });
		await api.pollToEnd(id);
		const wf = chain(
			{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
			mediaNode(
				{ resource: 'task', operation: 'downloadFiles', taskId: '={{ $json.task_id }}' },
				{},
				DOWNLOAD,
			),
		);
		const result = await run(sim(), wf, { items: [{ task_id: id, reference: 1001 }] });
		expect(result.error).toBeUndefined();
		const [item] = result.outputOf(DOWNLOAD);
		expect(item.json).toMatchObject({ task_id: id, status: 'finished', reference: '1001' });
	});
});
