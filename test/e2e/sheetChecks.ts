// Test-only. What the spreadsheet job's crash tests check after the next run (e2e and queue
// layers): every row finished, with its own task (made from its prompt) and that task's file
// saved next to the sheet, byte for byte.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { mediaChunks, type Simulator } from '../simulator';
import { SHIPPED_SHEET, parseCsv, readSheet, type Row } from './sheet';

/** The shipped 20-row sheet, each video taking `durationMs` at the service (plus a spread). */
export function timedSheet(
	durationMs: number,
	mark: (row: Row, index: number) => string = () => '',
): Row[] {
	return parseCsv(fs.readFileSync(SHIPPED_SHEET, 'utf8')).map((row, i) => ({
		sku: row.sku,
		product: row.product,
		prompt: `${row.prompt}${mark(row, i)} [sim:duration=${durationMs + (i % 5) * 300}]`,
	}));
}

/** The rows while n8n may be writing the file: a half-written file reads as none. */
export function sheetNow(folder: string): Row[] {
	try {
		return readSheet(folder);
	} catch {
		return [];
	}
}

const sha256 = (chunks: Iterable<Buffer>) => {
	const hash = createHash('sha256');
	for (const chunk of chunks) hash.update(chunk);
	return hash.digest('hex');
};

export function expectEveryRowWithItsVideo(
	folder: string,
	rows: Row[],
	sim: Pick<Simulator, 'task'>,
) {
	const written = readSheet(folder);
	expect(written.map((r) => r.sku)).toEqual(rows.map((r) => r.sku));
	for (const row of written) {
		expect(row).toMatchObject({ status: 'finished', video_file: `${row.sku}.mp4`, error: '' });
		const task = sim.task(row.task_id);
		expect(task?.prompt).toBe(rows.find((r) => r.sku === row.sku)!.prompt);
		const [served] = task!.files;
		const saved = fs.readFileSync(path.join(folder, row.video_file));
		expect(saved.length).toBe(served.size);
		expect(sha256([saved])).toBe(sha256(mediaChunks(served.kind, served.size)));
	}
}
