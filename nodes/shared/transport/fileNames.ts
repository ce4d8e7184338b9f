import type { IDataObject } from 'n8n-workflow';

import type { TaskFile } from '../task';

// File names, extensions and MIME types of downloaded results, and how the output item describes
// a file. Pure: no request, no n8n context.

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
