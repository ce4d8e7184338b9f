// How the simulated service fetches the images a submission points it at (`input.image_urls`):
// a plain GET as a real service's worker would send it (no credentials, nothing taken from the
// submission), redirects followed up to a bound, one deadline for the whole fetch, the body
// streamed through SHA-256 and never held, and the image judged by its Content-Type and its
// first bytes, within the spec's size limit.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';

// The limits the node's pre-check holds images to: the service must read them the same way, or
// the pre-check would pass what the service refuses (or refuse what it takes).
import { IMAGE_TYPES, MAX_IMAGE_BYTES } from '../../nodes/MediaGeneration/models/referenceImages';

/** The headers every image fetch sends; nothing else reaches the image host. */
export const FETCH_HEADERS: Readonly<Record<string, string>> = {
	'User-Agent': 'media-generation-service/1.0 (image fetch)',
	Accept: 'image/jpeg, image/png, image/webp;q=0.9, */*;q=0.1',
};

export interface ImageFetchOptions {
	/** Deadline of one URL's whole fetch (connection, redirects and body), in ms. */
	timeoutMs: number;
	/** Redirects followed before giving up. */
	maxRedirects: number;
	/** Largest body accepted, in bytes. */
	maxBytes: number;
}

export const DEFAULT_FETCH: ImageFetchOptions = {
	timeoutMs: 10_000,
	maxRedirects: 5,
	maxBytes: MAX_IMAGE_BYTES,
};

/** One fetch of one `image_urls` item, as the simulator's log keeps it. */
export interface ImageFetchLogEntry {
	taskId: string;
	/** Position in `input.image_urls`. */
	index: number;
	/** The URL as submitted. */
	url: string;
	/** Where the body came from (the last hop). */
	finalUrl: string;
	/** Each Location followed, in order. */
	redirects: string[];
	/** Status of the last answer; 0 when none came. */
	status: number;
	/** Content-Type of the last answer, as sent ('' when none). */
	contentType: string;
	/** What the first bytes are: image/jpeg, image/png, image/webp, image/gif, or undefined. */
	detectedType?: string;
	/** Body bytes received (all of them when `ok`; a refused body is cut short at the limit). */
	bytes: number;
	/** SHA-256 (hex) of the bytes received. */
	sha256: string;
	/** The request headers the image host got, on every hop. */
	requestHeaders: Record<string, string>;
	ok: boolean;
	/** Why it was refused, in the words of the task's error_message. */
	reason?: string;
	/** Clock time of the start, and how long it took in real ms. */
	at: number;
	ms: number;
}

const GENERIC_TYPES = ['', 'application/octet-stream', 'binary/octet-stream'];
const SNIFF_BYTES = 12;
const NAMES: Record<string, string> = {
	'image/jpeg': 'a JPEG image',
	'image/png': 'a PNG image',
	'image/webp': 'a WebP image',
	'image/gif': 'a GIF image',
};

/** What the first bytes of a body are, when they are one of the image formats we know. */
export function sniffImage(bytes: Buffer): string | undefined {
	if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)
		return 'image/jpeg';
	if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1')))
		return 'image/png';
	if (bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP')
		return 'image/webp';
	if (/^GIF8[79]a/.test(bytes.toString('latin1', 0, 6))) return 'image/gif';
	return undefined;
}

function megabytes(bytes: number): string {
	return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

class Refusal extends Error {}

interface Hop {
	res: http.IncomingMessage;
	url: string;
}

function get(url: URL, signal: AbortSignal): Promise<http.IncomingMessage> {
	return new Promise((resolve, reject) => {
		const lib = url.protocol === 'https:' ? https : http;
		const req = lib.request(url, { method: 'GET', headers: FETCH_HEADERS, signal }, resolve);
		req.on('error', reject);
		req.end();
	});
}

/**
 * Fetches one image and judges it. Never throws: a refusal comes back with `ok: false` and a
 * `reason`. `signal` aborts it from outside (the simulator closing or resetting).
 */
export async function fetchImage(
	taskId: string,
	index: number,
	url: string,
	options: ImageFetchOptions,
	outer: AbortSignal,
	now: number,
): Promise<ImageFetchLogEntry> {
	const started = Date.now();
	const entry: ImageFetchLogEntry = {
		taskId,
		index,
		url,
		finalUrl: url,
		redirects: [],
		status: 0,
		contentType: '',
		bytes: 0,
		sha256: createHash('sha256').digest('hex'),
		requestHeaders: { ...FETCH_HEADERS },
		ok: false,
		at: now,
		ms: 0,
	};
	const deadline = new AbortController();
	const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
	const signal = AbortSignal.any([deadline.signal, outer]);
	let hop: Hop | undefined;
	try {
		hop = await follow(url, options, signal, entry);
		const { res } = hop;
		entry.status = res.statusCode ?? 0;
		entry.contentType = String(res.headers['content-type'] ?? '');
		if (entry.status < 200 || entry.status > 299)
			throw new Refusal(`HTTP ${entry.status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`);
		const declared = entry.contentType.split(';')[0].trim().toLowerCase();
		if (!GENERIC_TYPES.includes(declared) && !(IMAGE_TYPES as readonly string[]).includes(declared))
			throw new Refusal(
				`Content-Type ${declared} is not accepted; allowed: ${IMAGE_TYPES.join(', ')}`,
			);
		const length = Number(res.headers['content-length']);
		if (res.headers['content-length'] !== undefined && length > options.maxBytes)
			throw new Refusal(
				`the image is ${megabytes(length)} (${length} bytes); allowed: at most ${megabytes(options.maxBytes)} (${options.maxBytes} bytes)`,
			);
		const hash = createHash('sha256');
		const head: Buffer[] = [];
		let headLength = 0;
		for await (const chunk of res as AsyncIterable<Buffer>) {
			entry.bytes += chunk.length;
			hash.update(chunk);
			if (headLength < SNIFF_BYTES) {
				head.push(chunk.subarray(0, SNIFF_BYTES - headLength));
				headLength += head[head.length - 1].length;
			}
			if (entry.bytes > options.maxBytes) {
				entry.sha256 = hash.digest('hex');
				throw new Refusal(
					`the image is larger than ${megabytes(options.maxBytes)} (more than ${options.maxBytes} bytes received); allowed: at most ${megabytes(options.maxBytes)}`,
				);
			}
		}
		entry.sha256 = hash.digest('hex');
		const detected = sniffImage(Buffer.concat(head));
		entry.detectedType = detected;
		if (!detected || !(IMAGE_TYPES as readonly string[]).includes(detected))
			throw new Refusal(
				`the content is not a JPEG, PNG or WebP image (${detected ? `it is ${NAMES[detected]}` : `its first bytes are ${JSON.stringify(Buffer.concat(head).toString('latin1'))}`}, Content-Type ${declared || 'none'})`,
			);
		if (!GENERIC_TYPES.includes(declared) && declared !== detected)
			throw new Refusal(
				`Content-Type ${declared} does not match the content, which is ${NAMES[detected]}`,
			);
		entry.ok = true;
	} catch (error) {
		entry.reason =
			error instanceof Refusal
				? error.message
				: deadline.signal.aborted
					? `no complete answer within ${options.timeoutMs / 1000} s`
					: outer.aborted
						? 'the fetch was cancelled'
						: `the host could not be reached (${networkReason(error)})`;
		hop?.res.destroy();
	} finally {
		clearTimeout(timer);
		entry.ms = Date.now() - started;
	}
	return entry;
}

function networkReason(error: unknown): string {
	const e = error as NodeJS.ErrnoException & { hostname?: string };
	return e.code ? `${e.code}${e.hostname ? ` ${e.hostname}` : ''}` : e.message;
}

/** GETs `url`, following redirects: returns the first answer that is not one. */
async function follow(
	url: string,
	options: ImageFetchOptions,
	signal: AbortSignal,
	entry: ImageFetchLogEntry,
): Promise<Hop> {
	const seen = new Set<string>();
	let current = url;
	for (;;) {
		const parsed = URL.canParse(current) ? new URL(current) : undefined;
		if (!parsed) throw new Refusal(`${JSON.stringify(current)} is not a URL`);
		if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
			throw new Refusal(`the scheme ${parsed.protocol} is not supported; use http or https`);
		seen.add(parsed.href);
		entry.finalUrl = parsed.href;
		const res = await get(parsed, signal);
		const status = res.statusCode ?? 0;
		const location = res.headers.location;
		if (![301, 302, 303, 307, 308].includes(status) || !location) return { res, url: parsed.href };
		res.resume();
		entry.status = status;
		const next = new URL(location, parsed).href;
		entry.redirects.push(next);
		if (seen.has(next)) throw new Refusal(`redirect loop (${next} was already visited)`);
		if (entry.redirects.length > options.maxRedirects)
			throw new Refusal(`more than ${options.maxRedirects} redirects`);
		current = next;
	}
}
