// Workflows saved by released versions (test/fixtures/saved-workflows/<version>/) still open with
// every parameter known, displayed and allowed by today's node descriptions, for their
// typeVersion (CONTRIBUTING.md, "Saved workflows and typeVersion"). The last tests prove the
// check fails on a removed or renamed parameter or option value and passes on an addition.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INodeProperties, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { MediaGeneration } from '../../../nodes/MediaGeneration/MediaGeneration.node';
import { MediaGenerationTrigger } from '../../../nodes/MediaGenerationTrigger/MediaGenerationTrigger.node';
import { MODELS } from '../../../nodes/MediaGeneration/models';
import { FIXTURES_DIR, savedRunOptions } from '../../../tools/saved-workflows';
import { savedNodeProblems, type SavedNode } from './savedParameters';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const NODE_TYPES: Record<string, () => INodeType> = {
	'n8n-nodes-media-generation.mediaGeneration': () => new MediaGeneration(),
	'n8n-nodes-media-generation.mediaGenerationTrigger': () => new MediaGenerationTrigger(),
	// The node as an AI Agent tool: n8n derives this type from the node's own description, the
	// name ending in "Tool" (what `@tool` display rules read).
	'n8n-nodes-media-generation.mediaGenerationTool': () => {
		const node = new MediaGeneration();
		node.description = { ...node.description, name: `${node.description.name}Tool` };
		return node;
	},
};

interface Fixture {
	version: string;
	file: string;
	nodes: SavedNode[];
}

function loadFixtures(): Fixture[] {
	return fs
		.readdirSync(FIXTURES_DIR)
		.filter((v) => fs.statSync(path.join(FIXTURES_DIR, v)).isDirectory())
		.flatMap((version) =>
			fs
				.readdirSync(path.join(FIXTURES_DIR, version))
				.filter((f) => f.endsWith('.json') && f !== 'index.json')
				.map((file) => {
					const wf = JSON.parse(
						fs.readFileSync(path.join(FIXTURES_DIR, version, file), 'utf8'),
					) as { nodes: SavedNode[] };
					return { version, file, nodes: wf.nodes.filter((n) => n.type in NODE_TYPES) };
				}),
		);
}

const versions = fs
	.readdirSync(FIXTURES_DIR)
	.filter((v) => fs.statSync(path.join(FIXTURES_DIR, v)).isDirectory());
const fixtures = loadFixtures();
const ours = fixtures.flatMap((f) =>
	f.nodes.map((node) => ({ fixture: `${f.version}/${f.file}`, node })),
);

describe('saved workflows of released versions', () => {
	// What each release offered is in its index.json: additions since then do not count.
	it.each(versions)(
		'%s: every workflow its index lists, every model and run option it offered, the Task operations and the Trigger',
		(version) => {
			const index = JSON.parse(
				fs.readFileSync(path.join(FIXTURES_DIR, version, 'index.json'), 'utf8'),
			) as {
				workflows: Array<{ file: string }>;
				models: string[];
				runOptions: string[];
			};
			const mine = fixtures.filter((f) => f.version === version);
			expect(mine.map((f) => f.file).sort()).toEqual(index.workflows.map((w) => w.file).sort());
			for (const example of index.workflows.filter((w) => w.file.startsWith('example-')))
				expect(fs.existsSync(path.join(FIXTURES_DIR, version, example.file))).toBe(true);
			const nodes = mine.flatMap((f) => f.nodes);
			const models = new Set(
				nodes
					.filter((n) => n.parameters.operation === 'generate')
					.map(
						(n) =>
							(n.parameters.model as string | undefined) ??
							MODELS.find((m) => m.kind === n.parameters.resource)!.key,
					),
			);
			expect([...models].sort()).toEqual([...index.models].sort());
			const taskOperations = new Set(
				nodes.filter((n) => n.parameters.resource === 'task').map((n) => n.parameters.operation),
			);
			expect([...taskOperations].sort()).toEqual([
				'downloadFiles',
				'getStatus',
				'waitForCompletion',
			]);
			const saved = new Set(mine.flatMap((f) => savedRunOptions(f)));
			expect(index.runOptions.filter((name) => !saved.has(name))).toEqual([]);
			expect(nodes.some((n) => n.type.endsWith('mediaGenerationTrigger'))).toBe(true);
		},
	);

	it('include every example of today (a new one: `node tools/run.js fixtures <unreleased version>`)', () => {
		const files = new Set(fixtures.map((f) => f.file));
		const missing = fs
			.readdirSync(path.join(ROOT, 'examples'))
			.filter((f) => f.endsWith('.json') && !files.has(`example-${f}`));
		expect(missing).toEqual([]);
	});

	it.each(ours.map((o) => [o.fixture, o.node.name, o.node] as const))(
		'%s: "%s" opens with every parameter known, displayed and allowed',
		(_fixture, _name, node) => {
			expect(savedNodeProblems(node, NODE_TYPES[node.type]())).toEqual([]);
		},
	);
});

describe('the check itself', () => {
	// The 1.5 pro fixture sets every field of its model: a change to any of them must show.
	const fixture = ours.find(({ fixture }) => fixture.endsWith('/model-vidmodel-1.5-pro.json'));
	const saved = fixture!.node;

	/** The node with its description changed by `edit` (a deep copy: the real one is untouched). */
	function mutated(edit: (d: INodeTypeDescription) => void): INodeType {
		const nodeType = new MediaGeneration();
		const description = JSON.parse(JSON.stringify(nodeType.description)) as INodeTypeDescription;
		edit(description);
		return { description } as INodeType;
	}
	const find = (props: INodeProperties[], name: string, model = 'vidmodel-1.5-pro') =>
		props.find(
			(p) =>
				p.name === name && (p.displayOptions?.show?.model as string[] | undefined)?.includes(model),
		)!;
	const runOptions = (d: INodeTypeDescription) =>
		d.properties.find(
			(p) =>
				p.name === 'options' && (p.displayOptions?.show?.resource as string[]).includes('video'),
		)!;

	it('fails when a parameter is removed', () => {
		const problems = savedNodeProblems(
			saved,
			mutated((d) => {
				d.properties = d.properties.filter((p) => p !== find(d.properties, 'duration'));
			}),
		);
		expect(problems).toEqual([expect.stringMatching(/duration: unknown parameter/)]);
	});

	it('fails when a parameter is renamed', () => {
		const problems = savedNodeProblems(
			saved,
			mutated((d) => {
				find(d.properties, 'aspectRatio').name = 'ratio';
			}),
		);
		expect(problems).toContainEqual(expect.stringMatching(/aspectRatio: unknown parameter/));
	});

	it('fails when an option of a collection is renamed or a run option removed', () => {
		const renamed = savedNodeProblems(
			saved,
			mutated((d) => {
				const options = find(d.properties, 'vidmodel15ProOptions').options as INodeProperties[];
				options.find((o) => o.name === 'resolution')!.name = 'videoResolution';
			}),
		);
		expect(renamed).toEqual([
			expect.stringMatching(/vidmodel15ProOptions\.resolution: unknown parameter/),
		]);
		const removed = savedNodeProblems(
			saved,
			mutated((d) => {
				const options = runOptions(d);
				options.options = (options.options as INodeProperties[]).filter(
					(o) => o.name !== 'maxPollIntervalSeconds',
				);
			}),
		);
		expect(removed).toEqual([
			expect.stringMatching(/options\.maxPollIntervalSeconds: unknown parameter/),
		]);
	});

	it('fails when a saved option value is renamed or no longer offered', () => {
		const problems = savedNodeProblems(
			saved,
			mutated((d) => {
				const p = find(d.properties, 'aspectRatio');
				p.options = (p.options as Array<{ name: string; value: string }>).map((o) =>
					o.value === '9:16' ? { ...o, value: '9x16' } : o,
				);
			}),
		);
		expect(problems).toEqual([
			expect.stringMatching(/aspectRatio: saved value "9:16" is no longer offered/),
		]);
	});

	it('fails when a saved value is no longer displayed (displayOptions changed) or its type changed', () => {
		const hidden = savedNodeProblems(
			saved,
			mutated((d) => {
				find(d.properties, 'duration').displayOptions!.show!.aspectRatio = ['16:9'];
			}),
		);
		expect(hidden).toContainEqual(expect.stringMatching(/duration: no longer displayed/));
		const retyped = savedNodeProblems(
			saved,
			mutated((d) => {
				const p = find(d.properties, 'duration');
				Object.assign(p, { type: 'string', default: '4', options: undefined });
			}),
		);
		expect(retyped).toContainEqual(expect.stringMatching(/duration: saved 8 is not text/));
	});

	it('fails when the saved typeVersion is gone, or a required parameter is added without a default', () => {
		expect(
			savedNodeProblems(
				saved,
				mutated((d) => (d.version = 2)),
			),
		).toEqual([expect.stringMatching(/typeVersion 1 is gone/)]);
		const required = savedNodeProblems(
			saved,
			mutated((d) => {
				d.properties.push({
					...find(d.properties, 'prompt'),
					name: 'negativePrompt',
					displayName: 'Negative Prompt',
					default: '',
					required: true,
				});
			}),
		);
		expect(required).toEqual([expect.stringMatching(/negativePrompt: .*without a default/)]);
	});

	it('passes when options are added with defaults (maxFileSizeMb, a new field, a new option value)', () => {
		const problems = savedNodeProblems(
			saved,
			mutated((d) => {
				(runOptions(d).options as INodeProperties[]).push({
					displayName: 'Max File Size (MB)',
					name: 'maxFileSizeMb',
					type: 'number',
					default: 0,
				});
				d.properties.push({
					...find(d.properties, 'duration'),
					name: 'seed',
					displayName: 'Seed',
					type: 'number',
					default: 0,
					options: undefined,
					required: false,
				});
				(find(d.properties, 'duration').options as Array<{ name: string; value: number }>).push({
					name: '16 s',
					value: 16,
				});
			}),
		);
		expect(problems).toEqual([]);
	});
});
