/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it reads the shipped examples from disk */
// The Data Table job is the one a no-code user owns: few nodes, no Code node, and nothing in an
// expression but a field of an item, so changing a column means editing a field name, not code.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { N8N_OLDEST_VERSION, N8N_VERSION } from '../../../tools/ensure-n8n';

const ROOT = path.join(__dirname, '..', '..', '..');

interface WorkflowNode {
	name: string;
	type: string;
	parameters: unknown;
	position: [number, number];
}
interface Workflow {
	nodes: WorkflowNode[];
	connections: Record<string, { main: Array<Array<{ node: string }> | null> }>;
}

const read = (file: string): Workflow =>
	JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8')) as Workflow;

/** Wait for Videos' Timeout in the batch workflow (docs/spreadsheet-to-videos.md binds it). */
const WAIT_TIMEOUT_MINUTES = 30;

const JOBS = [
	'table-rows-to-videos.json',
	'table-rows-to-videos-batch.json',
	'table-rows-to-videos-google-sheets.json',
];

/** Every string value under a node's parameters. */
function stringsOf(value: unknown): string[] {
	if (typeof value === 'string') return [value];
	if (Array.isArray(value)) return value.flatMap(stringsOf);
	if (value && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
	return [];
}

/** A field reference: `$json.a`, `$binary.data.b`, `$('Node').item.json.c`. Nothing else. */
const FIELD = /^\$(?:json|binary(?:\.\w+)?|\('[^']+'\)\.item\.json)\.\w+$/;

describe.each(JOBS)('%s', (file) => {
	const wf = read(file);

	it('has at most 15 nodes, none of them a Code or Function node', () => {
		expect(wf.nodes.length).toBeGreaterThan(0);
		expect(wf.nodes.length).toBeLessThanOrEqual(15);
		expect(wf.nodes.map((n) => n.type).filter((t) => /\.(code|function|functionItem)$/.test(t))).toEqual([]);
	});

	it('has expressions that only name a field', () => {
		const expressions = wf.nodes.flatMap((n) =>
			stringsOf(n.parameters)
				.filter((s) => s.startsWith('='))
				.flatMap((s) => [...s.matchAll(/{{([\s\S]*?)}}/g)].map((m) => ({ node: n.name, code: m[1].trim() }))),
		);
		expect(expressions.length).toBeGreaterThan(0);
		expect(expressions.filter((e) => !FIELD.test(e.code))).toEqual([]);
	});

	it('has every node connected', () => {
		const linked = new Set<string>(Object.keys(wf.connections));
		for (const outputs of Object.values(wf.connections))
			for (const output of outputs.main) for (const c of output ?? []) linked.add(c.node);
		expect(wf.nodes.map((n) => n.name).filter((name) => !linked.has(name))).toEqual([]);
	});
});

it.each(['table-rows-to-videos.json', 'table-rows-to-videos-google-sheets.json'])(
	'%s: the batch runs in the sub-workflow both Execute Workflow nodes name',
	(file) => {
		const batch = JSON.parse(
			fs.readFileSync(path.join(ROOT, 'examples', 'table-rows-to-videos-batch.json'), 'utf8'),
		) as { id: string };
		const calls = read(file).nodes.filter((n) => n.type === 'n8n-nodes-base.executeWorkflow');
		expect(calls.map((n) => n.name).sort()).toEqual(['Collect 50 Videos', 'Send 50 Rows']);
		for (const call of calls) expect(JSON.stringify(call.parameters)).toContain(batch.id);
	},
);

describe('the Google Sheets version (docs/spreadsheet-to-videos.md, "Keeping your list in Google Sheets")', () => {
	const plain = read('table-rows-to-videos.json');
	const sheets = read('table-rows-to-videos-google-sheets.json');
	const SHEET_IN = ['Rows of the Sheet', 'Sheet Rows into the Table'];
	const SHEET_OUT = ['Rows of the Table', 'Results into the Sheet'];
	const withoutPosition = (node: WorkflowNode) => {
		const rest: Partial<WorkflowNode> = { ...node };
		delete rest.position;
		return rest;
	};

	it('is the table job, node for node, plus the sheet read in before it and the results written back after it', () => {
		const added = sheets.nodes.filter((n) => !plain.nodes.some((p) => p.name === n.name));
		expect(added.map((n) => n.name)).toEqual([...SHEET_IN, ...SHEET_OUT]);
		for (const node of plain.nodes)
			expect(withoutPosition(sheets.nodes.find((n) => n.name === node.name)!)).toEqual(
				withoutPosition(node),
			);
		const next = (wf: Workflow, name: string, output = 0) =>
			(wf.connections[name]?.main[output] ?? []).map((c) => c.node);
		// Before: the starts that send read the sheet into the table first.
		for (const start of ['Try It Now', 'Every Night at 1:00']) {
			expect(next(plain, start)).toEqual(['Refused Rows Again']);
			expect(next(sheets, start)).toEqual([SHEET_IN[0]]);
		}
		expect(next(sheets, SHEET_IN[0])).toEqual([SHEET_IN[1]]);
		expect(next(sheets, SHEET_IN[1])).toEqual(['Refused Rows Again']);
		// After: More to Collect?'s false output, once nothing is left to collect.
		expect(next(plain, 'More to Collect?', 1)).toEqual([]);
		expect(next(sheets, 'More to Collect?', 1)).toEqual([SHEET_OUT[0]]);
		expect(next(sheets, SHEET_OUT[0])).toEqual([SHEET_OUT[1]]);
		// Every other connection as in the table job.
		const rest = (wf: Workflow) =>
			Object.entries(wf.connections)
				.filter(([from]) => ![...SHEET_IN, ...SHEET_OUT, 'Try It Now', 'Every Night at 1:00', 'More to Collect?'].includes(from))
				.map(([from, out]) => [from, out.main.map((o) => (o ?? []).map((c) => c.node))]);
		expect(rest(sheets)).toEqual(rest(plain));
		expect(next(sheets, 'More to Collect?', 0)).toEqual(next(plain, 'More to Collect?', 0));
	});

	it('copies sku, product and prompt into the table matching on sku, and back status, task_id, video_file and error matching on sku', () => {
		const node = (name: string) => sheets.nodes.find((n) => n.name === name)!.parameters as {
			operation?: string;
			dataTableId?: { value: string };
			filters?: { conditions: Array<{ keyName: string; condition: string; keyValue: string }> };
			columns: { value: Record<string, string>; matchingColumns: string[] };
		};
		const upsert = node('Sheet Rows into the Table');
		expect(upsert.operation).toBe('upsert');
		expect(upsert.dataTableId?.value).toBe('products');
		expect(upsert.filters?.conditions).toEqual([
			{ keyName: 'sku', condition: 'eq', keyValue: '={{ $json.sku }}' },
		]);
		expect(upsert.columns.value).toEqual({
			sku: '={{ $json.sku }}',
			product: '={{ $json.product }}',
			prompt: '={{ $json.prompt }}',
		});
		const update = node('Results into the Sheet');
		expect(update.operation).toBe('update');
		expect(update.columns.matchingColumns).toEqual(['sku']);
		expect(update.columns.value).toEqual(
			Object.fromEntries(
				['sku', 'status', 'task_id', 'video_file', 'error'].map((c) => [c, `={{ $json.${c} }}`]),
			),
		);
	});

	it('the guide names the two n8n versions its nodes are checked against (tools/ensure-n8n.js), and says it is not run', () => {
		const doc = fs.readFileSync(path.join(ROOT, 'docs', 'spreadsheet-to-videos.md'), 'utf8');
		const section = doc.slice(doc.indexOf('## Keeping your list in Google Sheets'), doc.indexOf('## What is tested'));
		const text = section.replace(/\s+/g, ' ');
		expect(text).toContain('examples/table-rows-to-videos-google-sheets.json');
		expect(text).toContain('not run by the tests: it needs a Google account');
		expect(text).toContain(`n8n ${N8N_VERSION} and ${N8N_OLDEST_VERSION}, the two versions the tests run`);
		expect(text).toContain('test/compat/google-sheets-example.test.ts');
	});

	it('places the new nodes on the canvas without overlapping another', () => {
		const at = sheets.nodes.map((n) => n.position.join(','));
		expect(new Set(at).size).toBe(at.length);
		const x = (name: string) => sheets.nodes.find((n) => n.name === name)!.position[0];
		expect(x(SHEET_IN[0])).toBeLessThan(x(SHEET_IN[1]));
		expect(x(SHEET_IN[1])).toBeLessThan(x('Refused Rows Again'));
		expect(x('More to Collect?')).toBeLessThan(x(SHEET_OUT[0]));
		expect(x(SHEET_OUT[0])).toBeLessThan(x(SHEET_OUT[1]));
	});
});

it(`Wait for Videos waits ${WAIT_TIMEOUT_MINUTES} minutes for each video, the Timeout the guide names`, () => {
	const wait = read('table-rows-to-videos-batch.json').nodes.find((n) => n.name === 'Wait for Videos');
	expect((wait?.parameters as { options?: { timeoutMinutes?: number } }).options?.timeoutMinutes).toBe(
		WAIT_TIMEOUT_MINUTES,
	);
});
