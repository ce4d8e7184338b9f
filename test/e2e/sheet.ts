// Test-only. The sample rows (examples/products.csv) and CSV as a user's file holds it: the
// rows the table job's tests and `npm run demo` put into the Data Table, the demo's table
// written out.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ROOT } from './n8n';

/** The sample rows, as shipped. */
export const SHEET_FILE = 'products.csv';
export const SHIPPED_SHEET = path.join(ROOT, 'examples', SHEET_FILE);

export type Row = Record<string, string>;

/** RFC 4180 CSV (quoted fields, doubled quotes, commas and newlines inside quotes) to rows by header. */
export function parseCsv(text: string): Row[] {
	// n8n's Convert to File starts its CSV with a byte order mark.
	if (text.startsWith('\ufeff')) text = text.slice(1);
	const records: string[][] = [];
	let field = '';
	let record: string[] = [];
	let quoted = false;
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (quoted) {
			if (c === '"' && text[i + 1] === '"') {
				field += '"';
				i++;
			} else if (c === '"') quoted = false;
			else field += c;
		} else if (c === '"') quoted = true;
		else if (c === ',') {
			record.push(field);
			field = '';
		} else if (c === '\n' || c === '\r') {
			if (c === '\r' && text[i + 1] === '\n') i++;
			record.push(field);
			records.push(record);
			record = [];
			field = '';
		} else field += c;
	}
	if (field !== '' || record.length) {
		record.push(field);
		records.push(record);
	}
	const [header, ...body] = records.filter((r) => r.length > 1 || r[0] !== '');
	return body.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''])));
}

export function toCsv(rows: Row[]): string {
	const header = [...new Set(rows.flatMap((r) => Object.keys(r)))];
	const cell = (v: string) => (/[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
	return (
		[header.join(','), ...rows.map((r) => header.map((h) => cell(r[h] ?? '')).join(','))].join(
			'\n',
		) + '\n'
	);
}

/** The shipped 20-row sample, each video taking `durationMs` at the service (plus a spread). */
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
