import type { INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { getTaskStatus } from '../../../shared/transport/api';
import { taskOutputJson } from '../../../shared/output';
import type { ItemOperation, ItemOutcome } from '../batch';
import { waitFailure } from '../itemErrors';
import { DEFAULT_MAX_CONCURRENT } from '../runOptions';
import { readTaskId, taskIdProperty } from './taskId';

export const description: INodeProperties[] = updateDisplayOptions(
	{ show: { resource: ['task'], operation: ['getStatus'] } },
	[taskIdProperty],
);

/** One status read per item (retried on transient faults); no waiting, no download. */
export const operation: ItemOperation<{ taskId: string }> = {
	prepare: (ctx, itemIndex) => ({ taskId: readTaskId(ctx, itemIndex) }),

	concurrency: () => DEFAULT_MAX_CONCURRENT,

	async execute(ctx, i, { taskId: id }) {
		let outcome: ItemOutcome;
		try {
			const task = await getTaskStatus(ctx, id);
			const json = taskOutputJson(task, {});
			outcome = { ok: true, data: { json, pairedItem: { item: i } } };
		} catch (error) {
			outcome = { ok: false, ...waitFailure(ctx, i, error, id, { task_id: id }) };
		}
		return outcome;
	},
};
