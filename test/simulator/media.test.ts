// Contract of the file generators: exact sizes at and around every format's edge cases, valid
// structure at each, and gigabyte sizes (walked chunk by chunk, never held in memory).
import {
	actualSize,
	mediaBuffer,
	mediaChunks,
	minimumSize,
	referenceChunks,
	referenceSize,
	type MediaKind,
} from './media';
import { mp3Frames, mp4Boxes, pngChunks } from './formats';

const KINDS: MediaKind[] = ['image', 'video', 'audio'];

/** Sizes around the minimum, the padding overheads, the 64 KiB buffer and an MP3 frame. */
function edgeSizes(kind: MediaKind): number[] {
	const min = minimumSize(kind);
	const near = Array.from({ length: 16 }, (_, i) => min - 1 + i);
	return [...near, 417 * 3 + 10, 417 * 3 + 11, 65535, 65536, 65537, 200000];
}

describe.each(KINDS)('%s files', (kind) => {
	it.each(edgeSizes(kind))(
		'requested %i bytes: the stated size, exactly, and a valid file',
		(requested) => {
			const b = mediaBuffer(kind, requested);
			const size = actualSize(kind, requested);
			expect(b.length).toBe(size);
			if (requested >= minimumSize(kind) + (kind === 'image' ? 12 : 0))
				expect(size).toBe(requested);
			else expect(size - Math.max(requested, minimumSize(kind))).toBeLessThan(12);
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
	it('a 5 GB MP4 uses a 64-bit box size and yields exactly 5 GB', () => {
		const size = 5 * 1024 ** 3;
		const { bytes, head } = walk(mediaChunks('video', size));
		expect(bytes).toBe(size);
		expect(head.toString('ascii', 4, 8)).toBe('ftyp');
		// After the 24-byte ftyp: size field 1, type "free", then the 64-bit size.
		expect([head.readUInt32BE(24), head.toString('ascii', 28, 32)]).toEqual([1, 'free']);
	});
	it('a 1.5 GB PNG spans several padding chunks (1 GiB maximum each) and ends with IEND', () => {
		const size = 1.5 * 1024 ** 3;
		const { bytes, tail } = walk(mediaChunks('image', size));
		expect(bytes).toBe(size);
		expect(tail.subarray(-8, -4).toString('ascii')).toBe('IEND');
	});
	it('a 1 GB MP3 yields exactly 1 GB', () => {
		const size = 1024 ** 3;
		const { bytes, head } = walk(mediaChunks('audio', size));
		expect(bytes).toBe(size);
		expect(head.toString('ascii', 0, 3)).toBe('ID3');
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
