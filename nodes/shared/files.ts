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
} from './http';
import type { Task, TaskFile } from './task';

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

interface StreamLike {
	destroy?: (error?: Error) => void;
	resume?: () => void;
	on?: (event: string, listener: (...args: unknown[]) => void) => unknown;
}

function discard(body: unknown): void {
	const stream = body as StreamLike | undefined;
	if (stream && typeof stream.destroy === 'function') stream.destroy();
}

/** A body that sends nothing for this long is given up (and the download retried). */
const STALL_MS = 60_000;

/**
 * The request timeout only covers the wait for the headers: a body that stops flowing would
 * hang the execution. Once n8n's binary store consumes the body, a 'data' listener counts the
 * bytes. It is added only then: before, it would start the flow with no store attached and
 * chunks would be lost; after, it observes without changing the flow (with the store's 'readable'
 * listener in place, Node emits 'data' only for what the store reads). When nothing arrives for
 * `idleMs` while nothing waits in the stream's buffer, `onStall` aborts the request.
 */
function watchForStall(
	body: unknown,
	signal: AbortSignal | undefined,
	idleMs: number,
	onStall: () => void,
): { stop: () => void; stalled: () => boolean } {
	const stream = body as StreamLike & {
		readableFlowing?: boolean | null;
		readableLength?: number;
		listenerCount?: (event: string) => number;
	};
	let stopped = false;
	let stalled = false;
	const handle = { stop: () => (stopped = true), stalled: () => stalled };
	if (!stream || typeof stream.on !== 'function') return handle;
	void (async () => {
		let received = 0;
		let counting = false;
		let lastReceived = 0;
		let idleSince = Date.now();
		while (!stopped) {
			const ticked = await sleep(1_000, signal).then(
				() => true,
				() => false,
			);
			if (!ticked || stopped) return;
			if (!counting) {
				const consumed =
					stream.readableFlowing === true || (stream.listenerCount?.('readable') ?? 0) > 0;
				if (!consumed) continue;
				stream.on?.('data', (chunk: unknown) => {
					received += (chunk as { length?: number }).length ?? 0;
				});
				counting = true;
				idleSince = Date.now();
				continue;
			}
			// Data waiting in the buffer means the store is slow (a busy disk), not the file host.
			if (received !== lastReceived || (stream.readableLength ?? 0) > 0) {
				lastReceived = received;
				idleSince = Date.now();
			} else if (Date.now() - idleSince >= idleMs) {
				stalled = true;
				onStall();
				return;
			}
		}
	})();
	return handle;
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
 * Streams one file into n8n's binary store. Uses the plain (unauthenticated) request helper: the
 * file hosts are not the API and must never see the key. Retries transient faults, including a
 * body shorter than its Content-Length.
 */
export async function downloadFile(
	ctx: ApiContext,
	file: TaskFile,
	fileName: string,
	options: DownloadOptions = {},
): Promise<{ binary: IBinaryData; mimeType: string; size: number }> {
	const signal = options.signal ?? cancelSignalOf(ctx);
	let fault: Fault;
	try {
		return await withRetries(
			ctx,
			async () =>
				await downloadOnce(ctx, file, fileName, signal, {
					timeoutMs: options.timeoutMs ?? 60_000,
					stallMs: options.stallMs ?? STALL_MS,
				}),
			isTransientForRead,
			{ signal, retries: options.retries ?? 4, onRetry: options.onRetry },
		);
	} catch (error) {
		fault = classifyError(error, signal);
	}
	// (Thrown outside the catch block: the lint rule wants node errors there.)
	if (fault.kind === 'cancelled') throw new TransportError(fault);
	throw new TransportError({
		...fault,
		message: `Downloading ${file.file_url} failed: ${fault.message}`,
	});
}

async function downloadOnce(
	ctx: ApiContext,
	file: TaskFile,
	fileName: string,
	signal: AbortSignal | undefined,
	limits: { timeoutMs: number; stallMs: number },
): Promise<{ binary: IBinaryData; mimeType: string; size: number }> {
	// Aborting the request is the one way to unblock a stalled body: n8n's HTTP client hands out
	// a wrapper stream whose destroy() waits for the next chunk.
	const controller = new AbortController();
	const forwardCancel = () => controller.abort();
	signal?.addEventListener('abort', forwardCancel, { once: true });
	if (signal?.aborted) controller.abort();
	try {
		return await downloadBody(ctx, file, fileName, controller, signal, limits);
	} finally {
		signal?.removeEventListener('abort', forwardCancel);
	}
}

async function downloadBody(
	ctx: ApiContext,
	file: TaskFile,
	fileName: string,
	controller: AbortController,
	signal: AbortSignal | undefined,
	limits: { timeoutMs: number; stallMs: number },
): Promise<{ binary: IBinaryData; mimeType: string; size: number }> {
	const response = (await ctx.helpers.httpRequest({
		url: file.file_url,
		method: 'GET',
		encoding: 'stream',
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		timeout: limits.timeoutMs,
		abortSignal: controller.signal,
	})) as { statusCode: number; headers?: IDataObject; body: unknown };
	const headers = response.headers ?? {};
	if (response.statusCode < 200 || response.statusCode >= 300) {
		discard(response.body);
		const expired =
			response.statusCode === 403 || response.statusCode === 404 || response.statusCode === 410;
		throw new TransportError({
			kind: 'http',
			statusCode: response.statusCode,
			retryAfterMs: retryAfterFromHeaders(headers),
			message: `the file host answered HTTP ${response.statusCode}${expired ? ' (files stay valid 24 hours after generation: the link may have expired)' : ''}`,
		});
	}
	const mimeType = resolveMimeType(headerValue(headers, 'content-type'), file);
	const lengthHeader = headerValue(headers, 'content-length');
	const expected = lengthHeader === undefined ? undefined : Number(lengthHeader);
	const watch = watchForStall(response.body, signal, limits.stallMs, () => controller.abort());
	let binary: IBinaryData | undefined;
	let failure: unknown;
	try {
		binary = await ctx.helpers.prepareBinaryData(response.body as BinaryInput, fileName, mimeType);
	} catch (error) {
		failure = error;
	} finally {
		watch.stop();
	}
	if (!binary || watch.stalled()) {
		if (watch.stalled()) {
			throw new TransportError({
				kind: 'network',
				message: `the file host sent no data for ${Math.round(limits.stallMs / 1000)} s`,
			});
		}
		throw new TransportError(classifyError(failure, signal));
	}
	const size = typeof binary.bytes === 'number' ? binary.bytes : Number.NaN;
	if (
		expected !== undefined &&
		Number.isFinite(expected) &&
		Number.isFinite(size) &&
		size !== expected
	) {
		throw new TransportError({
			kind: 'truncated',
			message: `the download stopped after ${size} of ${expected} bytes`,
		});
	}
	binary.mimeType = mimeType;
	binary.fileName = fileName;
	return { binary, mimeType, size };
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
	let apiKey = '';
	for (let index = 0; index < list.length; index++) {
		const file = list[index];
		const guessedMime = resolveMimeType(undefined, file);
		const name = fileNameFor(
			opts.modelLabel,
			task.task_id,
			index,
			resolveExtension(guessedMime, file),
		);
		let downloaded: { binary: IBinaryData; mimeType: string; size: number } | undefined;
		let failure: unknown;
		try {
			downloaded = await downloadFile(ctx, file, name, opts);
		} catch (error) {
			failure = error;
		}
		if (!downloaded) {
			// Scrub just in case a file URL was built with the key (it must never be sent, see above).
			if (!apiKey) apiKey = (await getApiCredentials(ctx).catch(() => ({ apiKey: '' }))).apiKey;
			const fault = classifyError(failure);
			throw new TransportError({ ...fault, message: scrubSecret(fault.message, [apiKey]) });
		}
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
}
