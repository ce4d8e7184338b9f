// Issue 39: after a manual run, the output pane says how to keep a batch's tasks through a stop
// of n8n (a restart, a crash, a killed worker), through n8n-core's real execution hints: a
// Generate that awaits long tasks itself leads to the two-node layout; a Generate with Wait for
// Completion off, followed by Task → Wait for Completion, leads to "Save execution progress"
// when the workflow does not set it. Never in production runs.
import type { IDataObject, IWorkflowSettings } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, chain } from '../harness';
import { POLL_HINT, progressHint } from '../../nodes/MediaGeneration/actions/crashHint';
import { NODE, imageGenerateParams, mediaNode, run, useSimulator } from './support';

const sim = useSimulator();
jest.setTimeout(60_000);

const FINISH = 'Finish';
const video = (options: IDataObject = {}): IDataObject => ({
	resource: 'video',
	operation: 'generate',
	model: 'video-by-id',
	modelId: sim().videoModelId,
	prompt: '={{ $json.prompt }}',
	videoByIdOptions: { duration: 5, aspectRatio: '9:16' },
	options: { downloadFiles: false, ...options },
});

function hintsOf(result: Awaited<ReturnType<typeof run>>): string[] {
	const task = result.runData[NODE][0] as { hints?: Array<{ message: string }> };
	return (task.hints ?? []).map((h) => h.message);
}

/** Trigger → Generate (→ Task → Wait for Completion), with the workflow's settings. */
function workflowOf(generate: IDataObject, finisher: boolean, settings: IWorkflowSettings = {}) {
	const nodes = [{ name: 'Start', type: MANUAL_TRIGGER_TYPE }, mediaNode(generate)];
	if (finisher) {
		nodes.push(
			mediaNode(
				{
					resource: 'task',
					operation: 'waitForCompletion',
					taskId: '={{ $json.task_id }}',
					options: { downloadFiles: false },
				},
				{},
				FINISH,
			),
		);
	}
	return { ...chain(...nodes), settings };
}

const rows = [{ prompt: 'hint [sim:duration=200]' }];

describe('the crash-safety hint after a manual run', () => {
	it('Generate awaiting video tasks (about 2 min each, typically): leads to the two-node layout', async () => {
		const result = await run(sim(), workflowOf({ ...video(), waitForCompletion: true }, false), {
			items: rows,
		});
		expect(result.outputOf(NODE)[0].json.status).toBe('finished');
		expect(hintsOf(result)).toEqual([POLL_HINT]);
	});

	it('not for images awaited in seconds, nor in production runs', async () => {
		const image = await run(
			sim(),
			workflowOf(
				imageGenerateParams(sim(), '={{ $json.prompt }}', { downloadFiles: false }),
				false,
			),
			{
				items: rows,
			},
		);
		expect(hintsOf(image)).toEqual([]);
		const production = await run(
			sim(),
			workflowOf({ ...video(), waitForCompletion: true }, false),
			{
				items: rows,
				mode: 'trigger',
			},
		);
		expect(hintsOf(production)).toEqual([]);
	});

	it('Wait for Completion off, Task → Wait for Completion next: leads to "Save execution progress" unless the workflow sets it', async () => {
		const off = { ...video(), waitForCompletion: false };
		const byDefault = await run(sim(), workflowOf(off, true), { items: rows });
		expect(byDefault.outputOf(FINISH)[0].json.status).toBe('finished');
		expect(hintsOf(byDefault)).toEqual([progressHint('default')]);
		expect(
			hintsOf(
				await run(sim(), workflowOf(off, true, { saveExecutionProgress: false }), { items: rows }),
			),
		).toEqual([progressHint('off')]);
		expect(
			hintsOf(
				await run(sim(), workflowOf(off, true, { saveExecutionProgress: true }), { items: rows }),
			),
		).toEqual([]);
		// Nothing waits after it in this execution: nothing to protect.
		expect(hintsOf(await run(sim(), workflowOf(off, false), { items: rows }))).toEqual([]);
	});
});
