// Test-only. examples/spreadsheet-rows-to-videos.json as a user sets it up: the folder in its
// "Folder" node pointed at a folder n8n may read and write (n8n 2.x allows only
// N8N_RESTRICT_FILE_ACCESS_TO, default ~/.n8n-files), the sheet put there. Used by the e2e layer
// (test/e2e/polling.test.ts) and by `npm run demo`.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ROOT } from './n8n';
import { exampleWorkflow, type WorkflowNode } from './workflows';

export const SHEET_EXAMPLE = 'spreadsheet-rows-to-videos.json';
/** The sheet the example reads and writes back, as shipped next to it. */
export const SHEET_FILE = 'products.csv';
export const SHIPPED_SHEET = path.join(ROOT, 'examples', SHEET_FILE);

/** The example with its Folder node set to `folder` (what the user types there). */
export function sheetWorkflow(id: string, folder: string) {
	const wf = exampleWorkflow(SHEET_EXAMPLE, id) as ReturnType<typeof exampleWorkflow> & {
		nodes: WorkflowNode[];
	};
	const node = wf.nodes.find((n) => n.name === 'Folder');
	const assignments = (
		node?.parameters.assignments as { assignments?: Array<{ name: string; value: unknown }> }
	)?.assignments;
	const entry = assignments?.find((a) => a.name === 'folder');
	if (!entry) throw new Error(`${SHEET_EXAMPLE}: no "folder" field in its Folder node`);
	entry.value = folder;
	return wf;
}

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

export function readSheet(folder: string): Row[] {
	return parseCsv(fs.readFileSync(path.join(folder, SHEET_FILE), 'utf8'));
}
