import { createHash, timingSafeEqual } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

/**
 * The service's callback body is not documented. Everything here reads it defensively: the
 * task id is the only thing taken from it when verification is on (the status endpoint then
 * supplies the authoritative task); the claimed status is only compared with the service's.
 */

/** A terminal outcome, or a status that means "still running". `undefined`: no usable claim. */
export type StatusClass = 'finished' | 'failed' | 'pending';

export interface ParsedCallback {
	taskId: string;
	/** The status word exactly as the body gave it, if any. */
	rawStatus?: string;
	/** What that word means, when it is recognisable. */
	claimed?: StatusClass;
	/** The object the task id was found in: the body's own idea of the task. */
	task: IDataObject;
}

export class CallbackBodyError extends Error {}

const MAX_TASK_ID_LENGTH = 256;
/** Wrappers a task object is plausibly nested in, in the order they are searched. */
const WRAPPER_KEYS = ['data', 'task', 'result', 'payload', 'body', 'detail', 'output'];
const MAX_DEPTH = 3;

const normaliseKey = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Keys that name the task id unambiguously (task_id, taskId, task-id, TaskID...). */
const TASK_ID_KEYS = new Set(['taskid', 'generationtaskid', 'jobid']);
const STATUS_KEYS = new Set(['status', 'taskstatus', 'state', 'taskstate']);
const EVENT_KEYS = new Set(['event', 'eventtype', 'type']);

const FINISHED_WORDS = ['finished', 'completed', 'complete', 'succeeded', 'success', 'successful', 'done'];
const FAILED_WORDS = ['failed', 'failure', 'error', 'errored', 'cancelled', 'canceled'];
const PENDING_WORDS = [
	'notstarted',
	'progress',
	'pending',
	'queued',
	'processing',
	'running',
	'inprogress',
	'started',
	'submitted',
	'waiting',
];

/**
 * Classifies a status or event word: `finished`, `task.finished`, `TASK_COMPLETED`, `failed`,
 * `generation.failed`, `not_started`... Unknown words give `undefined` (no claim), so an
 * unfamiliar vocabulary never blocks a genuine callback: the service's answer decides.
 */
export function classifyStatus(value: unknown): StatusClass | undefined {
	if (typeof value !== 'string') return undefined;
	const words = value.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
	// Failure words win anywhere ("failed_to_complete"); a negation makes it still running.
	if (words.some((w) => FAILED_WORDS.includes(w))) return 'failed';
	if (words.some((w) => w === 'not' || PENDING_WORDS.includes(w))) return 'pending';
	if (words.some((w) => FINISHED_WORDS.includes(w))) return 'finished';
	return undefined;
}

function isObject(value: unknown): value is IDataObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/** JSON text (or bytes of it) becomes a value; anything else is returned unchanged. */
function maybeJson(value: unknown): unknown {
	let text: string | undefined;
	if (Buffer.isBuffer(value)) text = value.toString('utf8');
	else if (typeof value === 'string') text = value;
	if (text === undefined) return value;
	const trimmed = text.trim();
	if (!trimmed.startsWith('{') && !trimmed.startsWith('[') && !trimmed.startsWith('"')) return value;
	try {
		const parsed: unknown = JSON.parse(trimmed);
		// A JSON string holding JSON (double-encoded bodies exist in the wild).
		return typeof parsed === 'string' ? maybeJson(parsed) : parsed;
	} catch {
		return value;
	}
}

/** Turns whatever the request carried into an object, or explains why it cannot. */
export function normaliseBody(body: unknown, rawBody?: unknown): IDataObject {
	let value = maybeJson(body);
	const empty =
		value === undefined ||
		value === null ||
		value === '' ||
		(isObject(value) && Object.keys(value).length === 0);
	if (empty && rawBody !== undefined) value = maybeJson(rawBody);
	if (Array.isArray(value)) {
		// Some senders batch events: one callback is one task, so only a single element is taken.
		if (value.length !== 1) {
			throw new CallbackBodyError(
				`The callback body is a list of ${value.length} entries; expected one task object`,
			);
		}
		value = maybeJson(value[0]);
	}
	if (!isObject(value)) {
		const shown = typeof value === 'string' ? `"${value.slice(0, 60)}"` : String(value);
		throw new CallbackBodyError(`The callback body is not a JSON object (got ${shown})`);
	}
	return value;
}

function validTaskId(value: unknown): string | undefined {
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	if (typeof value !== 'string') return undefined;
	const id = value.trim();
	if (id === '' || id.length > MAX_TASK_ID_LENGTH) return undefined;
	// Printable, no whitespace: the id goes into the status URL (encoded) and into logs.
	if (!/^[\x21-\x7e]+$/.test(id)) return undefined;
	return id;
}

function findKey(obj: IDataObject, keys: Set<string>): unknown {
	for (const [key, value] of Object.entries(obj)) {
		if (keys.has(normaliseKey(key))) return value;
	}
	return undefined;
}

/** The body and the wrapper objects below it, breadth first, with their depth. */
function candidates(root: IDataObject): Array<{ obj: IDataObject; depth: number }> {
	const out: Array<{ obj: IDataObject; depth: number }> = [];
	const queue: Array<{ obj: IDataObject; depth: number }> = [{ obj: root, depth: 0 }];
	while (queue.length > 0) {
		const current = queue.shift() as { obj: IDataObject; depth: number };
		out.push(current);
		if (current.depth >= MAX_DEPTH) continue;
		for (const key of WRAPPER_KEYS) {
			const entry = Object.entries(current.obj).find(([k]) => k.toLowerCase() === key);
			if (!entry) continue;
			const inner = maybeJson(entry[1]);
			const child = Array.isArray(inner) && inner.length === 1 ? inner[0] : inner;
			if (isObject(child)) queue.push({ obj: child, depth: current.depth + 1 });
		}
	}
	return out;
}

/**
 * Finds the task id and the claimed status in a callback body of any plausible shape: the
 * status response `{code, data: {task_id, status, ...}}`, a flat task, `taskId`/`id` variants,
 * nested `task`/`result`/`payload` wrappers, event envelopes, JSON strings.
 */
export function parseCallbackBody(body: unknown, rawBody?: unknown): ParsedCallback {
	const root = normaliseBody(body, rawBody);
	const found = candidates(root);

	// An explicit task-id key anywhere wins over a generic `id`, which in an event envelope
	// (`{id: "evt_1", data: {...}}`) is the event's id, not the task's.
	let hit: { obj: IDataObject; id: string } | undefined;
	for (const { obj } of found) {
		const id = validTaskId(findKey(obj, TASK_ID_KEYS));
		if (id) {
			hit = { obj, id };
			break;
		}
	}
	if (!hit) {
		// A generic `id`: inner task objects first, the envelope itself last.
		for (const { obj } of [...found.slice(1), found[0]]) {
			const id = validTaskId(obj.id);
			if (id) {
				hit = { obj, id };
				break;
			}
		}
	}
	if (!hit) {
		const keys = Object.keys(root).slice(0, 10).join(', ') || 'none';
		throw new CallbackBodyError(
			`The callback body has no task id (looked for task_id, taskId, id and the same inside data, task, result or payload; top-level keys: ${keys})`,
		);
	}

	let rawStatus: string | undefined;
	let claimed: StatusClass | undefined;
	const tryStatus = (value: unknown) => {
		if (claimed !== undefined || typeof value !== 'string' || value.trim() === '') return;
		rawStatus ??= value;
		const cls = classifyStatus(value);
		if (cls) {
			rawStatus = value;
			claimed = cls;
		}
	};
	tryStatus(findKey(hit.obj, STATUS_KEYS));
	// Event envelopes name the outcome on the outside: {event: "task.finished", data: {...}}.
	for (const { obj } of found) tryStatus(findKey(obj, STATUS_KEYS));
	for (const { obj } of found) tryStatus(findKey(obj, EVENT_KEYS));

	return { taskId: hit.id, rawStatus, claimed, task: hit.obj };
}

/**
 * Compares the secret from the callback URL with the configured one in constant time (both
 * are hashed first, so neither the content nor the length leaks through timing).
 */
export function secretMatches(provided: unknown, expected: string): boolean {
	if (typeof provided !== 'string') return false;
	const a = createHash('sha256').update(provided, 'utf8').digest();
	const b = createHash('sha256').update(expected, 'utf8').digest();
	return timingSafeEqual(a, b);
}

export type EventFilter = 'any' | 'finished' | 'failed';

export function eventWanted(filter: EventFilter, status: StatusClass): boolean {
	if (status === 'pending') return false;
	return filter === 'any' || filter === status;
}

/** A query parameter as one string: repeated parameters (`?ref=a&ref=b`) keep the first. */
export function queryValue(query: unknown, name: string): string | undefined {
	if (!isObject(query)) return undefined;
	const value = query[name];
	if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
	return typeof value === 'string' ? value : undefined;
}

/** How long and how many deliveries are remembered to drop duplicates. */
export const DEDUPE_LIMITS = { maxAgeMs: 3 * 24 * 60 * 60 * 1000, maxEntries: 1000 };

/**
 * Records `key` in `store` (task id + status -> time first seen) and says whether it was new.
 * Old and excess entries are dropped, so the store stays small inside workflow static data.
 */
export function rememberDelivery(
	store: IDataObject,
	key: string,
	now: number,
	limits: { maxAgeMs: number; maxEntries: number } = DEDUPE_LIMITS,
): boolean {
	for (const [k, seen] of Object.entries(store)) {
		if (typeof seen !== 'number' || now - seen > limits.maxAgeMs) delete store[k];
	}
	const seenAt = store[key];
	if (typeof seenAt === 'number') return false;
	store[key] = now;
	const keys = Object.keys(store);
	if (keys.length > limits.maxEntries) {
		keys
			.sort((x, y) => (store[x] as number) - (store[y] as number))
			.slice(0, keys.length - limits.maxEntries)
			.forEach((k) => delete store[k]);
	}
	return true;
}

export function forgetDelivery(store: IDataObject, key: string): void {
	delete store[key];
}

export const deliveryKey = (taskId: string, status: StatusClass) => `${taskId}:${status}`;
