// File-host faults of the download path that need more than a status code: a body sent with a
// Content-Encoding the client did not ask for (with the compressed Content-Length, as a real
// misconfigured host does), and a body that stops half-way with the connection left open.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import type * as http from 'node:http';
import * as zlib from 'node:zlib';

import { mediaBuffer, type MediaKind } from './media';
import { prng } from './random';

export type EncodingFault = 'gzip' | 'deflate' | 'br';
export const ENCODING_FAULTS: EncodingFault[] = ['gzip', 'deflate', 'br'];

/** Largest file the encoding faults compress (in memory, to know the Content-Length). */
const MAX_ENCODED_SOURCE = 64 * 1024 * 1024;

/** The file compressed as `coding` ('deflate' = the zlib format RFC 9110 names). */
export function encodeFile(coding: EncodingFault, kind: MediaKind, size: number): Buffer {
	assertEncodable(size);
	const raw = mediaBuffer(kind, size);
	if (coding === 'gzip') return zlib.gzipSync(raw);
	if (coding === 'deflate') return zlib.deflateSync(raw);
	return zlib.brotliCompressSync(raw);
}

/** Sends the compressed body whatever the request's Accept-Encoding said. */
export function sendEncoded(
	res: http.ServerResponse,
	coding: EncodingFault,
	kind: MediaKind,
	size: number,
	headers: Record<string, string | number>,
	head: boolean,
): void {
	const body = encodeFile(coding, kind, size);
	res.writeHead(200, { ...headers, 'Content-Encoding': coding, 'Content-Length': body.length });
	res.end(head ? undefined : body);
}

/**
 * A gzip file cut in half by the host itself: the first half of the compressed bytes, no gzip
 * trailer, and a Content-Length that matches what is sent (issue 19: n8n's lenient decoder
 * turned it into a shorter file and the item said finished).
 */
export function sendGzipCut(
	res: http.ServerResponse,
	kind: MediaKind,
	size: number,
	headers: Record<string, string | number>,
	head: boolean,
): void {
	const whole = encodeFile('gzip', kind, size);
	const body = whole.subarray(0, Math.floor(whole.length / 2));
	res.writeHead(200, { ...headers, 'Content-Encoding': 'gzip', 'Content-Length': body.length });
	res.end(head ? undefined : body);
}

/** Open responses of the 'stall' fault, ended when the simulator closes. */
export const stalledResponses = new Set<http.ServerResponse>();

/** Half the file, then nothing: the connection stays open until the client gives up. */
export function sendStalled(
	res: http.ServerResponse,
	kind: MediaKind,
	size: number,
	headers: Record<string, string | number>,
): void {
	res.writeHead(200, headers);
	res.write(mediaBuffer(kind, size).subarray(0, Math.max(1, Math.floor(size / 2))));
	stalledResponses.add(res);
	res.on('close', () => stalledResponses.delete(res));
}

/**
 * A file whose bytes do not compress (as real media files: they are compressed already), sent
 * gzipped all the same: gzip makes it slightly longer, so the body n8n's client decodes is
 * shorter than the Content-Length sent, and complete. Seeded bytes: the same file each time.
 */
export function sendGzipIncompressible(
	res: http.ServerResponse,
	size: number,
	headers: Record<string, string | number>,
	head: boolean,
): void {
	assertEncodable(size);
	const random = prng(7);
	const raw = Buffer.alloc(size);
	for (let i = 0; i < size; i++) raw[i] = Math.floor(random() * 256);
	const body = zlib.gzipSync(raw);
	res.writeHead(200, { ...headers, 'Content-Encoding': 'gzip', 'Content-Length': body.length });
	res.end(head ? undefined : body);
}

function assertEncodable(size: number): void {
	if (size > MAX_ENCODED_SOURCE) {
		throw new Error(
			`encoding faults apply to files up to ${MAX_ENCODED_SOURCE} bytes, not ${size}`,
		);
	}
}
