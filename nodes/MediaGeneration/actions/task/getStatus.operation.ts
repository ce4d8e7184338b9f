import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { getTaskStatus } from '../../../shared/transport/api';
import { taskOutputJson } from '../../../shared/output';
import { finishBatch, guard, mapWithLimit, type ItemOutcome } from '../batch';
import { asItemError, waitFailure } from '../itemErrors';
import { DEFAULT_MAX_CONCURRENT } from '../runOptions';
import { readTaskId, taskIdProperty } from './taskId';

export const description: INodeProperties[] = [taskIdProperty('getStatus')];

/** One status read per item (retried on transient faults); no waiting, no download. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const items = this.getInputData();
	const ids: Array<string | ItemOutcome> = items.map((_, i) => {
		try {
			return readTaskId(this, i);
		} catch (error) {
			return { ok: false, error: asItemError(this, i, error), json: {} };
		}
	});
	const outcomes = await mapWithLimit(items.length, DEFAULT_MAX_CONCURRENT, async (i) => {
		const id = ids[i];
		if (typeof id !== 'string') return id;
		return await guard(this, i, async () => {
			let outcome: ItemOutcome;
			try {
				const task = await getTaskStatus(this, id);
				const json = taskOutputJson(task, {});
				outcome = { ok: true, data: { json, pairedItem: { item: i } } };
			} catch (error) {
				outcome = { ok: false, ...waitFailure(this, i, error, id, { task_id: id }) };
			}
			return outcome;
		});
	});
	return await finishBatch(this, outcomes);
}
