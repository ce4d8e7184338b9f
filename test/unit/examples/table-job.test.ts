/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it reads the shipped examples from disk */
// The Data Table job is the one a no-code user owns: few nodes, no Code node, and nothing in an
// expression but a field of an item, so changing a column means editing a field name, not code.
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');

interface WorkflowNode {
	name: string;
	type: string;
	parameters: unknown;
}
interface Workflow {
	nodes: WorkflowNode[];
	connections: Record<string, { main: Array<Array<{ node: string }> | null> }>;
}

const read = (file: string): Workflow =>
	JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8')) as Workflow;

/** Wait for Videos' Timeout in the batch workflow (docs/spreadsheet-to-videos.md binds it). */
const WAIT_TIMEOUT_MINUTES = 30;

const JOBS = ['table-rows-to-videos.json', 'table-rows-to-videos-batch.json'];

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

it('the batch runs in the sub-workflow both Execute Workflow nodes name', () => {
	const batch = JSON.parse(
		fs.readFileSync(path.join(ROOT, 'examples', 'table-rows-to-videos-batch.json'), 'utf8'),
	) as { id: string };
	const calls = read('table-rows-to-videos.json').nodes.filter((n) => n.type === 'n8n-nodes-base.executeWorkflow');
	expect(calls.map((n) => n.name).sort()).toEqual(['Collect 50 Videos', 'Send 50 Rows']);
	for (const call of calls) expect(JSON.stringify(call.parameters)).toContain(batch.id);
});

it(`Wait for Videos waits ${WAIT_TIMEOUT_MINUTES} minutes for each video, the Timeout the guide names`, () => {
	const wait = read('table-rows-to-videos-batch.json').nodes.find((n) => n.name === 'Wait for Videos');
	expect((wait?.parameters as { options?: { timeoutMinutes?: number } }).options?.timeoutMinutes).toBe(
		WAIT_TIMEOUT_MINUTES,
	);
});
