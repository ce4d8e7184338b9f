import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { taskIdProblem } from '../../../shared/task';

/** The Task ID field of the Task operations (each shows it with updateDisplayOptions). */
export const taskIdProperty: INodeProperties = {
	displayName: 'Task ID',
	name: 'taskId',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. {{ $json.task_id }}',
	description: 'The task_id the service returned when the task was submitted',
};

/** Reads the Task ID of one item; throws (before any request) when it is not plausible. */
export function readTaskId(ctx: IExecuteFunctions, itemIndex: number): string {
	const raw = ctx.getNodeParameter('taskId', itemIndex, '') as unknown;
	const value = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
	const problem = taskIdProblem(value);
	if (problem) {
		throw new NodeOperationError(
			ctx.getNode(),
			`Item ${itemIndex}: "Task ID" ${problem} (the task_id returned by a submission)`,
			{ itemIndex },
		);
	}
	return value;
}

/** The task's creation time as a schedule origin, when it is plausible on this clock. */
export function originFromCreatedTime(
	createdTime: string | undefined,
	now: number,
): number | undefined {
	if (!createdTime) return undefined;
	const created = Date.parse(createdTime);
	// Allow a minute of clock skew; anything further off is not trusted.
	if (!Number.isFinite(created) || created > now + 60_000) return undefined;
	return Math.min(created, now);
}
