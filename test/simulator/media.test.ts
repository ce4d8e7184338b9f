// Contract of the file generators: exact sizes at and around every format's edge cases, valid
// structure at each, and gigabyte sizes (walked chunk by chunk, never held in memory).
import {
	REAL_MEDIA,
	actualSize,
	defaultSize,
	mediaBuffer,
	mediaChunks,
	minimumSize,
	referenceChunks,
	referenceSize,
	type MediaKind,
} from './media';
import { mp3Frames, mp4Boxes, pngChunks } from './formats';

const KINDS: MediaKind[] = ['image', 'video', 'audio'];

/** Bytes a padding needs for its own header: a PNG chunk, an MP4 box (ID3 padding: none). */
const OVERHEAD: Record<MediaKind, number> = { image: 12, video: 8, audio: 0 };

/**
 * Sizes around the minimum and the real file, the padding overheads, the 64 KiB buffer and an
 * MP3 frame.
 */
function edgeSizes(kind: MediaKind): number[] {
	const around = (from: number) => Array.from({ length: 16 }, (_, i) => from - 1 + i);
	return [
		...around(minimumSize(kind)),
		...around(defaultSize(kind)),
		417 * 3 + 10,
		417 * 3 + 11,
		65535,
		65536,
		65537,
		200000,
	];
}

describe.each(KINDS)('%s files', (kind) => {
	it('by default: the real file (the MP3 behind a 10-byte ID3 tag)', () => {
		const b = mediaBuffer(kind);
		expect(b.length).toBe(defaultSize(kind));
		expect(b.subarray(b.length - REAL_MEDIA[kind].length).equals(REAL_MEDIA[kind])).toBe(true);
	});
	it.each(edgeSizes(kind))(
		'requested %i bytes: the stated size, exactly, and a valid file',
		(requested) => {
			const b = mediaBuffer(kind, requested);
			const size = actualSize(kind, requested);
			expect(b.length).toBe(size);
			const real = defaultSize(kind);
			// Just above a file the padding must hold its header: the size rounds up.
			const from = requested >= real ? real : minimumSize(kind);
			if (requested === from || requested >= from + OVERHEAD[kind]) expect(size).toBe(requested);
			else expect(size - Math.max(requested, from)).toBeLessThanOrEqual(OVERHEAD[kind]);
			// From the real file's size up, the file is the real one, padded where players skip.
			if (requested >= real && kind === 'video')
				expect(b.subarray(0, real).equals(REAL_MEDIA.video)).toBe(true);
			if (requested >= real && kind === 'audio')
				expect(b.subarray(-REAL_MEDIA.audio.length).equals(REAL_MEDIA.audio)).toBe(true);
			if (requested >= real && kind === 'image')
				expect(pngChunks(b).filter((t) => t !== 'paDd')).toEqual(['IHDR', 'pHYs', 'IDAT', 'IEND']);
			if (kind === 'image') expect(pngChunks(b).slice(-1)).toEqual(['IEND']);
			if (kind === 'video') expect(mp4Boxes(b)[0]).toBe('ftyp');
			if (kind === 'audio') expect(mp3Frames(b)).toBeGreaterThanOrEqual(2);
		},
	);
});

/** Streams a generator, keeping only the byte count and the first and last bytes. */
function walk(chunks: Iterable<Buffer>): { bytes: number; head: Buffer; tail: Buffer } {
	let bytes = 0;
	let head: Buffer = Buffer.alloc(0);
	let tail: Buffer = Buffer.alloc(0);
	for (const c of chunks) {
		if (head.length < 32) head = Buffer.concat([head, c.subarray(0, 32 - head.length)]);
		tail = c.length >= 16 ? c.subarray(-16) : Buffer.concat([tail, c]).subarray(-16);
		bytes += c.length;
	}
	return { bytes, head, tail };
}

describe('gigabyte sizes', () => {
	it('a 5 GB MP4 is the real video, then a free box with a 64-bit size: exactly 5 GB', () => {
		const size = 5 * 1024 ** 3;
		const chunks = mediaChunks('video', size);
		expect(chunks.next().value!.equals(REAL_MEDIA.video)).toBe(true);
		// Size field 1, type "free", then the 64-bit size.
		const free = chunks.next().value!;
		expect([free.readUInt32BE(0), free.toString('ascii', 4, 8)]).toEqual([1, 'free']);
		expect(Number(free.readBigUInt64BE(8))).toBe(size - REAL_MEDIA.video.length);
		const { bytes } = walk(chunks);
		expect(REAL_MEDIA.video.length + free.length + bytes).toBe(size);
	});
	it('a 1.5 GB PNG spans several padding chunks (1 GiB maximum each) and ends with IEND', () => {
		const size = 1.5 * 1024 ** 3;
		const { bytes, tail } = walk(mediaChunks('image', size));
		expect(bytes).toBe(size);
		expect(tail.subarray(-8, -4).toString('ascii')).toBe('IEND');
	});
	it('a 1 GB MP3 yields exactly 1 GB: a full ID3 padding, the melody, then silent frames like its own', () => {
		const size = 1024 ** 3;
		const chunks = mediaChunks('audio', size);
		const id3 = chunks.next().value!;
		expect(id3.toString('ascii', 0, 3)).toBe('ID3');
		const padding = (id3[6] << 21) | (id3[7] << 14) | (id3[8] << 7) | id3[9];
		// The most an ID3 tag can hold (256 MiB), less what a whole frame does not fit.
		expect(0x0fffffff - padding).toBeLessThan(144);
		let bytes = id3.length;
		let melody = 0;
		let last: Buffer = Buffer.alloc(0);
		for (const c of chunks) {
			if (c === REAL_MEDIA.audio) melody++;
			bytes += c.length;
			last = c;
		}
		expect([bytes, melody]).toEqual([size, 1]);
		// The last frame: the melody's own header, a silent (all zero) body.
		const frame = last.subarray(-144);
		expect(frame.subarray(0, 4).equals(REAL_MEDIA.audio.subarray(0, 4))).toBe(true);
		expect(frame.subarray(4).equals(Buffer.alloc(140))).toBe(true);
	});
});

describe('reference images', () => {
	it.each(['png', 'jpg', 'webp', 'gif'] as const)(
		'%s: sizes are exact from the minimum plus overhead up',
		(format) => {
			for (const requested of [1, 30, 40, 41, 100, 1001, 70000, 140001]) {
				const size = referenceSize(format, requested);
				expect(walk(referenceChunks(format, requested)).bytes).toBe(size);
				if (requested >= 60) expect(size - requested).toBeLessThanOrEqual(1);
			}
		},
	);
});
