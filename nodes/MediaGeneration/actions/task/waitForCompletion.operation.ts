import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { finishBatch, guard, mapWithLimit, type ItemOutcome } from '../common/batch';
import { completeTask } from '../common/completion';
import { asItemError } from '../common/errors';
import { readRunOptions, taskRunOptions, type RunOptions } from '../common/options';
import { ProgressReporter } from '../common/progress';
import { originFromCreatedTime, readTaskId, taskIdProperty } from './common';

export const description: INodeProperties[] = [
	taskIdProperty('waitForCompletion'),
	taskRunOptions('waitForCompletion'),
];

/**
 * Picks up tasks by task_id (after a timeout, a restart, or from another workflow): reads at
 * once, then polls on the adaptive schedule until final, then downloads like Generate.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const items = this.getInputData();
	const prepared: Array<{ taskId: string; run: RunOptions } | ItemOutcome> = items.map((_, i) => {
		try {
			return { taskId: readTaskId(this, i), run: readRunOptions(this, i, false) };
		} catch (error) {
			return { ok: false, error: asItemError(this, i, error), json: {} };
		}
	});
	const first = prepared.find((p): p is { taskId: string; run: RunOptions } => !('ok' in p));
	const progress = new ProgressReporter(this, items.length);
	const outcomes = await mapWithLimit(
		items.length,
		first?.run.maxConcurrentTasks ?? 1,
		async (i) => {
			const entry = prepared[i];
			if ('ok' in entry) return entry;
			return await guard(
				this,
				i,
				async () =>
					await completeTask(this, {
						itemIndex: i,
						taskId: entry.taskId,
						// The creation time is learnt from the first read; until then the origin is "now".
						origin: Date.now(),
						originKnown: false,
						pollImmediately: true,
						learnOrigin: originFromCreatedTime,
						wait: true,
						run: entry.run,
						progress,
					}),
			);
		},
	);
	return await finishBatch(this, outcomes);
}
