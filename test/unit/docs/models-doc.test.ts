/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply; it reads docs/models.md from disk */
// docs/models.md promises one table per model listing the panel's fields in the order the
// editor shows them. This holds it to the node's real description: the fields n8n's own
// displayParameter shows for a fresh node with that model selected, between the Model dropdown
// and Wait for Completion, with each collection's options as "<collection> → X".
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { MediaGeneration } from '../../../nodes/MediaGeneration/MediaGeneration.node';
import { MODELS } from '../../../nodes/MediaGeneration/models';

const description = new MediaGeneration().description as INodeTypeDescription;
const properties = description.properties;
const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'models.md'), 'utf8');

/** Which properties n8n's own displayParameter shows for these parameter values. */
function shownFor(parameters: Record<string, unknown>): Set<INodeProperties> {
	const values = NodeHelpers.getNodeParameters(
		properties,
		parameters as never,
		true,
		false,
		{ typeVersion: 1 },
		description,
	)!;
	return new Set(
		properties.filter(
			(p) =>
				p.type !== 'notice' &&
				NodeHelpers.displayParameter(values, p, { typeVersion: 1 }, description),
		),
	);
}

/**
 * The panel's field names for a fresh node of `resource` → Generate with `model`, in order,
 * plus the fields a choice of this panel shows (each value of a dropdown other fields depend
 * on, such as Frames From → Binary Files).
 */
function panelFields(resource: string, model: string): string[] {
	const base = { resource, operation: 'generate', model };
	const modelPanel = (shown: Set<INodeProperties>) => {
		const visible = properties.filter((p) => shown.has(p));
		// The fields after the model choice; a resource with a single model shows no Model
		// dropdown, and its fields then start after Operation.
		const modelAt = visible.findIndex((p) => p.name === 'model');
		const from = modelAt >= 0 ? modelAt : visible.findIndex((p) => p.name === 'operation');
		const to = visible.findIndex((p) => p.name === 'waitForCompletion');
		return visible.slice(from + 1, to);
	};
	const shown = shownFor(base);
	const dependedOn = new Set(properties.flatMap((p) => Object.keys(p.displayOptions?.show ?? {})));
	const choices = modelPanel(shown).filter((p) => p.type === 'options' && dependedOn.has(p.name));
	for (const choice of choices) {
		for (const option of (choice.options ?? []) as Array<{ value: unknown }>) {
			for (const p of shownFor({ ...base, [choice.name]: option.value })) shown.add(p);
		}
	}
	return modelPanel(shown).flatMap((p: INodeProperties) =>
		p.type === 'collection'
			? ((p.options ?? []) as INodeProperties[]).map((o) => `${p.displayName} → ${o.displayName}`)
			: [p.displayName],
	);
}

/** First column of the table under the heading `### <Kind>: <display name>`. */
function documentedFields(kind: string, displayName: string): string[] | undefined {
	const heading = `### ${kind}: ${displayName}\n`;
	const start = doc.indexOf(heading);
	if (start < 0) return undefined;
	const rest = doc.slice(start + heading.length);
	const end = rest.search(/\n#{2,3} /);
	const section = end < 0 ? rest : rest.slice(0, end);
	return tableBodyRows(section).map((cells) => cells[1]);
}

/**
 * Cells of the first Markdown table in `text`, without its header row and its separator row:
 * the rows however wide the formatter pads them (`|---|` or `| ----- |`).
 */
function tableBodyRows(text: string): string[][] {
	const lines = text.split('\n');
	const first = lines.findIndex((line) => line.startsWith('|'));
	if (first < 0) return [];
	const table: string[] = [];
	for (const line of lines.slice(first)) {
		if (!line.startsWith('|')) break;
		table.push(line);
	}
	return table
		.slice(1)
		.filter((line) => !/^\|[\s:|-]+\|$/.test(line))
		.map((line) =>
			line
				.replace(/<!--.*?-->/g, '') // a figure's binding (CONTRIBUTING.md, "Figures in the docs")
				.split('|')
				.map((cell) => cell.trim()),
		);
}

const KIND_HEADING: Record<string, string> = { image: 'Image', video: 'Video', music: 'Music' };

describe('docs/models.md', () => {
	it.each(MODELS.map((m) => [m.key, m] as const))(
		'%s: one table listing the panel fields in panel order',
		(_key, model) => {
			const documented = documentedFields(KIND_HEADING[model.kind], model.displayName);
			expect(documented).toBeDefined();
			expect(documented).toEqual(panelFields(model.kind, model.key));
		},
	);

	it("lists every model's typical duration as the registry declares it, with its source", () => {
		const start = doc.indexOf('## How long each model typically takes');
		expect(start).toBeGreaterThan(0);
		const rows = tableBodyRows(doc.slice(start));
		const documented = Object.fromEntries(rows.map((cells) => [cells[1], cells[2]]));
		const expected = Object.fromEntries(
			MODELS.map((m) => [
				m.modelId ? `\`${m.modelId}\`` : m.displayName,
				`${m.typicalDuration.ms / 1000} s`,
			]),
		);
		expect(documented).toEqual(expected);
		for (const model of MODELS) expect(model.typicalDuration.source).toMatch(/spec/);
	});

	it('has no table for a model the registry does not have', () => {
		const headings = [...doc.matchAll(/^### (Image|Video|Music): (.+)$/gm)].map((m) => m[2]);
		expect(headings.sort()).toEqual(MODELS.map((m) => m.displayName).sort());
	});
});
