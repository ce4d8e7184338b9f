import type { IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { getApiCredentials } from './api';
import { TransportError } from './faults';
import { requestCheckedHops } from './fileHosts';

/**
 * The optional pre-check of reference-image URLs: a HEAD, then a ranged GET of the first bytes,
 * before a task is submitted. The limits it checks against are model facts (see
 * nodes/MediaGeneration/models/referenceImages.ts).
 */
export interface ImageLimits {
	types: readonly string[];
	maxBytes: number;
}
type Limits = ImageLimits;

const GENERIC_TYPES = ['', 'application/octet-stream', 'binary/octet-stream'];
/** How many first bytes sniffImageType needs. */
export const SNIFF_BYTES = 12;

type Headers = Record<string, string | string[] | undefined>;
interface Response {
	statusCode: number;
	headers: Headers;
	body?: unknown;
}

function header(headers: Headers, name: string): string {
	const value = headers[name] ?? headers[name.toLowerCase()];
	return (Array.isArray(value) ? value[0] : (value ?? '')).toString();
}

/** The image type the first bytes show (JPEG, PNG or WebP), or undefined. */
export function sniffImageType(bytes: Uint8Array): string | undefined {
	const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
	if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
	if (bytes[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image/png';
	if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
	return undefined;
}

async function firstBytes(body: unknown): Promise<Uint8Array> {
	const stream = body as AsyncIterable<Uint8Array> & { destroy?: () => void };
	const chunks: number[] = [];
	try {
		for await (const chunk of stream) {
			chunks.push(...chunk.subarray(0, SNIFF_BYTES - chunks.length));
			if (chunks.length >= SNIFF_BYTES) break;
		}
	} finally {
		// A server that ignores Range sends the whole file: stop reading it.
		stream.destroy?.();
	}
	return Uint8Array.from(chunks);
}

/** A size as the pre-check words it: MB of 1,048,576 bytes, one decimal. */
export function megabytes(bytes: number): string {
	return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Checks one URL: a HEAD first, then (when HEAD is refused or leaves type or size open) a
 * ranged GET of the first bytes. Returns the problem found, or undefined. Sizes the host does
 * not tell are not held against the file.
 */
async function checkOne(
	ctx: IExecuteFunctions,
	url: string,
	limits: Limits | undefined,
	allowPrivate: boolean,
): Promise<string | undefined> {
	const base: IHttpRequestOptions = {
		url,
		abortSignal: ctx.getExecutionCancelSignal?.(),
		timeout: 30000,
	};
	// The same address rule as the downloads: checked after DNS, redirects followed by hand.
	const request = async (options: IHttpRequestOptions) =>
		(await requestCheckedHops(ctx, options, allowPrivate)) as Response;
	let type = '';
	let size: number | undefined;
	let status = 0;
	try {
		const head = await request({ ...base, method: 'HEAD' });
		status = head.statusCode;
		if (status < 400) {
			type = header(head.headers, 'content-type').split(';')[0].trim().toLowerCase();
			const length = Number(header(head.headers, 'content-length'));
			if (header(head.headers, 'content-length') !== '' && Number.isFinite(length)) size = length;
		}
		if (status >= 400 || GENERIC_TYPES.includes(type) || size === undefined) {
			const get = await request({
				...base,
				method: 'GET',
				headers: { Range: `bytes=0-${SNIFF_BYTES - 1}` },
				encoding: 'stream',
			});
			status = get.statusCode;
			if (status >= 400) {
				await firstBytes(get.body).catch(() => undefined);
				return `could not be downloaded (HTTP ${status}); reference images must be publicly accessible and directly downloadable`;
			}
			const getType = header(get.headers, 'content-type').split(';')[0].trim().toLowerCase();
			if (!GENERIC_TYPES.includes(getType)) type = getType;
			const total = /\/(\d+)\s*$/.exec(header(get.headers, 'content-range'));
			if (total) size = Number(total[1]);
			else if (status === 200 && header(get.headers, 'content-length') !== '') {
				size = Number(header(get.headers, 'content-length'));
			}
			const bytes = await firstBytes(get.body);
			if (GENERIC_TYPES.includes(type)) type = sniffImageType(bytes) ?? type;
		}
	} catch (error) {
		if (error instanceof TransportError && error.fault.kind === 'config') {
			return `was not checked: ${error.message}`;
		}
		return `could not be reached (${(error as Error).message}); reference images must be publicly accessible and directly downloadable`;
	}
	if (limits === undefined) return undefined;
	if (!limits.types.includes(type)) {
		return `is of type ${type === '' ? 'unknown' : type}; allowed: ${limits.types.join(', ')}`;
	}
	if (size !== undefined && size > limits.maxBytes) {
		return `is ${megabytes(size)}; allowed: at most ${megabytes(limits.maxBytes).replace('.0 ', ' ')}`;
	}
	return undefined;
}

/**
 * Checks that every URL downloads and, when `limits` are given, its type and size. Plain
 * requests without the credential: file hosts never see the API key. `allowPrivate`: the
 * credential's Allow Private Network File Hosts when not given. Throws one
 * NodeOperationError listing every URL with a problem.
 */
export async function checkImageUrls(
	ctx: IExecuteFunctions,
	itemIndex: number,
	urls: string[],
	limits: Limits | undefined,
	allowPrivate?: boolean,
): Promise<void> {
	// The credential's Allow Private Network File Hosts, unless the caller decided.
	const allowPrivateFileHosts =
		allowPrivate ??
		(await getApiCredentials(ctx).then(
			(c) => c.allowPrivateFileHosts,
			() => false,
		));
	const problems = await Promise.all(
		urls.map(async (url) => await checkOne(ctx, url, limits, allowPrivateFileHosts)),
	);
	const errors = problems.flatMap((problem, i) =>
		problem === undefined ? [] : [`reference image "image_urls[${i}]" (${urls[i]}) ${problem}`],
	);
	if (errors.length > 0) {
		throw new NodeOperationError(ctx.getNode(), `Item ${itemIndex}: ${errors.join(' | ')}`, {
			itemIndex,
			description: errors.join('\n'),
		});
	}
}
