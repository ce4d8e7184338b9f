// Result files of any size with valid signatures, produced as streams from one shared zero
// buffer so that a gigabyte file costs no more memory than a tiny one. By default a result is a
// real file (fixtures/: a picture, a 2 s video, a 2 s melody; see fixtures/README.md); a larger
// size is that file padded where players skip (a PNG chunk, an MP4 `free` box, ID3 padding and
// then silent frames), so it stays playable; a smaller one is a synthetic file with valid
// signatures only.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

export type MediaKind = 'image' | 'video' | 'audio';

export const MEDIA: Record<MediaKind, { ext: string; mime: string }> = {
	image: { ext: 'png', mime: 'image/png' },
	video: { ext: 'mp4', mime: 'video/mp4' },
	audio: { ext: 'mp3', mime: 'audio/mpeg' },
};

const ZEROS = Buffer.alloc(64 * 1024);

// zlib.crc32 exists from Node 20.15 / 22.2; the table is the fallback for older runtimes.
const CRC_TABLE = (() => {
	const t = new Uint32Array(256);
	for (let n = 0; n < 256; n++) {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
		t[n] = c >>> 0;
	}
	return t;
})();
function crc32(buf: Buffer, prev = 0): number {
	const native = (zlib as unknown as { crc32?: (b: Buffer, v?: number) => number }).crc32;
	if (native) return native(buf, prev);
	let c = (prev ^ 0xffffffff) >>> 0;
	for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
}

function u32(n: number): Buffer {
	const b = Buffer.alloc(4);
	b.writeUInt32BE(n >>> 0);
	return b;
}

function pngChunk(type: string, data: Buffer): Buffer {
	const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
	return Buffer.concat([u32(data.length), td, u32(crc32(td))]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
// 1x1 RGBA, one transparent pixel: filter byte 0 + 4 zero bytes.
const PNG_HEAD = Buffer.concat([
	PNG_SIGNATURE,
	pngChunk('IHDR', Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0])),
	pngChunk('IDAT', zlib.deflateSync(Buffer.alloc(5))),
]);
const PNG_IEND = pngChunk('IEND', Buffer.alloc(0));
const PNG_MIN = PNG_HEAD.length + PNG_IEND.length;
// Private ancillary, safe-to-copy chunk type: decoders skip it.
const PNG_PAD_TYPE = Buffer.from('paDd', 'ascii');
const PNG_MAX_CHUNK = 1024 * 1024 * 1024;

// MP4: an ftyp box, then one `free` box holding the padding (64-bit size when it must be).
const MP4_FTYP = Buffer.concat([
	u32(24),
	Buffer.from('ftypisom', 'ascii'),
	u32(0x200),
	Buffer.from('isommp41', 'ascii'),
]);

// MP3: an ID3v2.4 tag (its padding absorbs remainders) and silent MPEG-1 Layer III frames,
// 128 kbit/s, 44.1 kHz, no padding bit: 417 bytes each.
const MP3_FRAME = (() => {
	const f = Buffer.alloc(417);
	f.set([0xff, 0xfb, 0x90, 0x64]);
	return f;
})();
const ID3_MAX_PADDING = 0x0fffffff;

/** The real files served by default, a few KB each (read once; see fixtures/README.md). */
export const REAL_MEDIA: Record<MediaKind, Buffer> = {
	image: fs.readFileSync(path.join(__dirname, 'fixtures', 'image.png')),
	video: fs.readFileSync(path.join(__dirname, 'fixtures', 'video.mp4')),
	audio: fs.readFileSync(path.join(__dirname, 'fixtures', 'music.mp3')),
};

// The melody's frames are all alike (MPEG-1 Layer III, constant bitrate, no padding bit): the
// silent frames that lengthen a large MP3 share their header, so the stream stays uniform.
const REAL_MP3_FRAME = (() => {
	const b = REAL_MEDIA.audio;
	const bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
	const rates = [44100, 48000, 32000];
	if (b[0] !== 0xff || (b[1] & 0xfe) !== 0xfa || (b[2] & 0x02) !== 0)
		throw new Error('fixtures/music.mp3 must start with an unpadded MPEG-1 Layer III frame');
	const length = (144 * bitrates[b[2] >> 4] * 1000) / rates[(b[2] >> 2) & 3];
	if (!Number.isInteger(length) || b.length % length !== 0)
		throw new Error('fixtures/music.mp3 must be whole frames of one length, nothing else');
	const frame = Buffer.alloc(length);
	b.copy(frame, 0, 0, 4);
	return frame;
})();

/** Size of the real file of each kind: what a result is unless a prompt asks for a size. */
export function defaultSize(kind: MediaKind): number {
	// The MP3 gets an ID3v2 tag (10 bytes) whose padding absorbs any size asked for.
	return kind === 'audio' ? 10 + REAL_MEDIA.audio.length : REAL_MEDIA[kind].length;
}

/** Smallest size each format is produced at; a smaller request gets this size. */
export function minimumSize(kind: MediaKind): number {
	if (kind === 'image') return PNG_MIN;
	if (kind === 'video') return MP4_FTYP.length + 8;
	return 10 + MP3_FRAME.length * 2;
}

/**
 * The exact number of bytes `mediaChunks(kind, requested)` yields: the real file when nothing
 * is asked. Padding needs room for its own header (a PNG chunk 12 bytes, an MP4 box 8), so a
 * size just above the real or the minimum file rounds up by at most 11 bytes.
 */
export function actualSize(kind: MediaKind, requested?: number): number {
	if (requested === undefined) return defaultSize(kind);
	const real = defaultSize(kind);
	if (requested >= real) {
		const over = requested - real;
		if (kind === 'image' && over > 0 && over < 12) return real + 12;
		if (kind === 'video' && over > 0 && over < 8) return real + 8;
		return requested;
	}
	const min = minimumSize(kind);
	if (requested <= min) return min;
	if (kind === 'image' && requested - min < 12) return min + 12;
	return requested;
}

function* zeros(n: number): Generator<Buffer> {
	let left = n;
	while (left > 0) {
		const take = Math.min(left, ZEROS.length);
		yield take === ZEROS.length ? ZEROS : ZEROS.subarray(0, take);
		left -= take;
	}
}

function* png(size: number): Generator<Buffer> {
	yield PNG_HEAD;
	yield* pngPadding(size - PNG_MIN);
	yield PNG_IEND;
}

/** `left` bytes of chunks decoders skip (0, or at least 12). */
function* pngPadding(left: number): Generator<Buffer> {
	while (left > 0) {
		let len = Math.min(left - 12, PNG_MAX_CHUNK);
		// Never leave a remainder too small to hold another chunk.
		const rest = left - 12 - len;
		if (rest > 0 && rest < 12) len -= 12;
		yield Buffer.concat([u32(len), PNG_PAD_TYPE]);
		let crc = crc32(PNG_PAD_TYPE);
		for (const z of zeros(len)) {
			crc = crc32(z, crc);
			yield z;
		}
		yield u32(crc);
		left -= 12 + len;
	}
}

function* mp4(size: number): Generator<Buffer> {
	yield MP4_FTYP;
	yield* freeBox(size - MP4_FTYP.length);
}

/** A top-level `free` box of `box` bytes (0, or at least 8), which players skip. */
function* freeBox(box: number): Generator<Buffer> {
	if (box <= 0) return;
	if (box > 0xffffffff) {
		const head = Buffer.alloc(16);
		head.writeUInt32BE(1, 0);
		head.write('free', 4, 'ascii');
		head.writeBigUInt64BE(BigInt(box), 8);
		yield head;
		yield* zeros(box - 16);
	} else {
		yield Buffer.concat([u32(box), Buffer.from('free', 'ascii')]);
		yield* zeros(box - 8);
	}
}

function syncsafe(n: number): Buffer {
	return Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
}

function* mp3(size: number): Generator<Buffer> {
	const body = size - 10;
	let frames = Math.floor(body / MP3_FRAME.length);
	let padding = body - frames * MP3_FRAME.length;
	if (padding > ID3_MAX_PADDING) padding = ID3_MAX_PADDING; // unreachable: padding < 417
	frames = (body - padding) / MP3_FRAME.length;
	yield Buffer.concat([Buffer.from('ID3', 'ascii'), Buffer.from([4, 0, 0]), syncsafe(padding)]);
	yield* zeros(padding);
	// Batch frames so a large file is not one tiny write per frame.
	const batch = Buffer.concat(Array.from({ length: 128 }, () => MP3_FRAME));
	let left = frames;
	while (left >= 128) {
		yield batch;
		left -= 128;
	}
	if (left > 0) yield batch.subarray(0, left * MP3_FRAME.length);
}

function* realPng(size: number): Generator<Buffer> {
	const file = REAL_MEDIA.image;
	// Everything up to IEND (its last 12 bytes), the padding, then IEND.
	yield file.subarray(0, file.length - 12);
	yield* pngPadding(size - file.length);
	yield file.subarray(file.length - 12);
}

function* realMp4(size: number): Generator<Buffer> {
	yield REAL_MEDIA.video;
	yield* freeBox(size - REAL_MEDIA.video.length);
}

function* realMp3(size: number): Generator<Buffer> {
	// Up to 256 MiB in the ID3 tag's padding; beyond it, silent frames after the melody.
	const rest = size - defaultSize('audio');
	const frame = REAL_MP3_FRAME;
	const frames = rest > ID3_MAX_PADDING ? Math.ceil((rest - ID3_MAX_PADDING) / frame.length) : 0;
	const padding = rest - frames * frame.length;
	yield Buffer.concat([Buffer.from('ID3', 'ascii'), Buffer.from([4, 0, 0]), syncsafe(padding)]);
	yield* zeros(padding);
	yield REAL_MEDIA.audio;
	const batch = Buffer.concat(Array.from({ length: 512 }, () => frame));
	let left = frames;
	while (left >= 512) {
		yield batch;
		left -= 512;
	}
	if (left > 0) yield batch.subarray(0, left * frame.length);
}

/** Chunks of a valid file of `kind`, `actualSize(kind, requested)` bytes long. */
export function mediaChunks(kind: MediaKind, requested?: number): Generator<Buffer> {
	const size = actualSize(kind, requested);
	if (size >= defaultSize(kind)) {
		if (kind === 'image') return realPng(size);
		if (kind === 'video') return realMp4(size);
		return realMp3(size);
	}
	if (kind === 'image') return png(size);
	if (kind === 'video') return mp4(size);
	return mp3(size);
}

/** Whole file in memory: for tests that inspect small files. */
export function mediaBuffer(kind: MediaKind, requested?: number): Buffer {
	return Buffer.concat([...mediaChunks(kind, requested)]);
}

// ---- reference images (inputs a workflow points the service at) ----

export type ReferenceFormat = 'png' | 'jpg' | 'webp' | 'gif';

export const REFERENCE_MIME: Record<ReferenceFormat, string> = {
	png: 'image/png',
	jpg: 'image/jpeg',
	webp: 'image/webp',
	gif: 'image/gif',
};

// JPEG: SOI, a JFIF APP0 segment, COM segments carrying the padding, EOI.
const JPEG_HEAD = Buffer.from([
	0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
	0x00, 0x01, 0x00, 0x00,
]);
const JPEG_EOI = Buffer.from([0xff, 0xd9]);
const JPEG_MIN = JPEG_HEAD.length + JPEG_EOI.length;
// WebP: RIFF header, a VP8X chunk, then a padding chunk decoders skip.
const WEBP_MIN = 12 + 18;
// GIF: header, logical screen, trailer (a type the service does not accept).
const GIF_MIN = 6 + 7 + 1;

function referenceMinimum(format: ReferenceFormat): number {
	return { png: PNG_MIN, jpg: JPEG_MIN, webp: WEBP_MIN, gif: GIF_MIN }[format];
}

/** Exact size `referenceChunks` yields: padding needs room for its own header. */
export function referenceSize(format: ReferenceFormat, requested?: number): number {
	const min = referenceMinimum(format);
	if (requested === undefined || requested <= min) return min;
	const overhead = { png: 12, jpg: 4, webp: 8, gif: 0 }[format];
	let size = requested;
	if (size - min < overhead) size = min + overhead;
	// RIFF chunks are padded to even sizes.
	if (format === 'webp' && size % 2 === 1) size++;
	return size;
}

function* jpeg(size: number): Generator<Buffer> {
	yield JPEG_HEAD;
	let left = size - JPEG_MIN;
	while (left > 0) {
		let seg = Math.min(left, 65535 + 2);
		if (left - seg > 0 && left - seg < 4) seg -= 4;
		const head = Buffer.from([0xff, 0xfe, ((seg - 2) >> 8) & 0xff, (seg - 2) & 0xff]);
		yield head;
		yield* zeros(seg - 4);
		left -= seg;
	}
	yield JPEG_EOI;
}

function* webp(size: number): Generator<Buffer> {
	const riff = Buffer.alloc(12);
	riff.write('RIFF', 0, 'ascii');
	riff.writeUInt32LE(size - 8, 4);
	riff.write('WEBP', 8, 'ascii');
	yield riff;
	const vp8x = Buffer.alloc(18);
	vp8x.write('VP8X', 0, 'ascii');
	vp8x.writeUInt32LE(10, 4);
	// 1x1 canvas: width-1 and height-1 as 24-bit values, already zero.
	yield vp8x;
	const pad = size - WEBP_MIN;
	if (pad > 0) {
		const head = Buffer.alloc(8);
		head.write('PADD', 0, 'ascii');
		head.writeUInt32LE(pad - 8, 4);
		yield head;
		yield* zeros(pad - 8);
	}
}

function* gif(size: number): Generator<Buffer> {
	yield Buffer.from('GIF89a', 'ascii');
	yield Buffer.from([1, 0, 1, 0, 0, 0, 0]);
	// Padding before the trailer: a decoder stops at the trailer anyway.
	yield* zeros(size - GIF_MIN);
	yield Buffer.from([0x3b]);
}

/** Chunks of a reference image of `referenceSize(format, requested)` bytes. */
export function referenceChunks(format: ReferenceFormat, requested?: number): Generator<Buffer> {
	const size = referenceSize(format, requested);
	if (format === 'png') return png(size);
	if (format === 'jpg') return jpeg(size);
	if (format === 'webp') return webp(size);
	return gif(size);
}
