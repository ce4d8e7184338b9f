import type { IDataObject, IExecuteFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	plainWords,
	submitMayHaveBeenAccepted,
	TransportError,
	type Fault,
} from '../../shared/transport/faults';
import type { Task } from '../../shared/task';
import { WaitTimeoutError } from '../polling/pollLoop';
import { filesExpired } from './outcome';

/** One item's failure: the error thrown without Continue On Fail, and the json it keeps. */
export interface ItemFailure {
	error: NodeApiError | NodeOperationError;
	/** Task fields to keep on the error item (task_id, status, …). */
	json: IDataObject;
}

export function faultOf(error: unknown): Fault | undefined {
	return error instanceof TransportError ? error.fault : undefined;
}

function nodeError(
	ctx: IExecuteFunctions,
	itemIndex: number,
	message: string,
	description: string,
	fault?: Fault,
): NodeApiError | NodeOperationError {
	message = plainWords(message);
	if (fault?.statusCode !== undefined && (fault.kind === 'http' || fault.kind === 'envelope')) {
		// A plain object as the "response": nothing of the request (headers, key) is carried.
		const httpCode = String(fault.statusCode);
		return new NodeApiError(ctx.getNode(), { message, httpCode } as JsonObject, {
			message,
			description,
			httpCode,
			itemIndex,
		});
	}
	return new NodeOperationError(ctx.getNode(), message, { itemIndex, description });
}

const pickUp = (taskId: string) =>
	`The task keeps running on the service: continue with Task → Wait for Completion (or Task → Get Status) and task_id ${taskId}.`;

/** A submission that failed. States plainly whether a task may exist (and be billed). */
export function submitFailure(
	ctx: IExecuteFunctions,
	itemIndex: number,
	error: unknown,
	json: IDataObject,
): ItemFailure {
	const fault = faultOf(error);
	if (!fault) return { error: asItemError(ctx, itemIndex, error), json };
	if (fault.kind === 'cancelled') return cancelled(ctx, itemIndex, json);
	if (fault.kind === 'config') {
		return {
			error: nodeError(ctx, itemIndex, `Item ${itemIndex}: ${fault.message}`, '', fault),
			json,
		};
	}
	if (submitMayHaveBeenAccepted(fault)) {
		const message = `Item ${itemIndex}: the submission may have been accepted by the service, but its answer was lost or unusable (${fault.message})`;
		const description =
			'It was NOT sent again: a repeat could create a second task and be billed twice. If a task was created, its task_id is unknown here: check the service before running this item again.';
		return {
			error: nodeError(ctx, itemIndex, message, description, fault),
			json: { ...json, submission: 'unknown' },
		};
	}
	const rejected =
		fault.kind === 'refused'
			? `Item ${itemIndex}: could not reach the service to submit (${fault.message}); no task was created`
			: `Item ${itemIndex}: the service rejected the submission: ${fault.message}; no task was created`;
	return {
		error: nodeError(
			ctx,
			itemIndex,
			rejected,
			fault.statusCode === 429 ? 'The service stayed over its rate limit for the whole wait.' : '',
			fault,
		),
		json: { ...json, submission: 'rejected' },
	};
}

/** The wait or the status read failed; the task_id is kept. */
export function waitFailure(
	ctx: IExecuteFunctions,
	itemIndex: number,
	error: unknown,
	taskId: string,
	json: IDataObject,
): ItemFailure {
	if (error instanceof WaitTimeoutError) {
		const last = error.lastTask;
		const state = last
			? ` (last status "${last.status}"${last.progress !== undefined ? `, ${last.progress}%` : ''})`
			: '';
		const message = `Item ${itemIndex}: task ${taskId} did not finish within the timeout of ${Math.round(error.waitedMs / 1000)} s${state}`;
		return {
			error: new NodeOperationError(ctx.getNode(), message, {
				itemIndex,
				description: `${pickUp(taskId)} Raise Options → Timeout for long videos.`,
			}),
			json: {
				...json,
				status: last?.status ?? json.status,
				progress: last?.progress ?? null,
				timed_out: true,
			},
		};
	}
	const fault = faultOf(error);
	if (!fault) return { error: asItemError(ctx, itemIndex, error), json };
	if (fault.kind === 'cancelled') return cancelled(ctx, itemIndex, json);
	const message = `Item ${itemIndex}: could not read the status of task ${taskId}: ${fault.message}`;
	const unknownTask =
		(fault.kind === 'http' || fault.kind === 'envelope') &&
		(fault.statusCode === 404 || fault.statusCode === 400);
	const description = unknownTask
		? `Check the task_id "${taskId}": the service does not know it.`
		: pickUp(taskId);
	return { error: nodeError(ctx, itemIndex, message, description, fault), json };
}

/** The task itself failed on the service. */
export function taskFailure(
	ctx: IExecuteFunctions,
	itemIndex: number,
	task: Task,
	json: IDataObject,
): ItemFailure {
	const reason = task.error_message || 'no reason given';
	return {
		error: new NodeOperationError(
			ctx.getNode(),
			plainWords(`Item ${itemIndex}: task ${task.task_id} failed: ${reason}`),
			{
				itemIndex,
				description: `The service reported status "failed" for task_id ${task.task_id} with error_message: ${reason}`,
			},
		),
		json,
	};
}

/**
 * The service reported the task finished but listed no files. Not a success: the next node
 * expects the result (a binary, or at least a file URL), and an item without one would fail
 * there, far from the cause, or pass silently. The task_id and status are kept.
 */
export function noFilesFailure(
	ctx: IExecuteFunctions,
	itemIndex: number,
	task: Task,
	json: IDataObject,
): ItemFailure {
	return {
		error: new NodeOperationError(
			ctx.getNode(),
			`Item ${itemIndex}: task ${task.task_id} finished, but the service listed no files for it`,
			{
				itemIndex,
				description: `The status of task_id ${task.task_id} is "finished" with an empty "files" list, so there is nothing to pass on. Check the task with Task → Get Status; if files appear, fetch them with Task → Download Files within 24 hours.`,
			},
		),
		json: { ...json, files: [] },
	};
}

/** The task finished but its files could not be fetched. */
export function downloadFailure(
	ctx: IExecuteFunctions,
	itemIndex: number,
	error: unknown,
	taskId: string,
	json: IDataObject,
): ItemFailure {
	const fault = faultOf(error);
	if (!fault) return { error: asItemError(ctx, itemIndex, error), json };
	if (fault.kind === 'cancelled') return cancelled(ctx, itemIndex, json);
	const message = plainWords(
		`Item ${itemIndex}: task ${taskId} finished, but a file could not be downloaded: ${fault.message}`,
	);
	return {
		error: new NodeOperationError(ctx.getNode(), message, {
			itemIndex,
			// A limit (kind config) refuses the files again until the setting it names changes.
			description:
				fault.kind === 'config'
					? `The file URLs stay valid 24 hours after generation: change what the message names, then try again with Task → Download Files and task_id ${taskId}.`
					: `The file URLs stay valid 24 hours after generation: try again with Task → Download Files and task_id ${taskId}.`,
		}),
		json: filesExpired(fault.statusCode, json.expires_at) ? { ...json, files_expired: true } : json,
	};
}

export function cancelled(
	ctx: IExecuteFunctions,
	itemIndex: number,
	json: IDataObject,
): ItemFailure {
	const taskNote =
		typeof json.task_id === 'string' ? ` Task ${json.task_id} keeps running on the service.` : '';
	return {
		error: new NodeOperationError(
			ctx.getNode(),
			`Item ${itemIndex}: the execution was cancelled.${taskNote}`,
			{
				itemIndex,
			},
		),
		json,
	};
}

/**
 * An item of a node run n8n lost (see lostRun in acceptedTasks.ts): it may have been submitted,
 * and its task_id is gone. The rule of a lost answer applies: not sent again.
 */
export function lostRunFailure(
	ctx: IExecuteFunctions,
	itemIndex: number,
	json: IDataObject,
): ItemFailure {
	return {
		error: new NodeOperationError(
			ctx.getNode(),
			`Item ${itemIndex}: n8n stopped while this node was running in the execution this Retry comes from: the item may have been submitted and accepted`,
			{
				itemIndex,
				description:
					'It was NOT sent again on this Retry: a repeat could create a second task and be billed twice, and n8n kept no record of its task_id (n8n was restarted, crashed or its worker was killed while the node ran). Look for the task in the service\'s dashboard: if there is one, fetch its files with Task → Download Files and its task_id; if there is none, run the workflow again (a new execution submits the item). For a Retry that returns the results after such a stop: Wait for Completion off, then Task → Wait for Completion, with the workflow setting "Save execution progress" on (see docs/reliability.md of the package).',
			},
		),
		json: { ...json, submission: 'unknown' },
	};
}

/**
 * A task accepted in the execution a Retry comes from whose status the credential's account
 * cannot read (401/403: the key is not valid there; 404/400: the account does not know the
 * task): the credential now points at another account or service. Not submitted again (it may
 * run, billed, on the first account); the task_id is kept. Undefined for any other fault: the
 * wait goes on as for any accepted task.
 */
export function resumedTaskUnknown(
	ctx: IExecuteFunctions,
	itemIndex: number,
	error: unknown,
	previous: { taskId?: string; account: 'same' | 'other' | 'unmatched' },
	json: IDataObject,
): ItemFailure | undefined {
	const fault = faultOf(error);
	const code = fault?.statusCode;
	if (!fault || (fault.kind !== 'http' && fault.kind !== 'envelope')) return undefined;
	if (code !== 401 && code !== 403 && code !== 404 && code !== 400) return undefined;
	const taskId = previous.taskId ?? '';
	const changed =
		previous.account === 'same'
			? "This node's credential now holds a key"
			: "This node's credential (or its Base URL) is not the one the task was submitted with, and it holds a key";
	const answer =
		code === 401 || code === 403
			? `refused the key (HTTP ${code})`
			: `does not know the task (HTTP ${code})`;
	const message = `Item ${itemIndex}: task ${taskId} was accepted in the execution this Retry comes from, and the service ${answer}: it was NOT submitted again`;
	return {
		error: nodeError(
			ctx,
			itemIndex,
			message,
			`${changed} of an account that cannot read this task. A repeat could create a second, billed task while the first one runs on the account that accepted it. To collect it: put that account's key back into the credential and retry, or fetch its files with Task → Download Files and task_id ${taskId} under that account. To generate it on the current account instead, run the workflow again (a new execution submits the item).`,
			fault,
		),
		json: { ...json, task_id: taskId, submission: 'other_account' },
	};
}

/**
 * An item a ledger of the node's previous version records with a task, whose digest no longer
 * matches: that version hashed the API key into it, so a changed key and a changed input look
 * alike. Not sent again (it may be the same task, billed); the task_id is kept.
 */
export function unmatchedLegacyTask(
	ctx: IExecuteFunctions,
	itemIndex: number,
	taskId: string,
	json: IDataObject,
): ItemFailure {
	return {
		error: new NodeOperationError(
			ctx.getNode(),
			`Item ${itemIndex}: an earlier version of this node submitted this item in the execution this Retry comes from (task ${taskId}), and either its input or the credential's API key changed since: it was NOT sent again`,
			{
				itemIndex,
				description: `That version cannot tell the two apart, and a repeat could create a second, billed task. If only the key changed, fetch the result with Task → Wait for Completion (or Task → Download Files) and task_id ${taskId}; to submit the item as it is now, run the workflow again (a new execution submits it).`,
			},
		),
		json: { ...json, task_id: taskId, submission: 'unknown' },
	};
}

/** Any other error, as the item's error: n8n's own errors keep their text, gain the item index. */
export function asItemError(
	ctx: IExecuteFunctions,
	itemIndex: number,
	error: unknown,
): NodeApiError | NodeOperationError {
	if (error instanceof NodeOperationError || error instanceof NodeApiError) {
		if (error.context.itemIndex === undefined) error.context.itemIndex = itemIndex;
		return error;
	}
	const message = error instanceof Error ? error.message : String(error);
	return new NodeOperationError(ctx.getNode(), plainWords(`Item ${itemIndex}: ${message}`), {
		itemIndex,
	});
}
