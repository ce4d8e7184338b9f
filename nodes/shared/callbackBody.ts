import type { IDataObject } from 'n8n-workflow';

import { isPlausibleTaskId } from './task';

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

export class CallbackBodyError extends Error {
	constructor(
		message: string,
		/** HTTP status of the answer: 400 (unusable body) or 413 (too large to read). */
		readonly httpStatus = 400,
	) {
		super(message);
	}
}

/** Longer strings are not even trimmed: the shared rule refuses anything over 200 characters. */
const MAX_TASK_ID_LENGTH = 256;
/** Status and event words longer than this are not a status: no claim. */
const MAX_STATUS_LENGTH = 100;
/**
 * The most text the trigger parses itself (a body n8n did not parse: text, unknown types). A
 * genuine callback is a few hundred bytes; n8n parses JSON bodies itself, up to its own limit.
 */
export const MAX_OWN_PARSE_BYTES = 1024 * 1024;
/** JSON text nested inside a value (double encoding, `data: "{...}"`) is read up to this size. */
const MAX_NESTED_JSON = 64 * 1024;
/** Top-level keys are quoted in an error only for bodies up to this size (listing costs). */
const MAX_BODY_FOR_KEY_LIST = 16 * 1024;
/** How much of anything received an answer may quote. */
export const EXCERPT_LENGTH = 60;

/** Wrappers a task object is plausibly nested in, in the order they are searched. */
const WRAPPER_KEYS = ['data', 'task', 'result', 'payload', 'body', 'detail', 'output'];
const MAX_DEPTH = 3;
/** Objects (the body and wrappers below it) looked into: a fixed bound, whatever the body. */
export const MAX_CANDIDATES = 12;

/**
 * Every spelling of a key made of `words` that the trigger accepts: task_id, taskId, TaskId,
 * TaskID, task-id, TASK_ID, taskid... Keys are looked up by these names, never by walking the
 * body's keys: the work per body is a fixed number of property reads, whatever its size.
 */
export function spellings(...words: string[]): string[] {
	const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
	const upperLast = (ws: string[]) => [...ws.slice(0, -1), ws[ws.length - 1].toUpperCase()];
	const camel = [words[0], ...words.slice(1).map(cap)];
	const pascal = words.map(cap);
	const casings = [
		words,
		words.map((w) => w.toUpperCase()),
		pascal,
		camel,
		upperLast(pascal),
		upperLast(camel),
	];
	const out = new Set<string>();
	for (const ws of casings) for (const sep of ['_', '', '-']) out.add(ws.join(sep));
	return [...out];
}

const TASK_ID_KEYS = [
	...spellings('task', 'id'),
	...spellings('generation', 'task', 'id'),
	...spellings('job', 'id'),
];
const ID_KEYS = spellings('id');
const STATUS_KEYS = [
	...spellings('status'),
	...spellings('task', 'status'),
	...spellings('state'),
	...spellings('task', 'state'),
];
const EVENT_KEYS = [...spellings('event'), ...spellings('event', 'type'), ...spellings('type')];
const WRAPPER_SPELLINGS = WRAPPER_KEYS.map((k) => spellings(k));

/** Property names the trigger may read in one object: the fixed bound on keys it examines. */
export const NAMES_PER_OBJECT =
	TASK_ID_KEYS.length +
	ID_KEYS.length +
	2 * STATUS_KEYS.length +
	EVENT_KEYS.length +
	WRAPPER_SPELLINGS.reduce((n, s) => n + s.length, 0);

const FINISHED_WORDS = [
	'finished',
	'completed',
	'complete',
	'succeeded',
	'success',
	'successful',
	'done',
];
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
	if (typeof value !== 'string' || value.length > MAX_STATUS_LENGTH) return undefined;
	const words = value
		.toLowerCase()
		.split(/[^a-z0-9]+/)
		.filter(Boolean);
	// Failure words win anywhere ("failed_to_complete"); a negation makes it still running.
	if (words.some((w) => FAILED_WORDS.includes(w))) return 'failed';
	if (words.some((w) => w === 'not' || PENDING_WORDS.includes(w))) return 'pending';
	if (words.some((w) => FINISHED_WORDS.includes(w))) return 'finished';
	return undefined;
}

function isObject(value: unknown): value is IDataObject {
	return (
		typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value)
	);
}

/** At most `max` characters of a received text, quoted, with the full length when cut. */
export function excerpt(text: string, max = EXCERPT_LENGTH): string {
	const cut = text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
	return JSON.stringify(cut);
}

/** What a value is, without ever serialising it (a deep value would overflow the stack). */
function describe(value: unknown): string {
	if (typeof value === 'string') return `the text ${excerpt(value)}`;
	if (Buffer.isBuffer(value)) return `${value.length} bytes that are not JSON`;
	if (Array.isArray(value)) return `a list of ${value.length} entries`;
	if (value === null) return 'null';
	if (value === undefined) return 'nothing';
	if (typeof value === 'object') return 'an object';
	return `${typeof value} ${excerpt(String(value))}`;
}

/**
 * JSON text (or bytes of it) becomes a value; anything else is returned unchanged. Text longer
 * than `limit` is not parsed. One level of double encoding is undone, for short texts only.
 */
function maybeJson(value: unknown, limit: number, nested = false): unknown {
	let text: string | undefined;
	if (Buffer.isBuffer(value)) {
		if (value.length > limit) return value;
		text = value.toString('utf8');
	} else if (typeof value === 'string') text = value;
	if (text === undefined || text.length > limit) return value;
	const trimmed = text.trim();
	if (!trimmed.startsWith('{') && !trimmed.startsWith('[') && !trimmed.startsWith('"'))
		return value;
	let parsed: unknown;
	try {
		parsed = JSON.parse(trimmed);
	} catch {
		return value;
	}
	// A JSON string holding JSON (double-encoded bodies exist in the wild).
	if (typeof parsed === 'string' && !nested) return maybeJson(parsed, MAX_NESTED_JSON, true);
	return parsed;
}

function sizeOf(value: unknown): number | undefined {
	if (Buffer.isBuffer(value) || typeof value === 'string') return value.length;
	return undefined;
}

function tooLarge(size: number): CallbackBodyError {
	return new CallbackBodyError(
		`The callback body is ${size} bytes of text; the trigger reads at most ${MAX_OWN_PARSE_BYTES} bytes of a body n8n did not parse (send Content-Type: application/json)`,
		413,
	);
}

/**
 * Turns what the request carried into an object, or explains why it cannot. `body` is what n8n
 * made of the request (an object for JSON, text for text types, `{}` for types it does not
 * parse); `rawBody` is consulted by parseCallbackBody only when `body` yields no task id.
 */
export function normaliseBody(body: unknown): IDataObject {
	const ownSize = sizeOf(body);
	if (ownSize !== undefined && ownSize > MAX_OWN_PARSE_BYTES) throw tooLarge(ownSize);
	let value = maybeJson(body, MAX_OWN_PARSE_BYTES);
	if (Array.isArray(value)) {
		// Some senders batch events: one callback is one task, so only a single element is taken.
		if (value.length !== 1) {
			throw new CallbackBodyError(
				`The callback body is a list of ${value.length} entries; expected one task object`,
			);
		}
		value = maybeJson(value[0], MAX_NESTED_JSON, true);
	}
	if (!isObject(value)) {
		throw new CallbackBodyError(`The callback body is not a JSON object (got ${describe(value)})`);
	}
	return value;
}

function validTaskId(value: unknown): string | undefined {
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	if (typeof value !== 'string' || value.length > MAX_TASK_ID_LENGTH + 64) return undefined;
	const id = value.trim();
	// The one rule every operation applies (nodes/shared/task.ts): no id can leave the status path.
	return isPlausibleTaskId(id) ? id : undefined;
}

/** The first of `names` the object has as its own property: direct reads, no key walk. */
function findKey(obj: IDataObject, names: readonly string[]): unknown {
	for (const name of names) {
		if (Object.prototype.hasOwnProperty.call(obj, name)) return obj[name];
	}
	return undefined;
}

/** The body and the wrapper objects below it, breadth first: at most MAX_CANDIDATES. */
function candidates(root: IDataObject): IDataObject[] {
	const out: IDataObject[] = [];
	const queue: Array<{ obj: IDataObject; depth: number }> = [{ obj: root, depth: 0 }];
	while (queue.length > 0 && out.length < MAX_CANDIDATES) {
		const current = queue.shift() as { obj: IDataObject; depth: number };
		out.push(current.obj);
		if (current.depth >= MAX_DEPTH) continue;
		for (const names of WRAPPER_SPELLINGS) {
			if (out.length + queue.length >= MAX_CANDIDATES) break;
			const entry = findKey(current.obj, names);
			if (entry === undefined) continue;
			const inner = maybeJson(entry, MAX_NESTED_JSON, true);
			const child = Array.isArray(inner) && inner.length === 1 ? inner[0] : inner;
			if (isObject(child)) queue.push({ obj: child, depth: current.depth + 1 });
		}
	}
	return out;
}

/** Up to five top-level keys, each cut short, for the "no task id" message of small bodies. */
function someKeys(root: IDataObject, size: number | undefined): string {
	if (size === undefined || size > MAX_BODY_FOR_KEY_LIST)
		return 'not listed for a body of this size';
	const keys: string[] = [];
	for (const key in root) {
		if (!Object.prototype.hasOwnProperty.call(root, key)) continue;
		if (keys.length === 5) {
			keys.push('…');
			break;
		}
		keys.push(key.length > 30 ? `${key.slice(0, 30)}…` : key);
	}
	return keys.join(', ') || 'none';
}

/**
 * Finds the task id and the claimed status in a callback body of any plausible shape: the
 * status response `{code, data: {task_id, status, ...}}`, a flat task, `taskId`/`id` variants,
 * nested `task`/`result`/`payload` wrappers, event envelopes, JSON strings.
 *
 * The work is bounded whatever the body: a fixed list of property names (NAMES_PER_OBJECT) is
 * read in at most MAX_CANDIDATES objects, and nothing the trigger parses itself is longer than
 * MAX_OWN_PARSE_BYTES. Nothing of the body is serialised or walked.
 */
export function parseCallbackBody(body: unknown, rawBody?: unknown): ParsedCallback {
	const rawSize = sizeOf(rawBody);
	// n8n leaves `body` empty for content types it does not parse: the raw bytes then count.
	const usableBody = body !== undefined && body !== null && body !== '';
	if (!usableBody && rawSize !== undefined && rawSize > MAX_OWN_PARSE_BYTES)
		throw tooLarge(rawSize);
	let root = normaliseBody(usableBody ? body : (rawBody ?? body));
	let hit = findTask(candidates(root));
	if (
		!hit &&
		usableBody &&
		rawSize !== undefined &&
		rawSize > 0 &&
		rawSize <= MAX_OWN_PARSE_BYTES
	) {
		// An empty or unrelated parsed body ({} for an unknown content type): try the raw bytes,
		// at most one parse of at most MAX_OWN_PARSE_BYTES.
		let fromRaw: IDataObject | undefined;
		try {
			fromRaw = normaliseBody(rawBody);
		} catch {
			fromRaw = undefined;
		}
		const rawHit = fromRaw ? findTask(candidates(fromRaw)) : undefined;
		if (fromRaw && rawHit) {
			root = fromRaw;
			hit = rawHit;
		}
	}
	if (!hit) {
		throw new CallbackBodyError(
			`The callback body has no task id (looked for task_id, taskId, id and the same inside data, task, result or payload; top-level keys: ${someKeys(root, rawSize ?? sizeOf(body))})`,
		);
	}
	const found = hit.found;

	let rawStatus: string | undefined;
	let claimed: StatusClass | undefined;
	const tryStatus = (value: unknown) => {
		if (claimed !== undefined || typeof value !== 'string' || value.trim() === '') return;
		const word = value.length > MAX_STATUS_LENGTH ? `${value.slice(0, MAX_STATUS_LENGTH)}…` : value;
		rawStatus ??= word;
		const cls = classifyStatus(value);
		if (cls) {
			rawStatus = word;
			claimed = cls;
		}
	};
	tryStatus(findKey(hit.obj, STATUS_KEYS));
	// Event envelopes name the outcome on the outside: {event: "task.finished", data: {...}}.
	for (const obj of found) tryStatus(findKey(obj, STATUS_KEYS));
	for (const obj of found) tryStatus(findKey(obj, EVENT_KEYS));

	return { taskId: hit.id, rawStatus, claimed, task: hit.obj };
}

/** The object holding the task id among the candidates, and the id. */
function findTask(
	found: IDataObject[],
): { obj: IDataObject; id: string; found: IDataObject[] } | undefined {
	// An explicit task-id key anywhere wins over a generic `id`, which in an event envelope
	// (`{id: "evt_1", data: {...}}`) is the event's id, not the task's.
	for (const obj of found) {
		const id = validTaskId(findKey(obj, TASK_ID_KEYS));
		if (id) return { obj, id, found };
	}
	// A generic `id`: inner task objects first, the envelope itself last.
	for (const obj of [...found.slice(1), found[0]]) {
		const id = validTaskId(findKey(obj, ID_KEYS));
		if (id) return { obj, id, found };
	}
	return undefined;
}

export type EventFilter = 'any' | 'finished' | 'failed';

export function eventWanted(filter: EventFilter, status: StatusClass): boolean {
	if (status === 'pending') return false;
	return filter === 'any' || filter === status;
}

/** How long and how many deliveries are remembered to drop duplicates. */
export const DEDUPE_LIMITS = { maxAgeMs: 3 * 24 * 60 * 60 * 1000, maxEntries: 1000 };

/** Drops entries older than the age limit, malformed ones, and the oldest beyond maxEntries. */
export function pruneDeliveries(
	store: IDataObject,
	now: number,
	limits: { maxAgeMs: number; maxEntries: number } = DEDUPE_LIMITS,
): void {
	for (const [k, seen] of Object.entries(store)) {
		if (typeof seen !== 'number' || now - seen > limits.maxAgeMs) delete store[k];
	}
	const keys = Object.keys(store);
	if (keys.length > limits.maxEntries) {
		keys
			.sort((x, y) => (store[x] as number) - (store[y] as number))
			.slice(0, keys.length - limits.maxEntries)
			.forEach((k) => delete store[k]);
	}
}

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
	const seenAt = store[key];
	if (typeof seenAt === 'number' && now - seenAt <= limits.maxAgeMs) return false;
	store[key] = now;
	pruneDeliveries(store, now, limits);
	return true;
}

export function forgetDelivery(store: IDataObject, key: string): void {
	delete store[key];
}

export const deliveryKey = (taskId: string, status: StatusClass) => `${taskId}:${status}`;
