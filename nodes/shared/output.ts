import type { IDataObject } from 'n8n-workflow';

import { describeFile } from './files';
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
 * When the files stop being valid: 24 h after the finish when it was observed; otherwise 24 h
 * after creation, which is the earliest the files can expire (they were made after it).
 */
function expiresAt(task: Task, finished: number | undefined, created: number): string | null {
	if (task.status !== 'finished') return null;
	if (finished !== undefined) return iso(finished + FILE_VALIDITY_MS);
	return Number.isFinite(created) ? iso(created + FILE_VALIDITY_MS) : null;
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
		expires_at: expiresAt(task, finished, created),
		error_message: task.error_message ?? null,
		reference: extra.reference ?? null,
	};
	return json;
}
