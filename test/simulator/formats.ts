// Structure checks of the simulator's files, shared by its contract tests: each walks the
// whole format (every PNG chunk and CRC, every MP4 box, every MP3 frame) and fails the running
// test on the first inconsistency.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as zlib from 'node:zlib';

/** Walks the PNG chunk list, checking every CRC; returns the chunk types. */
export function pngChunks(b: Buffer): string[] {
	expect(b.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
	const types: string[] = [];
	let o = 8;
	while (o < b.length) {
		const len = b.readUInt32BE(o);
		const type = b.toString('ascii', o + 4, o + 8);
		const crc = zlib.crc32(b.subarray(o + 4, o + 8 + len));
		expect({ type, crc: b.readUInt32BE(o + 8 + len) }).toEqual({ type, crc });
		types.push(type);
		o += 12 + len;
	}
	expect(o).toBe(b.length);
	return types;
}

/** Walks the top-level MP4 boxes; returns their types. */
export function mp4Boxes(b: Buffer): string[] {
	const types: string[] = [];
	let o = 0;
	while (o < b.length) {
		let size = b.readUInt32BE(o);
		if (size === 1) size = Number(b.readBigUInt64BE(o + 8));
		types.push(b.toString('ascii', o + 4, o + 8));
		expect(size).toBeGreaterThanOrEqual(8);
		o += size;
	}
	expect(o).toBe(b.length);
	return types;
}

const MP3_BITRATES = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MP3_RATES = [44100, 48000, 32000];

/**
 * Checks the ID3v2 tag, then that MPEG-1 Layer III frames follow to the end, each as long as
 * its header says; returns how many.
 */
export function mp3Frames(b: Buffer): number {
	expect(b.toString('ascii', 0, 3)).toBe('ID3');
	const tag = 10 + ((b[6] << 21) | (b[7] << 14) | (b[8] << 7) | b[9]);
	let frames = 0;
	let o = tag;
	while (o < b.length) {
		expect([o, b[o], b[o + 1] & 0xfe]).toEqual([o, 0xff, 0xfa]); // sync, MPEG-1, Layer III
		const bitrate = MP3_BITRATES[b[o + 2] >> 4];
		const rate = MP3_RATES[(b[o + 2] >> 2) & 3];
		expect([o, bitrate > 0, rate > 0]).toEqual([o, true, true]);
		o += Math.floor((144 * bitrate * 1000) / rate) + ((b[o + 2] >> 1) & 1);
		frames++;
	}
	expect(o).toBe(b.length);
	return frames;
}
