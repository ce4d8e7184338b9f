import type { IBinaryData, IBinaryKeyData, IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { cancelSignalOf, getApiCredentials, withRetries, type ApiContext } from './api';
import {
	classifyError,
	headerValue,
	isTransientForRead,
	retryAfterFromHeaders,
	scrubSecret,
	TransportError,
	type Fault,
} from './faults';
import type { Task, TaskFile } from '../task';

const MIME_BY_EXTENSION: Record<string, string> = {
	png: 'image/png',
	jpg: 'image/jpeg',
	jpeg: 'image/jpeg',
	webp: 'image/webp',
	gif: 'image/gif',
	mp4: 'video/mp4',
	webm: 'video/webm',
	mov: 'video/quicktime',
	mp3: 'audio/mpeg',
	wav: 'audio/wav',
	m4a: 'audio/mp4',
	ogg: 'audio/ogg',
	flac: 'audio/flac',
	json: 'application/json',
	txt: 'text/plain',
	srt: 'text/plain',
};

const EXTENSION_BY_MIME: Record<string, string> = {
	'image/png': 'png',
	'image/jpeg': 'jpg',
	'image/webp': 'webp',
	'image/gif': 'gif',
	'video/mp4': 'mp4',
	'video/webm': 'webm',
	'video/quicktime': 'mov',
	'audio/mpeg': 'mp3',
	'audio/mp3': 'mp3',
	'audio/wav': 'wav',
	'audio/x-wav': 'wav',
	'audio/mp4': 'm4a',
	'audio/ogg': 'ogg',
	'audio/flac': 'flac',
	'application/json': 'json',
	'text/plain': 'txt',
};

/** Guess by the spec's `file_type` (only `image` is shown; the others are plausible). */
const MIME_BY_FILE_TYPE: Record<string, string> = {
	image: 'image/png',
	video: 'video/mp4',
	audio: 'audio/mpeg',
	music: 'audio/mpeg',
};

/** Content-Types that say nothing about the file: fall back to the URL or `file_type`. */
const GENERIC_MIME = new Set([
	'application/octet-stream',
	'binary/octet-stream',
	'application/binary',
	'',
]);

/** The extension of the URL's path ("" if none or unknown). */
export function extensionFromUrl(url: string): string {
	let path = url;
	try {
		path = new URL(url).pathname;
	} catch {
		path = url.split(/[?#]/)[0];
	}
	const match = /\.([a-z0-9]{2,5})$/i.exec(path);
	const ext = match ? match[1].toLowerCase() : '';
	return MIME_BY_EXTENSION[ext] ? ext : '';
}

/** Mime type from the answer's Content-Type, else the URL's extension, else `file_type`. */
export function resolveMimeType(contentType: unknown, file: TaskFile): string {
	const raw = Array.isArray(contentType) ? contentType[0] : contentType;
	const header = typeof raw === 'string' ? raw.split(';')[0].trim().toLowerCase() : '';
	if (header && !GENERIC_MIME.has(header)) return header;
	const ext = extensionFromUrl(file.file_url);
	if (ext) return MIME_BY_EXTENSION[ext];
	const byType = MIME_BY_FILE_TYPE[(file.file_type ?? '').toLowerCase()];
	return byType ?? 'application/octet-stream';
}

/** File extension to use for a mime type, preferring the URL's own. */
export function resolveExtension(mimeType: string, file: TaskFile): string {
	const fromUrl = extensionFromUrl(file.file_url);
	if (fromUrl && MIME_BY_EXTENSION[fromUrl] === mimeType) return fromUrl;
	if (EXTENSION_BY_MIME[mimeType]) return EXTENSION_BY_MIME[mimeType];
	if (fromUrl) return fromUrl;
	const [type, sub] = mimeType.split('/');
	if (type && sub && /^[a-z0-9]{2,5}$/.test(sub)) return sub;
	return 'bin';
}

/** Lower-case letters, digits and dashes only ("vidmodel-2.0-fast/image-to-video" → "vidmodel-2-0-fast-image-to-video"). */
export function slug(text: string, max = 60): string {
	const s = text
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, '-')
		.replace(/^-+|-+$/g, '');
	return s.slice(0, max).replace(/-+$/, '') || 'media';
}

/** `<model-slug>-<task_id>-<n>.<ext>`, n counted from 1. */
export function fileNameFor(
	modelLabel: string | undefined,
	taskId: string,
	index: number,
	extension: string,
): string {
	const id = taskId.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 80) || 'task';
	return `${slug(modelLabel ?? 'media')}-${id}-${index + 1}.${extension}`;
}

/** `data` for the first file, then `data_1`, `data_2`… (with a custom base: `<base>`, `<base>_1`…). */
export function binaryPropertyFor(base: string, index: number): string {
	return index === 0 ? base : `${base}_${index}`;
}

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

function discard(body: unknown): void {
	const stream = body as { destroy?: (error?: Error) => void } | undefined;
	if (stream && typeof stream.destroy === 'function') stream.destroy();
}

/** A body that sends nothing for this long is given up (and the download retried). */
const STALL_MS = 60_000;

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

function storageFault(code: string): Fault {
	return {
		kind: 'config',
		code,
		message: `n8n could not write the file to its binary data storage (${STORAGE_ERRORS[code]}). This is a problem of the n8n instance's disk, not of the file host: free space where n8n keeps binary data (N8N_BINARY_DATA_STORAGE_PATH), then run the item again. Not retried`,
	};
}

/**
 * A file URL the node may fetch: http or https only. Anything else (file:, ftp:, data:, a bare
 * path) is refused before any request, not retried.
 */
export function checkFileUrl(url: unknown): Fault | undefined {
	const text = typeof url === 'string' ? url.trim() : '';
	const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
	const refuse = (message: string): Fault => ({
		kind: 'config',
		code: 'ERR_UNSUPPORTED_URL',
		message,
	});
	if (!text) return refuse('the task lists a file without a URL');
	let parsed: URL;
	try {
		parsed = new URL(text);
	} catch {
		return refuse(
			`the file URL ${shown} is not a valid web address: only http:// and https:// links are downloaded`,
		);
	}
	if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
		return refuse(
			`the file URL ${shown} uses "${parsed.protocol}", which is refused: only http:// and https:// links are downloaded`,
		);
	}
	return undefined;
}

export interface DownloadOptions {
	binaryProperty?: string;
	modelLabel?: string;
	signal?: AbortSignal;
	retries?: number;
	/** Per attempt, until the answer's headers arrive. */
	timeoutMs?: number;
	/** Give up on a body that sends nothing for this long (default 60 s). */
	stallMs?: number;
	onRetry?: (fault: Fault, attempt: number, delayMs: number) => void;
}

/**
 * A file whose bytes all arrived and were checked, still open in n8n's binary store: n8n writes
 * a temporary file and only keeps it (renamed, with its metadata) when the stream ends. `commit`
 * ends the stream; `discard` fails it, and n8n deletes the temporary file. Holding every file of
 * a task this way until the last one arrived leaves nothing behind when any of them fails.
 */
interface HeldFile {
	mimeType: string;
	commit(): Promise<{ binary: IBinaryData; mimeType: string; size: number }>;
	discard(): Promise<void>;
}

/** Receives one file (retrying transient faults), held open in the store. */
async function receiveFile(
	ctx: ApiContext,
	file: TaskFile,
	fileName: string,
	options: DownloadOptions,
): Promise<HeldFile> {
	const signal = options.signal ?? cancelSignalOf(ctx);
	const refused = checkFileUrl(file.file_url);
	let fault: Fault;
	if (refused) {
		fault = refused;
	} else {
		try {
			return await withRetries(
				ctx,
				async () =>
					await receiveOnce(ctx, file, fileName, signal, {
						timeoutMs: options.timeoutMs ?? 60_000,
						stallMs: options.stallMs ?? STALL_MS,
					}),
				isTransientForRead,
				{ signal, retries: options.retries ?? 4, onRetry: options.onRetry },
			);
		} catch (error) {
			fault = classifyError(error, signal);
		}
	}
	// (Thrown outside the catch block: the lint rule wants node errors there.)
	if (fault.kind === 'cancelled') throw new TransportError(fault);
	throw new TransportError({
		...fault,
		message: `Downloading ${file.file_url} failed: ${fault.message}`,
	});
}

/**
 * Streams one file into n8n's binary store. Uses the plain (unauthenticated) request helper: the
 * file hosts are not the API and must never see the key. Retries transient faults, including a
 * body cut short of its Content-Length; a failed attempt leaves no file in the store.
 */
export async function downloadFile(
	ctx: ApiContext,
	file: TaskFile,
	fileName: string,
	options: DownloadOptions = {},
): Promise<{ binary: IBinaryData; mimeType: string; size: number }> {
	const held = await receiveFile(ctx, file, fileName, options);
	return await commitOrThrow(held, file);
}

async function commitOrThrow(
	held: HeldFile,
	file: TaskFile,
): Promise<{ binary: IBinaryData; mimeType: string; size: number }> {
	let fault: Fault;
	try {
		return await held.commit();
	} catch (error) {
		fault = error instanceof TransportError ? error.fault : classifyError(error);
	}
	throw new TransportError({
		...fault,
		message: `Downloading ${file.file_url} failed: ${fault.message}`,
	});
}

function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
	return promise.then(
		() => undefined,
		(error: unknown) => error ?? new Error('failed'),
	);
}

async function receiveOnce(
	ctx: ApiContext,
	file: TaskFile,
	fileName: string,
	signal: AbortSignal | undefined,
	limits: { timeoutMs: number; stallMs: number },
): Promise<HeldFile> {
	// Aborting the request is the one way to unblock a stalled body: n8n's HTTP client hands out
	// a wrapper stream whose destroy() waits for the next chunk.
	const controller = new AbortController();
	const forwardCancel = () => controller.abort();
	signal?.addEventListener('abort', forwardCancel, { once: true });
	if (signal?.aborted) controller.abort();
	const detach = () => signal?.removeEventListener('abort', forwardCancel);
	let response: { statusCode: number; headers?: IDataObject; body: unknown } | undefined;
	let requestError: unknown;
	try {
		response = (await ctx.helpers.httpRequest({
			url: file.file_url,
			method: 'GET',
			// Media files do not compress: ask for the bytes as they are (a host may still compress,
			// n8n's client then decodes gzip, deflate and br).
			headers: { 'Accept-Encoding': 'identity' },
			encoding: 'stream',
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			timeout: limits.timeoutMs,
			abortSignal: controller.signal,
		})) as { statusCode: number; headers?: IDataObject; body: unknown };
	} catch (error) {
		requestError = error;
	}
	if (!response) {
		detach();
		throw new TransportError(classifyError(requestError, signal));
	}
	const headers = response.headers ?? {};
	const body = response.body;
	const refuse = (fault: Fault): never => {
		controller.abort();
		discard(body);
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
	// n8n's client decodes gzip, deflate and br and removes the header; anything left is a
	// coding nobody decoded: storing it would give the user a file they cannot open.
	const coding = String(headerValue(headers, 'content-encoding') ?? '')
		.trim()
		.toLowerCase();
	if (coding && coding !== 'identity') {
		refuse({
			kind: 'config',
			code: 'ERR_CONTENT_ENCODING',
			message: `the file host sent the file with Content-Encoding "${coding.slice(0, 40)}", which cannot be decoded (gzip, deflate and br can)`,
		});
	}
	const Readable = readableClassOf(response.body);
	if (!Readable) {
		refuse({ kind: 'malformed', message: 'n8n returned no readable stream for the file' });
	}
	const mimeType = resolveMimeType(headerValue(headers, 'content-type'), file);
	const lengthHeader = headerValue(headers, 'content-length');
	const expected = lengthHeader === undefined ? undefined : Number(lengthHeader);
	return await hold(ctx, response.body as NodeReadable, Readable as ReadableClass, {
		fileName,
		mimeType,
		expected: expected !== undefined && Number.isFinite(expected) ? expected : undefined,
		controller,
		signal,
		stallMs: limits.stallMs,
		detach,
	});
}

/**
 * Pipes the body into n8n's binary store through a stream of the node's own, which counts the
 * bytes, watches for a stalled host, and holds back the end until the caller commits. Resolves
 * once the whole body arrived; on any failure the store is handed the error (n8n then deletes
 * its temporary file) before this rejects.
 */
async function hold(
	ctx: ApiContext,
	source: NodeReadable,
	Readable: ReadableClass,
	o: {
		fileName: string;
		mimeType: string;
		expected?: number;
		controller: AbortController;
		signal?: AbortSignal;
		stallMs: number;
		detach: () => void;
	},
): Promise<HeldFile> {
	let received = 0;
	let paused = false;
	let lastData = Date.now();
	let settled = false;
	let stalled = false;
	let sourceError: unknown;
	let arrived!: () => void;
	let failed!: (error: unknown) => void;
	const complete = new Promise<void>((resolve, reject) => {
		arrived = resolve;
		failed = reject;
	});
	const gate = new Readable({
		highWaterMark: GATE_HIGH_WATER_MARK,
		read() {
			if (!paused) return;
			paused = false;
			lastData = Date.now();
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
		received += chunk.length;
		lastData = Date.now();
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
	// The stall watchdog: nothing arrived for stallMs while the node was not the one pausing.
	void (async () => {
		while (!settled) {
			const ticked = await sleep(1_000, o.signal).then(
				() => true,
				() => false,
			);
			if (!ticked || settled) return;
			if (!paused && Date.now() - lastData >= o.stallMs) {
				stalled = true;
				o.controller.abort();
				return;
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
	settled = true;
	if (failure === undefined) {
		// Ended cleanly. With identity coding Node's HTTP parser delivers exactly Content-Length
		// bytes or fails; a different count means n8n's client decoded a compressed body, whose
		// own checksum (gzip, deflate) or end marker (br) the decoder has verified.
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
				if (!binary) {
					const code = errorCode(storeError);
					throw new TransportError(
						code && STORAGE_ERRORS[code] ? storageFault(code) : classifyError(storeError),
					);
				}
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
	const code = errorCode(storeError);
	if (code && STORAGE_ERRORS[code]) throw new TransportError(storageFault(code));
	if (stalled) {
		throw new TransportError({
			kind: 'network',
			message: `the file host sent no data for ${Math.round(o.stallMs / 1000)} s`,
		});
	}
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

/** What the output item says about one file. */
export function describeFile(
	file: TaskFile,
	extra: { mime_type?: string; file_name?: string; size?: number; binary_property?: string } = {},
): IDataObject {
	const entry: IDataObject = { url: file.file_url, file_type: file.file_type ?? null };
	const mime = extra.mime_type ?? resolveMimeType(undefined, file);
	entry.mime_type = mime;
	if (extra.file_name) entry.file_name = extra.file_name;
	if (extra.size !== undefined && Number.isFinite(extra.size)) entry.size = extra.size;
	if (extra.binary_property) entry.binary_property = extra.binary_property;
	return entry;
}

/**
 * Downloads every file of a finished task, one after the other (a task has few files; items run
 * concurrently already). Binary properties: `data`, `data_1`, `data_2`… (base name settable).
 * All or nothing: each file stays uncommitted in n8n's binary store until every file arrived, so
 * a failure (of any file, or a cancellation) leaves no file behind.
 */
export async function downloadTaskFiles(
	ctx: ApiContext,
	task: Task,
	opts: DownloadOptions = {},
): Promise<{ binary: IBinaryKeyData; files: IDataObject[] }> {
	const base = opts.binaryProperty || 'data';
	const binary: IBinaryKeyData = {};
	const files: IDataObject[] = [];
	const list = task.files ?? [];
	const held: HeldFile[] = [];
	let failure: unknown;
	try {
		// Refuse a task with any unusable URL before fetching the others.
		for (const file of list) {
			const refused = checkFileUrl(file.file_url);
			if (refused) {
				throw new TransportError({
					...refused,
					message: `Downloading ${String(file.file_url)} failed: ${refused.message}`,
				});
			}
		}
		for (let index = 0; index < list.length; index++) {
			const file = list[index];
			const guessedMime = resolveMimeType(undefined, file);
			const name = fileNameFor(
				opts.modelLabel,
				task.task_id,
				index,
				resolveExtension(guessedMime, file),
			);
			held.push(await receiveFile(ctx, file, name, opts));
		}
		for (let index = 0; index < list.length; index++) {
			const file = list[index];
			const downloaded = await commitOrThrow(held[index], file);
			held[index] = COMMITTED;
			const property = binaryPropertyFor(base, index);
			// Rename with the real mime type's extension when the guess was wrong.
			const ext = resolveExtension(downloaded.mimeType, file);
			const fileName = fileNameFor(opts.modelLabel, task.task_id, index, ext);
			downloaded.binary.fileName = fileName;
			downloaded.binary.fileExtension = ext;
			binary[property] = downloaded.binary;
			files.push(
				describeFile(file, {
					mime_type: downloaded.mimeType,
					file_name: fileName,
					size: downloaded.size,
					binary_property: property,
				}),
			);
		}
		return { binary, files };
	} catch (error) {
		failure = error;
	}
	await Promise.all(held.map(async (h) => await h.discard()));
	// Scrub just in case a file URL was built with the key (it must never be sent, see above).
	const { apiKey } = await getApiCredentials(ctx).catch(() => ({ apiKey: '' }));
	const fault = classifyError(failure);
	throw new TransportError({ ...fault, message: scrubSecret(fault.message, [apiKey]) });
}

/** Stands in for a file already committed: nothing left to discard. */
const COMMITTED: HeldFile = {
	mimeType: '',
	commit: async () => {
		throw new Error('already committed');
	},
	discard: async () => {},
};
