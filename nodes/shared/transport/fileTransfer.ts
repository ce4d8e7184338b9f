import type { IBinaryData, IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { attemptTimeout, cancelSignalOf, withRetries, type ApiContext } from './api';
import {
	classifyError,
	headerValue,
	isTransientForRead,
	retryAfterFromHeaders,
	TransportError,
	type Fault,
} from './faults';
import { discardBody, requestCheckedHops } from './fileHosts';
import { resolveMimeType } from './fileNames';
import {
	FETCH_ELSEWHERE,
	learnBinaryMode,
	n8nTooLargeFault,
	sizeLimitFor,
	tooLargeFault,
	type SizeLimit,
} from './fileSizeLimit';
import type { TaskFile } from '../task';

// Receiving one file's bytes into n8n's binary store, bounded (a deadline per file, a slow-host
// watchdog, the size limit on Content-Length and on the running count, nothing decoded
// leniently), and committing it only once every file of the task has arrived.

type BinaryInput = Parameters<ApiContext['helpers']['prepareBinaryData']>[0];
/** Node's stream.Readable (the type n8n's binary helpers take). */
type NodeReadable = Exclude<BinaryInput, Buffer>;
type ReadableClass = new (options: {
	highWaterMark?: number;
	objectMode?: boolean;
	read?: () => void;
	destroy?: (error: Error | null, callback: (error?: Error | null) => void) => void;
}) => NodeReadable;

/**
 * The stream class of a body n8n's HTTP client returned. Node code may not import node:stream
 * (n8n's community-node rules), but the body is one: its own class builds the stream handed to
 * the binary store.
 */
function readableClassOf(body: unknown): ReadableClass | undefined {
	for (
		let proto = body ? Object.getPrototypeOf(body) : null;
		proto;
		proto = Object.getPrototypeOf(proto)
	) {
		const ctor = (proto as { constructor?: unknown }).constructor as
			| { name?: unknown; from?: unknown }
			| undefined;
		if (ctor && ctor.name === 'Readable' && typeof ctor.from === 'function') {
			return ctor as unknown as ReadableClass;
		}
	}
	return undefined;
}

/**
 * The slow-host watchdog: over any window of STALL_MS in which the node is not pausing the host,
 * a body must move at least MIN_BYTES_PER_SECOND on average (a CDN always does; a host that
 * sends nothing, or drips a byte every few seconds, does not). A stalled attempt is retried
 * once: a second stall is the host, and more attempts would only multiply the wait.
 */
const STALL_MS = 30_000;
const MIN_BYTES_PER_SECOND = 16 * 1024;
const STALL_CODE = 'ERR_DOWNLOAD_STALLED';
const STALL_RETRIES = 1;

/** Each file, with its retries and redirects, must have arrived within this (default). */
export const FILE_DEADLINE_MS = 30 * 60_000;
const DEADLINE_CODE = 'ERR_DOWNLOAD_DEADLINE';
/** The code of a fault that ends a task's downloads (its deadline, its byte budget). */
export const TASK_LIMIT_CODE = 'ERR_TASK_DOWNLOAD_LIMIT';

/**
 * Chunks the node's stream holds for the binary store before it stops reading the body (each
 * one socket read, about 64 KB). In object mode the store takes them one by one, as they came:
 * never concatenated (a copy of each, and more garbage for V8 to collect); see
 * docs/performance.md.
 */
const GATE_CHUNKS = 16;

/**
 * Failures of n8n's own disk, in plain words (error messages must not carry the codes: n8n
 * replaces messages with some codes by a generic sentence). Retrying cannot help with these.
 */
const STORAGE_ERRORS: Record<string, string> = {
	ENOSPC: 'no space left on the device',
	EDQUOT: 'the disk quota is exceeded',
	EFBIG: 'the file is larger than the file system (or the process) allows',
	EROFS: 'the file system is read-only',
	EIO: 'input/output error',
	EACCES: 'permission denied',
	EPERM: 'operation not permitted',
	EMFILE: 'too many open files',
	ENFILE: 'too many open files in the system',
	ENOENT: 'its folder does not exist',
	ENOTDIR: 'a part of its path is not a folder',
};

function errorCode(error: unknown): string | undefined {
	let current = error;
	for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
		const code = (current as { code?: unknown }).code;
		if (typeof code === 'string') return code;
		current = (current as { cause?: unknown }).cause;
	}
	return undefined;
}

/** What n8n's binary store failing means for the user, or undefined when it is not the store. */
function storeFault(error: unknown): Fault | undefined {
	const tooLarge = n8nTooLargeFault(error);
	if (tooLarge) return tooLarge;
	const code = errorCode(error);
	return code && STORAGE_ERRORS[code] ? storageFault(code) : undefined;
}

function storageFault(code: string): Fault {
	return {
		kind: 'config',
		code,
		message: `n8n could not write the file to its binary data storage (${STORAGE_ERRORS[code]}). This is a problem of the n8n instance's disk, not of the file host: free space where n8n keeps binary data (N8N_BINARY_DATA_STORAGE_PATH), then run the item again. Not retried`,
	};
}

/** What all the files of one task share: a deadline and a byte budget. */
export interface TaskLimits {
	/** Epoch ms by which every file of the task must have arrived. */
	deadlineAt?: number;
	/** How the deadline reads in a message ("the node's Timeout (1 minute)"). */
	deadlineName?: string;
	/** Bytes the task's files may take together. */
	maxBytes: number;
	/**
	 * What set maxBytes, for the message: the Max File Size (MB) set (that much per file), or
	 * 'automatic' (the option at 0: the default MAX_TASK_BYTES).
	 */
	maxBytesSetBy?: number | 'automatic';
	/** Bytes received so far by the task's files (counted by the transfers). */
	received: number;
}

export interface TransferOptions {
	signal?: AbortSignal;
	retries?: number;
	/** Per attempt, until the answer's headers arrive. */
	timeoutMs?: number;
	/** The slow-host watchdog's window (default 30 s). */
	stallMs?: number;
	/** Per file, all attempts and redirects included (default FILE_DEADLINE_MS). */
	deadlineMs?: number;
	/** Options → Max File Size (MB); undefined or 0: the default of n8n's binary data mode. */
	maxFileSizeMb?: number;
	/** The credential's Allow Private Network File Hosts (default false). */
	allowPrivateFileHosts?: boolean;
	/**
	 * The last (or only) file of its task: nothing is fetched after it, so its end need not be
	 * held back, and n8n's store reads the body itself (see hold).
	 */
	lastOfTask?: boolean;
	onRetry?: (fault: Fault, attempt: number, delayMs: number) => void;
}

/**
 * A file whose bytes all arrived and were checked, still open in n8n's binary store: n8n writes
 * a temporary file and only keeps it (renamed, with its metadata) when the stream ends. `commit`
 * ends the stream; `discard` fails it, and n8n deletes the temporary file. Holding every file of
 * a task this way until the last one arrived leaves nothing behind when any of them fails.
 */
export interface HeldFile {
	mimeType: string;
	commit(): Promise<{ binary: IBinaryData; mimeType: string; size: number }>;
	discard(): Promise<void>;
}

const downloadFault = (file: TaskFile, fault: Fault): TransportError =>
	new TransportError({
		...fault,
		message: `Downloading ${file.file_url} failed: ${fault.message}`,
	});

/** Receives one file (retrying transient faults), held open in the store. */
export async function receiveFile(
	ctx: ApiContext,
	file: TaskFile,
	fileName: string,
	options: TransferOptions,
	task: TaskLimits,
): Promise<HeldFile> {
	const signal = options.signal ?? cancelSignalOf(ctx);
	const fileDeadlineAt = Date.now() + (options.deadlineMs ?? FILE_DEADLINE_MS);
	const taskBinds = task.deadlineAt !== undefined && task.deadlineAt < fileDeadlineAt;
	const deadline: Deadline = {
		at: taskBinds ? (task.deadlineAt as number) : fileDeadlineAt,
		describe: (received) =>
			taskBinds
				? {
						code: TASK_LIMIT_CODE,
						message: `the task's files did not all arrive within ${task.deadlineName ?? 'the time allowed'} (${task.received} bytes had arrived). For a host this slow, ${FETCH_ELSEWHERE}. Not retried`,
					}
				: {
						code: DEADLINE_CODE,
						message: `the file did not arrive within ${minutesOrSeconds(options.deadlineMs ?? FILE_DEADLINE_MS)}, the limit for one file with its retries (${received} bytes had arrived). For a host this slow, ${FETCH_ELSEWHERE}. Not retried`,
					},
	};
	let stalls = 0;
	let fault: Fault;
	try {
		return await withRetries(
			ctx,
			async () =>
				await receiveOnce(ctx, file, fileName, signal, {
					timeoutMs: options.timeoutMs ?? 60_000,
					stallMs: options.stallMs ?? STALL_MS,
					deadline,
					task,
					maxFileSizeMb: options.maxFileSizeMb,
					allowPrivate: options.allowPrivateFileHosts === true,
					lastOfTask: options.lastOfTask === true,
				}),
			(f) => {
				if (f.code === DEADLINE_CODE || f.code === TASK_LIMIT_CODE) return false;
				if (f.code === STALL_CODE && ++stalls > STALL_RETRIES) return false;
				return isTransientForRead(f);
			},
			{ signal, retries: options.retries ?? 4, deadline: deadline.at, onRetry: options.onRetry },
		);
	} catch (error) {
		fault = classifyError(error, signal);
	}
	// (Thrown outside the catch block: the lint rule wants node errors there.)
	if (fault.kind === 'cancelled') throw new TransportError(fault);
	throw downloadFault(file, fault);
}

const minutesOrSeconds = (ms: number) =>
	ms >= 60_000 ? `${Math.round(ms / 60_000)} minutes` : `${Math.round(ms / 1000)} s`;

/** When a file must have arrived, and what to say when it did not. */
interface Deadline {
	at: number;
	describe(received: number): { code: string; message: string };
}

/** Commits a held file; a failure of n8n's store becomes the item's error. */
export async function commitOrThrow(
	held: HeldFile,
	file: TaskFile,
): Promise<{ binary: IBinaryData; mimeType: string; size: number }> {
	let fault: Fault;
	try {
		return await held.commit();
	} catch (error) {
		fault = error instanceof TransportError ? error.fault : classifyError(error);
	}
	throw downloadFault(file, fault);
}

function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
	return promise.then(
		() => undefined,
		(error: unknown) => error ?? new Error('failed'),
	);
}

interface AttemptLimits {
	timeoutMs: number;
	stallMs: number;
	deadline: Deadline;
	task: TaskLimits;
	maxFileSizeMb?: number;
	allowPrivate: boolean;
	lastOfTask: boolean;
}

async function receiveOnce(
	ctx: ApiContext,
	file: TaskFile,
	fileName: string,
	signal: AbortSignal | undefined,
	limits: AttemptLimits,
): Promise<HeldFile> {
	// Aborting the request is the one way to unblock a stalled body: n8n's HTTP client hands out
	// a wrapper stream whose destroy() waits for the next chunk.
	const controller = new AbortController();
	const forwardCancel = () => controller.abort();
	signal?.addEventListener('abort', forwardCancel, { once: true });
	if (signal?.aborted) controller.abort();
	const detach = () => signal?.removeEventListener('abort', forwardCancel);
	let response: { statusCode: number; headers: IDataObject; body: unknown } | undefined;
	let requestError: unknown;
	try {
		response = await requestCheckedHops(
			ctx,
			{
				url: file.file_url,
				method: 'GET',
				// Media files do not compress: ask for the bytes as they are. A host that compresses
				// anyway is refused below (n8n's client would decode it leniently).
				headers: { 'Accept-Encoding': 'identity' },
				encoding: 'stream',
				timeout: attemptTimeout(limits.timeoutMs, limits.deadline.at),
				abortSignal: controller.signal,
			},
			limits.allowPrivate,
		);
	} catch (error) {
		requestError = error;
	}
	if (!response) {
		detach();
		throw new TransportError(classifyError(requestError, signal));
	}
	const headers = response.headers;
	const body = response.body;
	const refuse = (fault: Fault): never => {
		controller.abort();
		discardBody(body);
		detach();
		throw new TransportError(fault);
	};
	if (response.statusCode < 200 || response.statusCode >= 300) {
		const expired =
			response.statusCode === 403 || response.statusCode === 404 || response.statusCode === 410;
		refuse({
			kind: 'http',
			statusCode: response.statusCode,
			retryAfterMs: retryAfterFromHeaders(headers),
			message: `the file host answered HTTP ${response.statusCode}${expired ? ' (files stay valid 24 hours after generation: the link may have expired)' : ''}`,
		});
	}
	// n8n's client decodes gzip, deflate, br (and zstd) and removes the header; anything left is
	// a coding nobody decoded: storing it would give the user a file they cannot open.
	const coding = String(headerValue(headers, 'content-encoding') ?? '')
		.trim()
		.toLowerCase();
	if (coding && coding !== 'identity') {
		refuse({
			kind: 'config',
			code: 'ERR_CONTENT_ENCODING',
			message: `the file host sent the file with Content-Encoding "${coding.slice(0, 40)}", which cannot be decoded. Not retried`,
		});
	}
	const Readable = readableClassOf(response.body);
	if (!Readable) {
		refuse({ kind: 'malformed', message: 'n8n returned no readable stream for the file' });
	}
	const mimeType = resolveMimeType(headerValue(headers, 'content-type'), file);
	const lengthHeader = headerValue(headers, 'content-length');
	const length = lengthHeader === undefined ? Number.NaN : Number(lengthHeader);
	const expected = Number.isFinite(length) && length >= 0 ? length : undefined;
	// Decided before the first byte is stored: a Content-Length over the limit is never fetched.
	let limit: SizeLimit | undefined;
	try {
		limit = await sizeLimitFor(ctx, limits.maxFileSizeMb, expected);
	} catch (error) {
		refuse(classifyError(error, signal));
	}
	const refusal = announcedRefusal(expected, limit as SizeLimit, limits.task);
	if (refusal) refuse(refusal);
	return await hold(ctx, response.body as NodeReadable, Readable as ReadableClass, {
		fileName,
		mimeType,
		expected,
		limit: limit as SizeLimit,
		controller,
		signal,
		stallMs: limits.stallMs,
		deadline: limits.deadline,
		task: limits.task,
		lastOfTask: limits.lastOfTask,
		detach,
	});
}

/**
 * Every limit decided on a file's Content-Length, before its first byte is stored: its own size
 * limit, and what the task's files may take together. The benchmarks' plan is held to this
 * (test/engine/bench-quick.test.ts), so that a new limit here cannot break `npm run bench`.
 */
export function announcedRefusal(
	announced: number | undefined,
	limit: SizeLimit,
	task: Pick<TaskLimits, 'maxBytes' | 'maxBytesSetBy' | 'received'>,
): Fault | undefined {
	if (announced === undefined) return undefined;
	if (announced > limit.bytes) return tooLargeFault(announced, true, limit);
	if (task.received + announced > task.maxBytes) return taskTooLargeFault(task, announced);
	return undefined;
}

function taskTooLargeFault(
	task: Pick<TaskLimits, 'maxBytes' | 'maxBytesSetBy' | 'received'>,
	more: number,
): Fault {
	const gb = (n: number) =>
		n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)} GB` : `${(n / 1024 ** 2).toFixed(1)} MB`;
	// The option that decides, named either way: the automatic default, or the value set.
	const by = task.maxBytesSetBy;
	const limit =
		by === 'automatic'
			? `${gb(task.maxBytes)}, the limit for one task while Options → Max File Size (MB) is 0 (automatic)`
			: by !== undefined
				? `${gb(task.maxBytes)}, the limit for one task set by Options → Max File Size (MB) (${by} MB for each file)`
				: `${gb(task.maxBytes)}, the limit for one task`;
	const how =
		by === 'automatic'
			? `Set Options → Max File Size (MB) to the size of the largest file (a task's files may then take that much each), or, to get such files, ${FETCH_ELSEWHERE}`
			: `To get such files, ${FETCH_ELSEWHERE}`;
	return {
		kind: 'config',
		code: TASK_LIMIT_CODE,
		message: `the task's files together exceed ${limit} (${task.received} bytes received, ${more} more announced or arriving). ${how}. Not retried`,
	};
}

/** A body whose byte count differs from its Content-Length was compressed and decoded by n8n. */
function decodedBodyFault(received: number, expected: number): Fault {
	return {
		kind: 'config',
		code: 'ERR_CONTENT_ENCODING',
		message: `the file host sent the file compressed although the node asks for it uncompressed (Accept-Encoding: identity): ${received}${received > expected ? ' or more' : ''} bytes came out of ${expected} sent. n8n's HTTP client decodes compressed bodies leniently, so a compressed file cut short cannot be told from a whole one: compressed downloads are refused. Have the file host serve the file as it is, or ${FETCH_ELSEWHERE}. Not retried`,
	};
}

/** What one transfer shares between its parts (the gate, the counter, the watchdog). */
interface Transfer {
	o: HoldOptions;
	source: NodeReadable;
	/** The body goes to the store without the gate (streamThrough). */
	direct: boolean;
	received: number;
	/** The node paused the host (the store is behind): the watchdog does not count this time. */
	paused: boolean;
	windowStart: number;
	windowBytes: number;
	/** The outcome is known (arrived, or failed): the watchdog stops. */
	settled: boolean;
	/** The node ended the transfer for a reason of its own (a limit). */
	stopped?: Fault;
	sourceError?: unknown;
	failed: (error: unknown) => void;
}

interface HoldOptions {
	fileName: string;
	mimeType: string;
	expected?: number;
	limit: SizeLimit;
	controller: AbortController;
	signal?: AbortSignal;
	stallMs: number;
	deadline: Deadline;
	task: TaskLimits;
	lastOfTask: boolean;
	detach: () => void;
}

/** Ends the transfer for a reason of the node's own (a limit), reported as `fault`. */
function stop(t: Transfer, fault: Fault): void {
	if (t.stopped || t.settled) return;
	t.stopped = fault;
	t.o.controller.abort();
	t.failed(new TransportError(fault));
}

/**
 * The stream handed to n8n's binary store: it passes the body on, pausing the host when the
 * store is behind, and holds back the end until the caller commits.
 */
function openGate(t: Transfer, Readable: ReadableClass): NodeReadable {
	const gate = new Readable({
		objectMode: true,
		highWaterMark: GATE_CHUNKS,
		read() {
			if (t.paused) {
				t.paused = false;
				t.windowStart = Date.now();
				t.windowBytes = 0;
			}
			pull(t, gate);
		},
		destroy(error, callback) {
			// The store gave up (a failed write) or the download failed: stop the transfer.
			if (!t.settled) t.o.controller.abort();
			callback(error);
		},
	});
	// The store may already have let go of the gate (its own write failed, or it finished) when
	// the gate is destroyed with the download's error: without a listener of its own, that error
	// would be an unhandled 'error' event that takes the process down. The failure itself reaches
	// the caller through `complete` and `storeFailure` in hold().
	gate.on('error', () => undefined);
	// The body is read as the store asks (n8n's own helpers read it the same way): no flowing
	// mode, so no pause and resume of the host for each chunk.
	t.source.on('readable', () => {
		if (!t.paused) pull(t, gate);
	});
	return gate;
}

/** Moves what the body has ready into the gate, each chunk counted against the limits. */
function pull(t: Transfer, gate: NodeReadable): void {
	for (;;) {
		if (t.stopped || t.settled) return;
		const chunk = t.source.read() as Buffer | null;
		if (chunk === null || overLimit(t, chunk)) return;
		// The store is behind: stop reading until it asks again (the watchdog does not count it).
		if (!gate.push(chunk)) {
			t.paused = true;
			return;
		}
	}
}

/** Counts a chunk against the limits: the fault, when it broke one (the transfer is stopped). */
function overLimit(t: Transfer, chunk: Buffer): Fault | undefined {
	t.received += chunk.length;
	t.windowBytes += chunk.length;
	t.o.task.received += chunk.length;
	// Counted after n8n's client decoded the body: what would be stored.
	if (t.received > t.o.limit.bytes) stop(t, tooLargeFault(t.received, false, t.o.limit));
	else if (t.o.expected !== undefined && t.received > t.o.expected) {
		stop(t, decodedBodyFault(t.received, t.o.expected));
	} else if (t.o.task.received > t.o.task.maxBytes) stop(t, taskTooLargeFault(t.o.task, 0));
	return t.stopped;
}

/**
 * A body that ended at another count than its Content-Length: only a decoded body can (with
 * identity coding Node's HTTP parser delivers exactly Content-Length bytes or fails).
 */
function endMismatch(t: Transfer): Fault | undefined {
	const expected = t.o.expected;
	return expected !== undefined && t.received !== expected
		? decodedBodyFault(t.received, expected)
		: undefined;
}

/**
 * The last file of a task goes to the store without a gate: the store reads the body itself, one
 * stream less for every chunk to pass (docs/performance.md, section 3). What the gate did is done
 * where each chunk enters the body: n8n's client adds every chunk, and the end, with the body's
 * push(), so the body's own push is wrapped. A chunk over a limit, or an end at another count
 * than the Content-Length (a body n8n's client decoded), destroys the body before the store has
 * the end: the store fails and drops its temporary file, as with the gate, so nothing is kept.
 */
function streamThrough(t: Transfer): NodeReadable {
	const body = t.source;
	const push = body.push.bind(body);
	const refuse = (fault: Fault) => {
		stop(t, fault);
		body.destroy(new TransportError(fault));
		return false;
	};
	body.push = (chunk: unknown, encoding?: BufferEncoding) => {
		if (t.stopped) return false;
		const fault = chunk === null ? endMismatch(t) : overLimit(t, chunk as Buffer);
		return fault ? refuse(fault) : push(chunk as Buffer | null, encoding);
	};
	// As for the gate: the failure reaches the caller through hold(), never as an unhandled event.
	body.on('error', () => undefined);
	return body;
}

/** The watchdog: the deadline, and a host that moves too little while the node is not pausing it. */
async function watch(t: Transfer): Promise<void> {
	const { stallMs, deadline, signal } = t.o;
	const minBytes = Math.round((MIN_BYTES_PER_SECOND * stallMs) / 1000);
	while (!t.settled && !t.stopped) {
		const ticked = await sleep(Math.min(1_000, stallMs / 3), signal).then(
			() => true,
			() => false,
		);
		if (!ticked || t.settled || t.stopped) return;
		const now = Date.now();
		if (now >= deadline.at) {
			return stop(t, { kind: 'timeout', ...deadline.describe(t.received) });
		}
		// Through the gate the node knows when it paused the host; a body streamed straight
		// through holds bytes the store has not taken yet when the store is behind.
		if (t.paused || (t.direct && t.source.readableLength > 0)) {
			t.windowStart = now;
			t.windowBytes = 0;
		} else if (now - t.windowStart >= stallMs) {
			if (t.windowBytes < minBytes) {
				const seconds = Math.round(stallMs / 1000);
				return stop(t, {
					kind: 'network',
					code: STALL_CODE,
					message:
						t.windowBytes === 0
							? `the file host sent no data for ${seconds} s`
							: `the file host sent only ${t.windowBytes} bytes in ${seconds} s (a download must move at least ${MIN_BYTES_PER_SECOND / 1024} KB/s)`,
				});
			}
			t.windowStart = now;
			t.windowBytes = 0;
		}
	}
}

/** The file, arrived and checked, held open in the store until commit or discard. */
function heldFile(
	ctx: ApiContext,
	t: Transfer,
	gate: NodeReadable,
	stored: Promise<IBinaryData>,
	storeFailure: Promise<unknown>,
): HeldFile {
	const { o } = t;
	return {
		mimeType: o.mimeType,
		async commit() {
			// A body streamed straight through ends by itself.
			if (!t.direct) gate.push(null);
			let binary: IBinaryData | undefined;
			let storeError: unknown;
			try {
				binary = await stored;
			} catch (error) {
				storeError = error;
			} finally {
				o.detach();
			}
			if (!binary) throw new TransportError(storeFault(storeError) ?? classifyError(storeError));
			learnBinaryMode(ctx, binary);
			binary.mimeType = o.mimeType;
			binary.fileName = o.fileName;
			const size = typeof binary.bytes === 'number' ? binary.bytes : t.received;
			return { binary, mimeType: o.mimeType, size };
		},
		async discard() {
			// A body streamed straight through is stored once it arrived: it stays with the
			// execution's binary data (n8n deletes it with the execution). Only a failed commit of
			// an earlier file of its task discards it then.
			gate.destroy(new Error('download discarded: another file of the task failed'));
			await storeFailure;
			o.detach();
		},
	};
}

/**
 * After a failure: stops the transfer, lets the store drop its temporary file, and returns
 * what to report (the store's fault, the node's own reason, a cut body, or the error).
 */
async function failedTransfer(
	t: Transfer,
	gate: NodeReadable,
	storeFailure: Promise<unknown>,
	failure: unknown,
): Promise<Fault> {
	const { o } = t;
	o.controller.abort();
	// A retry fetches the file again: this attempt's bytes are not the task's.
	o.task.received -= t.received;
	if (!gate.destroyed)
		gate.destroy(t.sourceError instanceof Error ? t.sourceError : new Error('download failed'));
	const storeError = await storeFailure;
	o.detach();
	const fromStore = storeFault(storeError);
	if (fromStore) return fromStore;
	if (t.stopped) return t.stopped;
	const fault = classifyError(t.sourceError ?? failure, o.signal);
	if (fault.kind !== 'cancelled' && o.expected !== undefined && t.received < o.expected) {
		return {
			kind: 'truncated',
			code: fault.code,
			message: `the download stopped after ${t.received} of ${o.expected} bytes`,
		};
	}
	return fault;
}

/**
 * Pipes the body into n8n's binary store through a stream of the node's own (openGate), which
 * counts the bytes against the limits (pull), watches for a slow or silent host and the
 * deadline (watch), and holds back the end until the caller commits (heldFile); the task's last
 * file goes to the store as it is (streamThrough), counted as it enters n8n's body. Resolves once
 * the whole body arrived; on any failure the store is handed the error (n8n then deletes its
 * temporary file) before this rejects.
 */
async function hold(
	ctx: ApiContext,
	source: NodeReadable,
	Readable: ReadableClass,
	o: HoldOptions,
): Promise<HeldFile> {
	let arrived!: () => void;
	const t: Transfer = {
		o,
		source,
		// A body that holds bytes already (an older n8n hands over the response itself, whose first
		// bytes may have come with its headers) goes through the gate: streamThrough counts what
		// enters the body from now on.
		direct: o.lastOfTask && source.readableLength === 0,
		received: 0,
		paused: false,
		windowStart: Date.now(),
		windowBytes: 0,
		settled: false,
		failed: () => undefined,
	};
	const complete = new Promise<void>((resolve, reject) => {
		arrived = resolve;
		t.failed = reject;
	});
	const gate = t.direct ? streamThrough(t) : openGate(t, Readable);
	source.once('end', () => arrived());
	source.once('error', (error: unknown) => {
		t.sourceError = error;
		t.failed(error);
	});
	const stored = ctx.helpers.prepareBinaryData(gate, o.fileName, o.mimeType);
	const storeFailure = rejectionOf(stored);
	void watch(t);

	let failure: unknown;
	try {
		await Promise.race([
			complete,
			storeFailure.then((error) => {
				throw error;
			}),
		]);
	} catch (error) {
		failure = error;
	}
	// Through the gate the end is checked here, before the store has it (streamThrough checks it
	// as it enters the body).
	const mismatch = failure === undefined ? endMismatch(t) : undefined;
	if (mismatch) {
		stop(t, mismatch);
		failure = new TransportError(mismatch);
	}
	t.settled = true;
	if (failure === undefined) return heldFile(ctx, t, gate, stored, storeFailure);
	throw new TransportError(await failedTransfer(t, gate, storeFailure, failure));
}
