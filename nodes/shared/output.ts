import type { IDataObject } from 'n8n-workflow';

import { describeFile } from './transport/fileNames';
import { scrubSecret } from './transport/faults';
import type { Task } from './task';

/** Generated files stay valid this long after the task finishes (spec: 24 hours). */
export const FILE_VALIDITY_MS = 24 * 60 * 60 * 1000;

export interface TaskOutputExtra {
	model?: string;
	/** The Callback Reference given at submission (the `ref` query parameter of the callback). */
	reference?: string;
	/** Epoch ms when the node submitted the task. */
	submittedAt?: number;
	/** Epoch ms when the node (or trigger) first saw the task final. */
	finishedAt?: number;
	/** File descriptions from downloadTaskFiles; built from the task's URLs when absent. */
	files?: IDataObject[];
}

const iso = (ms: number | undefined) =>
	ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString();

/**
 * When the files stop being valid, never later than the service's own times support. The spec
 * says files stay valid 24 h "after generation", and generation ended somewhere between the
 * task's creation and the moment a final status was seen: only creation + 24 h is sure. So:
 * created_time + 24 h (capped by first-seen-final + 24 h when the service's clock runs ahead);
 * without a created_time, the node's own submission time + 24 h (a task is created after it is
 * submitted); with neither, null. Shared by every operation and the trigger.
 */
export function expiresAt(
	task: Pick<Task, 'status' | 'created_time'>,
	times: { submittedAt?: number; finishedAt?: number } = {},
): string | null {
	if (task.status !== 'finished') return null;
	const created = task.created_time ? Date.parse(task.created_time) : Number.NaN;
	let start = Number.isFinite(created) ? created : times.submittedAt;
	if (start === undefined || !Number.isFinite(start)) return null;
	if (times.finishedAt !== undefined && Number.isFinite(times.finishedAt)) {
		start = Math.min(start, times.finishedAt);
	}
	return iso(start + FILE_VALIDITY_MS);
}

/**
 * The JSON of an output item for a task: the same shape from the node (any operation) and the
 * trigger, so downstream nodes do not care where the result came from.
 */
export function taskOutputJson(task: Task, extra: TaskOutputExtra = {}): IDataObject {
	const created = task.created_time ? Date.parse(task.created_time) : Number.NaN;
	const start = extra.submittedAt ?? (Number.isFinite(created) ? created : undefined);
	const finished =
		task.status === 'finished' || task.status === 'failed' ? extra.finishedAt : undefined;
	const files = extra.files ?? (task.files ?? []).map((f) => describeFile(f));
	const json: IDataObject = {
		task_id: task.task_id,
		model: extra.model ?? null,
		status: task.status,
		progress: task.progress ?? (task.status === 'finished' ? 100 : null),
		created_time: task.created_time ?? null,
		submitted_at: iso(extra.submittedAt),
		finished_at: iso(finished),
		wait_seconds:
			start !== undefined && finished !== undefined
				? Math.max(0, Math.round((finished - start) / 100) / 10)
				: null,
		files,
		expires_at: expiresAt(task, { submittedAt: extra.submittedAt, finishedAt: finished }),
		// A failure text may quote the callback_url with its secret: masked like every error.
		error_message: typeof task.error_message === 'string' ? scrubSecret(task.error_message) : null,
		reference: extra.reference ?? null,
	};
	return json;
}
