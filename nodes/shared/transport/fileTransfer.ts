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
 * The slow-host watchdog's window: a body that sends fewer than MIN_WINDOW_BYTES in this long
 * (nothing at all, or a drip of a byte every few seconds) is given up and the download retried.
 */
const STALL_MS = 60_000;
const MIN_WINDOW_BYTES = 16 * 1024;

/** Each file, with its retries and redirects, must have arrived within this (default). */
export const FILE_DEADLINE_MS = 30 * 60_000;
const DEADLINE_CODE = 'ERR_DOWNLOAD_DEADLINE';

/**
 * What the node's stream buffers for the binary store before it pauses the file host: one
 * socket read. A larger buffer would let the store's reads concatenate several chunks (a copy of
 * each, and more garbage for V8 to collect); see docs/performance.md.
 */
const GATE_HIGH_WATER_MARK = 64 * 1024;

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

export interface TransferOptions {
	signal?: AbortSignal;
	retries?: number;
	/** Per attempt, until the answer's headers arrive. */
	timeoutMs?: number;
	/** The slow-host watchdog's window (default 60 s). */
	stallMs?: number;
	/** Per file, all attempts and redirects included (default FILE_DEADLINE_MS). */
	deadlineMs?: number;
	/** Options → Max File Size (MB); undefined or 0: the default of n8n's binary data mode. */
	maxFileSizeMb?: number;
	/** The credential's Allow Private Network File Hosts (default false). */
	allowPrivateFileHosts?: boolean;
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
): Promise<HeldFile> {
	const signal = options.signal ?? cancelSignalOf(ctx);
	const deadlineMs = options.deadlineMs ?? FILE_DEADLINE_MS;
	const deadlineAt = Date.now() + deadlineMs;
	let fault: Fault;
	try {
		return await withRetries(
			ctx,
			async () =>
				await receiveOnce(ctx, file, fileName, signal, {
					timeoutMs: options.timeoutMs ?? 60_000,
					stallMs: options.stallMs ?? STALL_MS,
					deadlineAt,
					deadlineMs,
					maxFileSizeMb: options.maxFileSizeMb,
					allowPrivate: options.allowPrivateFileHosts === true,
				}),
			(f) => f.code !== DEADLINE_CODE && isTransientForRead(f),
			{ signal, retries: options.retries ?? 4, deadline: deadlineAt, onRetry: options.onRetry },
		);
	} catch (error) {
		fault = classifyError(error, signal);
	}
	// (Thrown outside the catch block: the lint rule wants node errors there.)
	if (fault.kind === 'cancelled') throw new TransportError(fault);
	throw downloadFault(file, fault);
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
	deadlineAt: number;
	deadlineMs: number;
	maxFileSizeMb?: number;
	allowPrivate: boolean;
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
				timeout: attemptTimeout(limits.timeoutMs, limits.deadlineAt),
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
	if (expected !== undefined && expected > (limit as SizeLimit).bytes) {
		refuse(tooLargeFault(expected, true, limit as SizeLimit));
	}
	return await hold(ctx, response.body as NodeReadable, Readable as ReadableClass, {
		fileName,
		mimeType,
		expected,
		limit: limit as SizeLimit,
		controller,
		signal,
		stallMs: limits.stallMs,
		deadlineAt: limits.deadlineAt,
		deadlineMs: limits.deadlineMs,
		detach,
	});
}

/** A body whose byte count differs from its Content-Length was compressed and decoded by n8n. */
function decodedBodyFault(received: number, expected: number): Fault {
	return {
		kind: 'config',
		code: 'ERR_CONTENT_ENCODING',
		message: `the file host sent the file compressed although the node asks for it uncompressed (Accept-Encoding: identity): ${received}${received > expected ? ' or more' : ''} bytes came out of ${expected} sent. n8n's HTTP client decodes compressed bodies leniently, so a compressed file cut short cannot be told from a whole one: compressed downloads are refused. Have the file host serve the file as it is, or ${FETCH_ELSEWHERE}. Not retried`,
	};
}

/**
 * Pipes the body into n8n's binary store through a stream of the node's own, which counts the
 * bytes against the limits, watches for a slow or silent host and the deadline, and holds back
 * the end until the caller commits. Resolves once the whole body arrived; on any failure the
 * store is handed the error (n8n then deletes its temporary file) before this rejects.
 */
async function hold(
	ctx: ApiContext,
	source: NodeReadable,
	Readable: ReadableClass,
	o: {
		fileName: string;
		mimeType: string;
		expected?: number;
		limit: SizeLimit;
		controller: AbortController;
		signal?: AbortSignal;
		stallMs: number;
		deadlineAt: number;
		deadlineMs: number;
		detach: () => void;
	},
): Promise<HeldFile> {
	let received = 0;
	let paused = false;
	let windowStart = Date.now();
	let windowBytes = 0;
	let settled = false;
	let stopped: Fault | undefined;
	let sourceError: unknown;
	let arrived!: () => void;
	let failed!: (error: unknown) => void;
	const complete = new Promise<void>((resolve, reject) => {
		arrived = resolve;
		failed = reject;
	});
	/** Ends the transfer for a reason of the node's own (a limit), reported as `fault`. */
	const stop = (fault: Fault) => {
		if (stopped || settled) return;
		stopped = fault;
		o.controller.abort();
		failed(new TransportError(fault));
	};
	const gate = new Readable({
		highWaterMark: GATE_HIGH_WATER_MARK,
		read() {
			if (!paused) return;
			paused = false;
			windowStart = Date.now();
			windowBytes = 0;
			source.resume();
		},
		destroy(error, callback) {
			// The store gave up (a failed write) or the download failed: stop the transfer.
			if (!settled) o.controller.abort();
			callback(error);
		},
	});
	// The store may already have let go of the gate (its own write failed, or it finished) when
	// the gate is destroyed with the download's error: without a listener of its own, that error
	// would be an unhandled 'error' event that takes the process down. The failure itself reaches
	// the caller through `complete` and `storeFailure`.
	gate.on('error', () => undefined);
	source.on('data', (chunk: Buffer) => {
		if (stopped) return;
		received += chunk.length;
		windowBytes += chunk.length;
		// Counted after n8n's client decoded the body: what would be stored.
		if (received > o.limit.bytes) return stop(tooLargeFault(received, false, o.limit));
		if (o.expected !== undefined && received > o.expected) {
			return stop(decodedBodyFault(received, o.expected));
		}
		if (!gate.push(chunk)) {
			paused = true;
			source.pause();
		}
	});
	source.once('end', () => arrived());
	source.once('error', (error: unknown) => {
		sourceError = error;
		failed(error);
	});
	const stored = ctx.helpers.prepareBinaryData(gate, o.fileName, o.mimeType);
	const storeFailure = rejectionOf(stored);
	// The watchdog: the deadline, and a host that sends (almost) nothing while the node is not
	// the one pausing it.
	void (async () => {
		while (!settled && !stopped) {
			const ticked = await sleep(Math.min(1_000, o.stallMs / 3), o.signal).then(
				() => true,
				() => false,
			);
			if (!ticked || settled || stopped) return;
			const now = Date.now();
			if (now >= o.deadlineAt) {
				return stop({
					kind: 'timeout',
					code: DEADLINE_CODE,
					message: `the file did not arrive within ${o.deadlineMs >= 60_000 ? `${Math.round(o.deadlineMs / 60_000)} minutes` : `${Math.round(o.deadlineMs / 1000)} s`}, the limit for one file with its retries (${received} bytes had arrived). For a host this slow, ${FETCH_ELSEWHERE}. Not retried`,
				});
			}
			if (paused) {
				windowStart = now;
				windowBytes = 0;
			} else if (now - windowStart >= o.stallMs) {
				if (windowBytes < MIN_WINDOW_BYTES) {
					const seconds = Math.round(o.stallMs / 1000);
					return stop({
						kind: 'network',
						message:
							windowBytes === 0
								? `the file host sent no data for ${seconds} s`
								: `the file host sent only ${windowBytes} bytes in ${seconds} s (a download must move at least ${MIN_WINDOW_BYTES / 1024} KB in that time)`,
					});
				}
				windowStart = now;
				windowBytes = 0;
			}
		}
	})();

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
	// Ended cleanly, but with another count than the Content-Length: only a decoded body can (with
	// identity coding Node's HTTP parser delivers exactly Content-Length bytes or fails).
	if (failure === undefined && o.expected !== undefined && received !== o.expected) {
		stop(decodedBodyFault(received, o.expected));
		failure = new TransportError(stopped as Fault);
	}
	settled = true;
	if (failure === undefined) {
		return {
			mimeType: o.mimeType,
			async commit() {
				gate.push(null);
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
				const size = typeof binary.bytes === 'number' ? binary.bytes : received;
				return { binary, mimeType: o.mimeType, size };
			},
			async discard() {
				gate.destroy(new Error('download discarded: another file of the task failed'));
				await storeFailure;
				o.detach();
			},
		};
	}
	// Failed: make sure the transfer stops and the store drops its temporary file.
	o.controller.abort();
	if (!gate.destroyed)
		gate.destroy(sourceError instanceof Error ? sourceError : new Error('download failed'));
	const storeError = await storeFailure;
	o.detach();
	const fromStore = storeFault(storeError);
	if (fromStore) throw new TransportError(fromStore);
	if (stopped) throw new TransportError(stopped);
	const fault = classifyError(sourceError ?? failure, o.signal);
	if (fault.kind !== 'cancelled' && o.expected !== undefined && received < o.expected) {
		throw new TransportError({
			kind: 'truncated',
			code: fault.code,
			message: `the download stopped after ${received} of ${o.expected} bytes`,
		});
	}
	throw new TransportError(fault);
}
