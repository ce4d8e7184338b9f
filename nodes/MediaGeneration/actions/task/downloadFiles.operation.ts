import type { INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { getTaskStatus } from '../../../shared/transport/api';
import { taskOutputJson } from '../../../shared/output';
import type { Task } from '../../../shared/task';
import type { ItemOperation, ItemOutcome } from '../batch';
import { completeTask } from '../waitAndDownload';
import { waitFailure } from '../itemErrors';
import { readRunOptions, type RunOptions } from '../runOptions';
import { taskRunOptions } from '../runOptionsPanel';
import { carriedFacts, readTaskId, taskIdProperty, type CarriedFacts } from './taskId';

export const description: INodeProperties[] = updateDisplayOptions(
	{ show: { resource: ['task'], operation: ['downloadFiles'] } },
	[
		{ ...taskIdProperty, hint: 'The service keeps the files for 24 hours after the task finished' },
		taskRunOptions('downloadFiles'),
	],
);

interface Entry {
	taskId: string;
	run: RunOptions;
	facts: CarriedFacts;
}

/** Fresh binaries of a finished task (its file URLs stay valid 24 hours). No waiting. */
export const operation: ItemOperation<Entry> = {
	prepare(ctx, i, item) {
		const taskId = readTaskId(ctx, i);
		return {
			taskId,
			run: { ...readRunOptions(ctx, i, false), downloadFiles: true },
			facts: carriedFacts(item.json, taskId, Date.now()),
		};
	},

	concurrency: (first) => first?.run.maxConcurrentTasks ?? 1,

	async execute(ctx, i, entry) {
		let task: Task | undefined;
		let failure: ItemOutcome | undefined;
		try {
			task = await getTaskStatus(ctx, entry.taskId);
		} catch (error) {
			failure = {
				ok: false,
				...waitFailure(ctx, i, error, entry.taskId, {
					task_id: entry.taskId,
					reference: entry.facts.reference ?? null,
				}),
			};
		}
		if (failure || !task) return failure as ItemOutcome;
		if (task.status !== 'finished' && task.status !== 'failed') {
			const progress = task.progress !== undefined ? `, ${task.progress}%` : '';
			return {
				ok: false,
				error: new NodeOperationError(
					ctx.getNode(),
					`Item ${i}: task ${task.task_id} is not finished yet (status "${task.status}"${progress}): there are no files to download`,
					{
						itemIndex: i,
						description: 'Use Task → Wait for Completion to wait for it and download its files.',
					},
				),
				json: taskOutputJson(task, entry.facts),
			};
		}
		return await completeTask(ctx, {
			itemIndex: i,
			taskId: entry.taskId,
			...entry.facts,
			origin: Date.now(),
			originKnown: false,
			pollImmediately: true,
			known: task,
			wait: false,
			run: entry.run,
		});
	},
};
