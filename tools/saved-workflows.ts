/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- tool code: writes test fixtures under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// `node tools/run.js fixtures [version] [--replace]`: writes the workflows this version of the
// package saves into test/fixtures/saved-workflows/<version>/ (default: package.json's version;
// CONTRIBUTING.md, "Saved workflows and typeVersion"). Later versions must load them unchanged:
// a released version's folder is never regenerated; a release adds its own.
//
// What it writes: every example of examples/ verbatim; one workflow per model with every field
// of its panel set (non-default values where the model allows them); the Task operations with
// their options; the Trigger with its options. Addresses are placeholders the e2e layer points
// at its simulator and n8n: FILE_HOST for reference images, N8N_ORIGIN for webhook URLs.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INodeProperties } from 'n8n-workflow';

import { MODELS, validateSubmission } from '../nodes/MediaGeneration/models';
import { properties as nodeProperties } from '../nodes/MediaGeneration/actions';
import { MediaGenerationTrigger } from '../nodes/MediaGenerationTrigger/MediaGenerationTrigger.node';

const ROOT = path.resolve(__dirname, '..');
export const FIXTURES_DIR = path.join(ROOT, 'test', 'fixtures', 'saved-workflows');
/** Placeholder origins in the fixtures; the e2e layer replaces them with its own. */
export const FILE_HOST = 'https://files.media-generation.example';
export const N8N_ORIGIN = 'https://n8n.example.com';
const NODE_TYPE = 'n8n-nodes-media-generation.mediaGeneration';
const TRIGGER_TYPE = 'n8n-nodes-media-generation.mediaGenerationTrigger';
const CREDENTIALS = { mediaGenerationApi: { id: '1', name: 'Media Generation API' } };
/** The Trigger fixture's webhook, which the Task fixture's submission calls back. */
const TRIGGER_WEBHOOK_ID = '0e6f3c52-8a41-4d0b-9c1e-5f2a7b3d9e10';
/** The Trigger fixture's Secret option (a test value), which its callback URL carries. */
const TRIGGER_SHARED_VALUE = 'fixture-secret-4f1c';

/**
 * Per model, the value of every field of its panel (the generator checks none is missing and
 * that the model accepts the whole). By-ID models use the simulator's default model ids.
 */
const MODEL_VALUES: Record<string, Record<string, unknown>> = {
	'vidmodel-1.5-pro': {
		prompt: 'A paper boat drifting down a rainy street, every field set',
		aspectRatio: '9:16',
		duration: 8,
		vidmodel15ProOptions: {
			fixedLens: true,
			generateAudio: true,
			imageUrls: [`${FILE_HOST}/refs/first.png`, `${FILE_HOST}/refs/second.jpg`],
			resolution: '1080p',
		},
		additionalInputFields: '{"fixed_lens": true}',
	},
	'vidmodel-2.0-fast/image-to-video': {
		prompt: 'The boat sails off, every field set',
		frameSource: 'url',
		startFrameUrl: `${FILE_HOST}/refs/start.png`,
		vidmodel20FastOptions: {
			aspectRatio: '9:16',
			duration: 6,
			endFrameUrl: `${FILE_HOST}/refs/end.webp`,
			resolution: '480p',
		},
		additionalInputFields: '{"generate_audio": true}',
	},
	'video-by-id': {
		modelId: 'video-1',
		prompt: 'A lighthouse at night, every field set',
		videoByIdOptions: { aspectRatio: '4:3', duration: 5 },
		additionalInputFields: '{"seed": 7}',
	},
	'image-by-id': {
		modelId: 'image-1',
		prompt: 'A lighthouse on a cliff at dawn, every field set',
		imageByIdOptions: { n: 2, size: '3:2' },
		additionalInputFields: '{"seed": 7}',
	},
	'generate-music': {
		prompt: 'An upbeat lo-fi track, every field set',
		musicOptions: {
			customMode: true,
			instrumental: true,
			mv: 'V4',
			style: 'lo-fi',
			title: 'Fixture Day',
		},
		additionalInputFields: '{"negative_tags": "metal"}',
	},
};

/**
 * Per model whose reference images may come from binary fields: every field of that choice set
 * (the panel shows the URL fields or these), in a workflow that makes the file first (Edit
 * Fields → Convert to File, a 1×1 PNG in field `data`).
 */
const MODEL_BINARY_VALUES: Record<string, Record<string, unknown>> = {
	'vidmodel-1.5-pro': {
		prompt: 'A paper boat drifting down a rainy street, references from binary fields',
		aspectRatio: '9:16',
		duration: 8,
		vidmodel15ProOptions: {
			fixedLens: true,
			generateAudio: true,
			imageBinaryFields: ['data', 'data'],
			resolution: '1080p',
		},
		additionalInputFields: '{"fixed_lens": true}',
	},
	'vidmodel-2.0-fast/image-to-video': {
		prompt: 'The boat sails off, frames from binary fields',
		frameSource: 'binary',
		startFrameBinaryField: 'data',
		vidmodel20FastOptions: {
			aspectRatio: '9:16',
			duration: 6,
			endFrameBinaryField: 'data',
			resolution: '480p',
		},
		additionalInputFields: '{"generate_audio": true}',
	},
};
/** A 1×1 PNG, the binary fixtures' frame. */
const PNG_BASE64 =
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Edit Fields then Convert to File: the PNG as binary field `data` of the item. */
function pngNodes(): FixtureNode[] {
	return [
		{
			parameters: {
				assignments: {
					assignments: [
						{
							id: 'b0000000-0000-4000-8000-000000000001',
							name: 'png',
							value: PNG_BASE64,
							type: 'string',
						},
					],
				},
				options: {},
			},
			id: 'a0000000-0000-4000-8000-000000000002',
			name: 'Frame as Base64',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [260, 0],
		},
		{
			parameters: {
				operation: 'toBinary',
				sourceProperty: 'png',
				options: { fileName: 'frame.png', mimeType: 'image/png' },
			},
			id: 'a0000000-0000-4000-8000-000000000003',
			name: 'Convert to File',
			type: 'n8n-nodes-base.convertToFile',
			typeVersion: 1.1,
			position: [520, 0],
		},
	];
}

/** Every run option of a waiting Generate, none at its default (Wait Mode stays Poll here: the
 * durable-wait example parks). */
function runOptions(kind: string, index: number): Record<string, unknown> {
	return {
		callbackReference: `fixture-${kind}-${index}`,
		downloadFiles: true,
		maxPollIntervalSeconds: 2,
		checkForResults: 'sooner',
		maxConcurrentTasks: 4,
		...(kind === 'video' ? { checkReferenceImages: true } : {}),
		binaryPropertyName: 'media',
		timeoutMinutes: 5,
		waitMode: 'poll',
		maxFileSizeMb: 64,
		maxSubmissions: 50,
	};
}

interface FixtureNode {
	parameters: Record<string, unknown>;
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	webhookId?: string;
	credentials?: Record<string, { id: string; name: string }>;
}

function manualTrigger(): FixtureNode {
	return {
		parameters: {},
		id: 'a0000000-0000-4000-8000-000000000001',
		name: 'When clicking ‘Execute workflow’',
		type: 'n8n-nodes-base.manualTrigger',
		typeVersion: 1,
		position: [0, 0],
	};
}

function mediaNode(name: string, index: number, parameters: Record<string, unknown>): FixtureNode {
	return {
		parameters,
		id: `a0000000-0000-4000-8000-${String(100 + index).padStart(12, '0')}`,
		name,
		type: NODE_TYPE,
		typeVersion: 1,
		position: [260 * index, 0],
		credentials: CREDENTIALS,
	};
}

function chainWorkflow(name: string, nodes: FixtureNode[]) {
	const connections: Record<string, unknown> = {};
	for (let i = 0; i + 1 < nodes.length; i++)
		connections[nodes[i].name] = { main: [[{ node: nodes[i + 1].name, type: 'main', index: 0 }]] };
	return { name, nodes, connections, pinData: {}, settings: { executionOrder: 'v1' }, tags: [] };
}

/** Names of every field a model's panel shows (collections: each option), for the coverage check. */
function fieldNames(props: INodeProperties[], prefix = ''): string[] {
	return props.flatMap((p) =>
		p.type === 'collection'
			? (p.options as INodeProperties[]).map((o) => `${prefix}${p.name}.${o.name}`)
			: [`${prefix}${p.name}`],
	);
}

function setNames(values: Record<string, unknown>): string[] {
	return Object.entries(values).flatMap(([k, v]) =>
		typeof v === 'object' && v !== null && !Array.isArray(v)
			? Object.keys(v).map((c) => `${k}.${c}`)
			: [k],
	);
}

function modelWorkflows() {
	return MODELS.flatMap((model, i) => {
		const values = MODEL_VALUES[model.key];
		if (!values)
			throw new Error(`no fixture values for model ${model.key}: add them to MODEL_VALUES`);
		const binaryValues = MODEL_BINARY_VALUES[model.key];
		if ((binaryValues === undefined) !== (model.binaryImages === undefined))
			throw new Error(
				`model ${model.key}: MODEL_BINARY_VALUES must list exactly the models with binary images`,
			);
		const expected = [
			...(model.modelId === undefined ? ['modelId'] : []),
			...fieldNames(model.properties),
			'additionalInputFields',
		];
		const set = [...setNames(values), ...(binaryValues ? setNames(binaryValues) : [])];
		const missing = expected.filter((f) => !set.includes(f));
		if (missing.length)
			throw new Error(`model ${model.key}: fixture leaves ${missing.join(', ')} unset`);
		const several = MODELS.filter((m) => m.kind === model.kind).length > 1;
		const slug = model.key.replace(/[^a-z0-9.]+/gi, '-');
		const variants = [
			{ values, file: `model-${slug}.json`, what: 'every field set', before: [] as FixtureNode[] },
			...(binaryValues
				? [
						{
							values: binaryValues,
							file: `model-${slug}-binary.json`,
							what: 'every field of its binary reference images set',
							before: pngNodes(),
						},
					]
				: []),
		];
		return variants.map((variant) => {
			const checked = validateSubmission(model.key, variant.values);
			if (!checked.ok)
				throw new Error(`model ${model.key}: fixture refused: ${checked.errors.join('; ')}`);
			const parameters = {
				resource: model.kind,
				operation: 'generate',
				...(several ? { model: model.key } : {}),
				...variant.values,
				waitForCompletion: true,
				options: runOptions(model.kind, i),
			};
			return {
				file: variant.file,
				what: `model ${model.key}, ${variant.what}`,
				workflow: chainWorkflow(`Fixture: ${model.displayName}, ${variant.what}`, [
					manualTrigger(),
					...variant.before,
					mediaNode(`Generate ${model.displayName}`, 1 + variant.before.length, parameters),
				]),
			};
		});
	});
}

function taskWorkflow() {
	const callbackUrl = `${N8N_ORIGIN}/webhook/${TRIGGER_WEBHOOK_ID}/media-generation?secret=${TRIGGER_SHARED_VALUE}`;
	return {
		file: 'task-operations.json',
		what: 'Task → Get Status, Wait for Completion, Download Files with every option; the submission calls the Trigger fixture back',
		workflow: chainWorkflow('Fixture: Task operations, every option set', [
			manualTrigger(),
			mediaNode('Submit Image', 1, {
				resource: 'image',
				operation: 'generate',
				modelId: 'image-1',
				prompt: 'A lighthouse, submitted without waiting',
				imageByIdOptions: { n: 1, size: '1:1' },
				waitForCompletion: false,
				options: {
					callbackReference: 'fixture-task-ref',
					callbackUrl,
					maxConcurrentTasks: 3,
				},
			}),
			mediaNode('Get Status', 2, {
				resource: 'task',
				operation: 'getStatus',
				taskId: '={{ $json.task_id }}',
			}),
			mediaNode('Wait for Completion', 3, {
				resource: 'task',
				operation: 'waitForCompletion',
				taskId: '={{ $json.task_id }}',
				options: {
					downloadFiles: false,
					maxPollIntervalSeconds: 2,
					maxConcurrentTasks: 3,
					binaryPropertyName: 'waited',
					timeoutMinutes: 5,
					waitMode: 'poll',
					maxFileSizeMb: 16,
				},
			}),
			mediaNode('Download Files', 4, {
				resource: 'task',
				operation: 'downloadFiles',
				taskId: '={{ $json.task_id }}',
				options: { maxConcurrentTasks: 3, binaryPropertyName: 'file', maxFileSizeMb: 32 },
			}),
		]),
	};
}

function triggerWorkflow() {
	const description = new MediaGenerationTrigger().description;
	const trigger: FixtureNode = {
		parameters: {
			event: 'finished',
			verify: true,
			download: true,
			binaryPropertyName: 'received',
			downloadMinutes: 15,
			options: {
				secret: TRIGGER_SHARED_VALUE,
				acceptUnsigned: false,
				onVerifyError: 'start',
				maxFileSizeMb: 64,
			},
		},
		id: 'a0000000-0000-4000-8000-000000000201',
		name: 'Media Generation Trigger',
		type: TRIGGER_TYPE,
		// The version a new node gets in this release.
		typeVersion: description.defaultVersion ?? 1,
		position: [0, 0],
		webhookId: TRIGGER_WEBHOOK_ID,
		credentials: CREDENTIALS,
	};
	// Every field of the trigger's panel that holds a value (notices hold none).
	const expected = fieldNames(description.properties.filter((p) => p.type !== 'notice'));
	const missing = expected.filter((f) => !setNames(trigger.parameters).includes(f));
	if (missing.length) throw new Error(`trigger fixture leaves ${missing.join(', ')} unset`);
	const noOp: FixtureNode = {
		parameters: {},
		id: 'a0000000-0000-4000-8000-000000000202',
		name: 'Received',
		type: 'n8n-nodes-base.noOp',
		typeVersion: 1,
		position: [260, 0],
	};
	return {
		file: 'trigger.json',
		what: 'Media Generation Trigger with every option set (the Task fixture calls it back)',
		workflow: chainWorkflow('Fixture: Media Generation Trigger, every option set', [trigger, noOp]),
	};
}

function exampleWorkflows() {
	const dir = path.join(ROOT, 'examples');
	return fs
		.readdirSync(dir)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((f) => ({
			file: `example-${f}`,
			what: `examples/${f} as shipped`,
			workflow: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as unknown,
		}));
}

/** The run options (Options collection) a workflow's Media Generation nodes save. */
export function savedRunOptions(workflow: unknown): string[] {
	const nodes = (workflow as { nodes: Array<{ type: string; parameters: { options?: object } }> })
		.nodes;
	return nodes
		.filter((n) => n.type === NODE_TYPE)
		.flatMap((n) => Object.keys(n.parameters.options ?? {}));
}

/** Every run option of the node's panels, to make sure the fixtures cover them all. */
export function allRunOptionNames(): string[] {
	return [
		...new Set(
			nodeProperties
				.filter((p) => p.name === 'options' && p.type === 'collection')
				.flatMap((p) => (p.options as INodeProperties[]).map((o) => o.name)),
		),
	].sort();
}

function main() {
	const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
		version: string;
		devDependencies: Record<string, string>;
	};
	// `fixtures [version] [--replace]`: the folder is the version's (default package.json's); an
	// existing one is replaced only on request, and only an unreleased version's may be.
	const args = process.argv.slice(2);
	const version = args.find((a) => !a.startsWith('-')) ?? pkg.version;
	const out = path.join(FIXTURES_DIR, version);
	if (fs.existsSync(out) && !args.includes('--replace')) {
		throw new Error(
			`${path.relative(ROOT, out)} exists: a released version's saves never change. For an unreleased version, add --replace.`,
		);
	}
	const fixtures = [...exampleWorkflows(), ...modelWorkflows(), taskWorkflow(), triggerWorkflow()];
	const runOptions = allRunOptionNames();
	const saved = new Set(fixtures.flatMap((f) => savedRunOptions(f.workflow)));
	const unsaved = runOptions.filter((o) => !saved.has(o));
	if (unsaved.length)
		throw new Error(`no fixture saves the run option(s) ${unsaved.join(', ')}: set them in one`);
	fs.rmSync(out, { recursive: true, force: true });
	fs.mkdirSync(out, { recursive: true });
	for (const f of fixtures)
		fs.writeFileSync(path.join(out, f.file), `${JSON.stringify(f.workflow, null, '\t')}\n`);
	const index = {
		savedBy: `n8n-nodes-media-generation@${version}`,
		n8nWorkflow: pkg.devDependencies['n8n-workflow'],
		placeholders: { fileHost: FILE_HOST, n8nOrigin: N8N_ORIGIN },
		// What this version offered, so that later versions' additions do not count against it.
		models: MODELS.map((m) => m.key),
		runOptions,
		workflows: fixtures.map((f) => ({ file: f.file, what: f.what })),
	};
	fs.writeFileSync(path.join(out, 'index.json'), `${JSON.stringify(index, null, '\t')}\n`);
	process.stdout.write(
		`${fixtures.length} saved workflows written to ${path.relative(ROOT, out)}\n`,
	);
}

if (require.main === module) main();
