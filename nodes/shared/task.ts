import { z } from 'zod';

/**
 * The service's task as the nodes see it, parsed from the status endpoint or a callback body.
 * Shared by the Media Generation node and its trigger.
 */
export interface TaskFile {
	file_url: string;
	file_type?: string;
}

export interface Task {
	task_id: string;
	status: string;
	progress?: number;
	files?: TaskFile[];
	created_time?: string;
	error_message?: string | null;
}

export interface SubmittedTask {
	task_id: string;
	status: string;
	created_time?: string;
}

/** Longest task_id accepted (the spec gives none; real ids are far shorter). */
export const TASK_ID_MAX_LENGTH = 200;
/** Characters of a plausible task_id: letters, digits and - _ . ~ : + = @ (no "/", "?", "#", "%", spaces). */
const TASK_ID_CHARS = /^[A-Za-z0-9\-_.~:+=@]+$/;

/**
 * The one rule for a plausible task_id, shared by every operation that names a task and by
 * the trigger: 1 to 200 characters from TASK_ID_CHARS, and not made of dots alone ("." and
 * ".." would be read as path segments and leave the status path). Returns what is wrong, in
 * words fit for an error message ("… is …; allowed: …"), or undefined when the id is plausible.
 */
export function taskIdProblem(id: unknown): string | undefined {
	const allowed = `allowed: 1 to ${TASK_ID_MAX_LENGTH} letters, digits and - _ . ~ : + = @, not only dots`;
	if (typeof id !== 'string' || id === '') return `is empty; ${allowed}`;
	const shown = JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id);
	if (id.length > TASK_ID_MAX_LENGTH) return `${shown} is ${id.length} characters long; ${allowed}`;
	if (!TASK_ID_CHARS.test(id))
		return `${shown} contains characters a task_id does not have; ${allowed}`;
	if (/^\.+$/.test(id)) return `${shown} is only dots; ${allowed}`;
	return undefined;
}

/** Whether `id` passes taskIdProblem. */
export const isPlausibleTaskId = (id: unknown): id is string => taskIdProblem(id) === undefined;

/** `finished` and `failed` are the only final states; anything else means "still processing". */
export const isTerminal = (status: string): boolean => status === 'finished' || status === 'failed';

// Tolerant where the spec is silent (unknown extra fields, numbers sent as strings, progress
// as a float), strict where the node depends on a field (task_id, status, file_url).
const idSchema = z.union([z.string().min(1), z.number()]).transform((v) => String(v));
const progressSchema = z
	.union([z.number(), z.string().regex(/^\s*\d+(\.\d+)?\s*$/)])
	.transform((v) => Math.max(0, Math.min(100, Number(v))));
const fileSchema = z
	.object({
		file_url: z.string().min(1),
		file_type: z.string().nullish(),
	})
	.passthrough();

const taskSchema = z
	.object({
		task_id: idSchema,
		status: z.string().min(1),
		progress: progressSchema.nullish(),
		files: z.array(fileSchema).nullish(),
		created_time: z.string().nullish(),
		error_message: z.string().nullish(),
	})
	.passthrough();

const codeSchema = z.union([z.number(), z.string()]).transform((v) => Number(v));

const envelopeSchema = z.object({ code: codeSchema, data: z.unknown().optional() }).passthrough();

/** Why a response body could not be used; `kind` drives retry decisions. */
export class ResponseShapeError extends Error {
	constructor(
		message: string,
		readonly kind: 'malformed' | 'envelope',
		readonly code?: number,
	) {
		super(message);
		this.name = 'ResponseShapeError';
	}
}

function describeIssues(error: z.ZodError): string {
	return error.issues
		.slice(0, 3)
		.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
		.join('; ');
}

function preview(body: unknown): string {
	const text = typeof body === 'string' ? body : JSON.stringify(body);
	if (text === undefined) return String(body);
	return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function envelopeMessage(envelope: Record<string, unknown>): string {
	for (const key of ['message', 'msg', 'error', 'detail']) {
		const value = envelope[key];
		if (typeof value === 'string' && value) return value;
		if (
			value &&
			typeof value === 'object' &&
			typeof (value as { message?: unknown }).message === 'string'
		) {
			return (value as { message: string }).message;
		}
	}
	return '';
}

/** Unwraps `{ code, data }`; a `code` other than 200 is an error even under HTTP 200. */
export function unwrapEnvelope(body: unknown): unknown {
	let parsedBody = body;
	if (typeof body === 'string') {
		let parsedJson = true;
		try {
			parsedBody = JSON.parse(body);
		} catch {
			parsedJson = false;
		}
		if (!parsedJson) {
			throw new ResponseShapeError(
				`The service answered with something that is not JSON: ${preview(body)}`,
				'malformed',
			);
		}
	}
	if (Buffer.isBuffer(parsedBody)) {
		return unwrapEnvelope(parsedBody.toString('utf8'));
	}
	const envelope = envelopeSchema.safeParse(parsedBody);
	if (!envelope.success) {
		throw new ResponseShapeError(
			`The service's answer lacks the expected { code, data } envelope (${describeIssues(envelope.error)}): ${preview(parsedBody)}`,
			'malformed',
		);
	}
	const { code, data } = envelope.data;
	if (code !== 200) {
		const detail = envelopeMessage(envelope.data as Record<string, unknown>);
		throw new ResponseShapeError(
			`The service answered with code ${code}${detail ? `: ${detail}` : ''}`,
			'envelope',
			code,
		);
	}
	return data;
}

function toTask(data: z.infer<typeof taskSchema>): Task {
	const task: Task = { task_id: data.task_id, status: data.status };
	if (data.progress !== undefined && data.progress !== null) task.progress = data.progress;
	if (data.files) {
		task.files = data.files.map((f) => {
			const file: TaskFile = { file_url: f.file_url };
			if (f.file_type) file.file_type = f.file_type;
			return file;
		});
	}
	if (data.created_time) task.created_time = data.created_time;
	if (data.error_message !== undefined) task.error_message = data.error_message;
	return task;
}

/** Parses the `data` object of a task (status response or callback body without envelope). */
export function parseTaskData(data: unknown): Task {
	const parsed = taskSchema.safeParse(data);
	if (!parsed.success) {
		throw new ResponseShapeError(
			`The task in the service's answer is not usable (${describeIssues(parsed.error)}): ${preview(data)}`,
			'malformed',
		);
	}
	return toTask(parsed.data);
}

/** Status endpoint body → Task. Throws ResponseShapeError (an Error) with a descriptive message. */
export function parseStatusResponse(body: unknown): Task {
	return parseTaskData(unwrapEnvelope(body));
}

const submitSchema = z
	.object({ task_id: idSchema, status: z.string().nullish(), created_time: z.string().nullish() })
	.passthrough();

/** Submit endpoint body → { task_id, status, created_time }. */
export function parseSubmitResponse(body: unknown): SubmittedTask {
	const data = unwrapEnvelope(body);
	const parsed = submitSchema.safeParse(data);
	if (!parsed.success) {
		throw new ResponseShapeError(
			`The service accepted the request but its answer has no usable task_id (${describeIssues(parsed.error)}): ${preview(data)}`,
			'malformed',
		);
	}
	const result: SubmittedTask = {
		task_id: parsed.data.task_id,
		status: parsed.data.status || 'not_started',
	};
	if (parsed.data.created_time) result.created_time = parsed.data.created_time;
	return result;
}
