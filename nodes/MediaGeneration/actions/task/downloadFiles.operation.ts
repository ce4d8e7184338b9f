import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { getTaskStatus } from '../../../shared/transport/api';
import { taskOutputJson } from '../../../shared/output';
import type { Task } from '../../../shared/task';
import { finishBatch, guard, mapWithLimit, type ItemOutcome } from '../batch';
import { completeTask } from '../waitAndDownload';
import { asItemError, waitFailure } from '../itemErrors';
import { readRunOptions, type RunOptions } from '../runOptions';
import { taskRunOptions } from '../runOptionsPanel';
import { readTaskId, taskIdProperty } from './taskId';

export const description: INodeProperties[] = [
	{
		...taskIdProperty('downloadFiles'),
		hint: 'The service keeps the files for 24 hours after the task finished',
	},
	taskRunOptions('downloadFiles'),
];

/** Fresh binaries of a finished task (its file URLs stay valid 24 hours). No waiting. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const items = this.getInputData();
	const prepared: Array<{ taskId: string; run: RunOptions } | ItemOutcome> = items.map((_, i) => {
		try {
			return {
				taskId: readTaskId(this, i),
				run: { ...readRunOptions(this, i, false), downloadFiles: true },
			};
		} catch (error) {
			return { ok: false, error: asItemError(this, i, error), json: {} };
		}
	});
	const first = prepared.find((p): p is { taskId: string; run: RunOptions } => !('ok' in p));
	const outcomes = await mapWithLimit(
		items.length,
		first?.run.maxConcurrentTasks ?? 1,
		async (i) => {
			const entry = prepared[i];
			if ('ok' in entry) return entry;
			return await guard(this, i, async () => {
				let task: Task | undefined;
				let failure: ItemOutcome | undefined;
				try {
					task = await getTaskStatus(this, entry.taskId);
				} catch (error) {
					failure = {
						ok: false,
						...waitFailure(this, i, error, entry.taskId, { task_id: entry.taskId }),
					};
				}
				if (failure || !task) return failure as ItemOutcome;
				if (task.status !== 'finished' && task.status !== 'failed') {
					const progress = task.progress !== undefined ? `, ${task.progress}%` : '';
					return {
						ok: false,
						error: new NodeOperationError(
							this.getNode(),
							`Item ${i}: task ${task.task_id} is not finished yet (status "${task.status}"${progress}): there are no files to download`,
							{
								itemIndex: i,
								description:
									'Use Task → Wait for Completion to wait for it and download its files.',
							},
						),
						json: taskOutputJson(task, {}),
					};
				}
				return await completeTask(this, {
					itemIndex: i,
					taskId: entry.taskId,
					origin: Date.now(),
					originKnown: false,
					pollImmediately: true,
					known: task,
					wait: false,
					run: entry.run,
				});
			});
		},
	);
	return await finishBatch(this, outcomes);
}
