import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { downloadTaskFiles } from '../../shared/transport/downloads';
import { taskOutputJson } from '../../shared/output';
import type { Task } from '../../shared/task';
import { waitForTask, type WaitOptions } from '../polling/pollLoop';
import { POLL_PACES } from '../polling/schedule';
import type { ItemOutcome } from './batch';
import { downloadFailure, noFilesFailure, taskFailure, waitFailure } from './itemErrors';
import type { RunOptions } from './runOptions';
import type { ProgressReporter } from './progress';

export interface CompletionRequest {
	itemIndex: number;
	taskId: string;
	/** The `model` identifier, for the output and file names (unknown for Task operations). */
	model?: string;
	reference?: string;
	submittedAt?: number;
	/** Epoch ms the task started, for the poll schedule. */
	origin: number;
	originKnown: boolean;
	/** Read at once (an existing task) rather than after the schedule's first delay. */
	pollImmediately: boolean;
	/** See WaitOptions.learnOrigin. */
	learnOrigin?: (createdTime: string | undefined, now: number) => number | undefined;
	/** A status already read (skips waiting when final). */
	known?: Task;
	/** Epoch ms the final state was first seen, when `known` is final. */
	knownFinishedAt?: number;
	/** Wait at all (false: Task → Download Files, which needs a finished task now). */
	wait: boolean;
	run: RunOptions;
	progress?: ProgressReporter;
	/** The batch's duration learner and this task's kind (see WaitOptions.durations). */
	durations?: WaitOptions['durations'];
}

const timeoutText = (ms: number) =>
	ms % 60_000 === 0
		? `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}`
		: `${Math.round(ms / 1000)} s`;

function outputExtra(request: CompletionRequest, finishedAt?: number) {
	return {
		model: request.model,
		reference: request.reference,
		submittedAt: request.submittedAt,
		finishedAt,
	};
}

/**
 * From a task_id to the item the node outputs: waits for a final state (unless told not to),
 * fails the item for a failed task, downloads the files of a finished one.
 */
export async function completeTask(
	ctx: IExecuteFunctions,
	request: CompletionRequest,
): Promise<ItemOutcome> {
	const { itemIndex, taskId, run } = request;
	// The Timeout bounds the whole task where it is an option (waiting): downloads included.
	const deadlineAt = request.wait ? Date.now() + run.timeoutMs : undefined;
	let task = request.known;
	let finishedAt = request.knownFinishedAt;
	const isFinal = task !== undefined && (task.status === 'finished' || task.status === 'failed');

	if (!isFinal && request.wait) {
		let failure: ReturnType<typeof waitFailure> | undefined;
		try {
			const result = await waitForTask(ctx, taskId, {
				origin: request.origin,
				originKnown: request.originKnown,
				timeoutMs: run.timeoutMs,
				pollImmediately: request.pollImmediately,
				learnOrigin: request.learnOrigin,
				schedule: { ...POLL_PACES[run.pollPace], maxDelayMs: run.maxPollIntervalMs },
				durations: request.durations,
				onUpdate: (t) => request.progress?.update(itemIndex, taskId, t.status, t.progress),
				onReadFailure: (fault) =>
					ctx.logger.debug('Media Generation status read failed, polling goes on', {
						itemIndex,
						taskId,
						fault: fault.message,
					}),
			});
			task = result.task;
			finishedAt = result.finishedAt;
		} catch (error) {
			const base = taskOutputJson(
				task ?? { task_id: taskId, status: 'unknown' },
				outputExtra(request),
			);
			failure = waitFailure(ctx, itemIndex, error, taskId, base);
		}
		if (failure) {
			request.progress?.done(itemIndex, 'error');
			return { ok: false, ...failure };
		}
	}
	if (!task) task = { task_id: taskId, status: 'unknown' };
	request.progress?.done(itemIndex, task.status);

	const json = taskOutputJson(task, outputExtra(request, finishedAt));
	if (task.status === 'failed') return { ok: false, ...taskFailure(ctx, itemIndex, task, json) };
	// Finished without a single file: nothing for the next node, which expects the result.
	if (task.status === 'finished' && !task.files?.length) {
		return { ok: false, ...noFilesFailure(ctx, itemIndex, task, json) };
	}
	if (task.status !== 'finished' || !run.downloadFiles) {
		return { ok: true, data: { json, pairedItem: { item: itemIndex } } };
	}

	let downloaded: Awaited<ReturnType<typeof downloadTaskFiles>> | undefined;
	let failure: ReturnType<typeof downloadFailure> | undefined;
	try {
		downloaded = await downloadTaskFiles(ctx, task, {
			binaryProperty: run.binaryPropertyName,
			modelLabel: request.model,
			maxFileSizeMb: run.maxFileSizeMb,
			deadlineAt,
			deadlineName: `the node's Timeout (${timeoutText(run.timeoutMs)})`,
			onRetry: (fault, attempt) =>
				ctx.logger.debug('Media Generation download retried', {
					itemIndex,
					taskId,
					attempt,
					fault: fault.message,
				}),
		});
	} catch (error) {
		failure = downloadFailure(ctx, itemIndex, error, taskId, json);
	}
	if (failure || !downloaded) return { ok: false, ...(failure as NonNullable<typeof failure>) };
	const item: INodeExecutionData = {
		json: { ...json, files: downloaded.files } as IDataObject,
		binary: downloaded.binary,
		pairedItem: { item: itemIndex },
	};
	return { ok: true, data: item };
}
