import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
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

/** What an input item says about the task it carries, kept on the output item. */
export interface CarriedFacts {
	model?: string;
	reference?: string;
	submittedAt?: number;
}

/**
 * The reference, model and submission time of the item a Task operation receives (a Generate
 * output with Wait for Completion off, or a row that kept one), so that its result still finds
 * its row, order or customer. Only from an item about this task: one whose task_id is this one,
 * or that has none (a row keeping its reference in its own field). A submission time in the
 * future is not believed.
 */
export function carriedFacts(
	json: IDataObject | undefined,
	taskId: string,
	now: number,
): CarriedFacts {
	if (!json) return {};
	const itemTask = json.task_id;
	if (
		itemTask !== undefined &&
		itemTask !== null &&
		itemTask !== '' &&
		String(itemTask).trim() !== taskId
	)
		return {};
	const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
	const reference =
		text(json.reference) ??
		(typeof json.reference === 'number' ? String(json.reference) : undefined);
	const submitted = typeof json.submitted_at === 'string' ? Date.parse(json.submitted_at) : NaN;
	return {
		model: text(json.model),
		reference,
		submittedAt: Number.isFinite(submitted) && submitted <= now + 60_000 ? submitted : undefined,
	};
}
