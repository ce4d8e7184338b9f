// The node as an AI Agent tool in a real n8n 2.41.1: Chat Trigger → AI Agent 3.1 with the
// OpenAI Chat Model 1.3 pointed at a scripted model (fake-openai.ts) and Media Generation tools,
// against the simulator. ONE started n8n serves every case; each case sends chat messages to a
// published workflow and scripts the model's turns. Checked from both ends: what the service
// received (the simulator's log) and what the model was offered and got back (the fake's log).
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import { N8nInstance, ROOT, removeEmptyRunFolder } from '../e2e/n8n';
import { credentialImport } from '../e2e/workflows';
import { startFakeOpenAi, toolResults, type FakeOpenAi, type JsonSchema, type OfferedTool } from './fake-openai';
import { agentWorkflow, chat, exampleAgentWorkflow, openAiCredentialImport, toolName, toolNode } from './agent-workflows';

jest.setTimeout(240_000);

// The built node's own lists, so the checks follow the model registry.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const vid15 = require(path.join(ROOT, 'dist/nodes/MediaGeneration/models/vidmodel15Pro.js')) as {
	ASPECT_RATIOS: readonly string[];
	DURATIONS: readonly number[];
	RESOLUTIONS: ReadonlyArray<{ value: string }>;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MODELS } = require(path.join(ROOT, 'dist/nodes/MediaGeneration/models/index.js')) as {
	MODELS: Array<{ key: string; kind: string }>;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { TOOL_DESCRIPTIONS } = require(path.join(ROOT, 'dist/nodes/MediaGeneration/actions/toolDescriptions.js')) as {
	TOOL_DESCRIPTIONS: Record<string, Record<string, string>>;
};

const EXAMPLE = 'mgenAgentExampl';
const TOOLS = 'mgenAgentTools1';
const ALLOWED = {
	aspect_ratio: vid15.ASPECT_RATIOS.map(String),
	duration: vid15.DURATIONS.map(String),
	resolution: vid15.RESOLUTIONS.map((r) => r.value),
	model: MODELS.filter((m) => m.kind === 'video').map((m) => m.key),
};
const oneOf = (values: string[]) => `one of: ${values.join(', ')}`;

const fromAi = (key: string, description: string, type = 'string') =>
	`={{ $fromAI('${key}', '${description}', '${type}') }}`;
const videoArgs = {
	prompt: fromAi('prompt', 'What the video shows: subject, setting, motion and camera'),
	aspectRatio: fromAi('aspect_ratio', `Aspect ratio of the video; ${oneOf(ALLOWED.aspect_ratio)}`),
	duration: fromAi('duration', `Length of the video in seconds; ${oneOf(ALLOWED.duration)}`, 'number'),
};

/** Tools of the test workflow: a waiting Generate (short Timeout), Get Status, and a model choice. */
const tools = [
	toolNode('Generate Video', {
		resource: 'video',
		operation: 'generate',
		model: 'vidmodel-1.5-pro',
		...videoArgs,
		vidmodel15ProOptions: { resolution: fromAi('resolution', `Resolution of the video; ${oneOf(ALLOWED.resolution)}`) },
		options: { timeoutMinutes: 0.15 },
	}),
	toolNode('Get Video Status', {
		resource: 'task',
		operation: 'getStatus',
		taskId: fromAi('task_id', 'The task_id a generation returned'),
	}),
	toolNode('Generate Video With Model', {
		resource: 'video',
		operation: 'generate',
		model: fromAi('model', `Video model; ${oneOf(ALLOWED.model.filter((m) => !m.endsWith('-by-id')))}`),
		...videoArgs,
		waitForCompletion: false,
	}),
];

let sim: Simulator;
let fake: FakeOpenAi;
let n8n: N8nInstance;
const webhooks: Record<string, string> = {};

beforeAll(async () => {
	sim = await startSimulator({ defaultDurationMs: 1500 });
	fake = await startFakeOpenAi();
	n8n = await N8nInstance.create('agent');
	await n8n.explain(async () => {
		const media = credentialImport(sim.baseUrl, sim.apiKey);
		await n8n.importCredentials([
			// The simulator's files are on 127.0.0.1.
			{ ...media, data: { ...media.data, allowPrivateFileHosts: true } },
			openAiCredentialImport(fake.url, fake.apiKey),
		]);
		const example = exampleAgentWorkflow('agent-media-generation.json', EXAMPLE);
		const test = agentWorkflow(TOOLS, tools);
		webhooks[EXAMPLE] = example.webhookId;
		webhooks[TOOLS] = test.webhookId;
		await n8n.importWorkflows([example, test]);
		for (const id of [EXAMPLE, TOOLS]) await n8n.cli(['publish:workflow', `--id=${id}`], { label: `publish-${id}` });
		await n8n.start();
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await fake?.close();
	await sim?.close();
	removeEmptyRunFolder();
});

beforeEach(() => sim.reset());

const submits = () => sim.requests.filter((r) => r.endpoint === 'submit');
const submitBodies = () => submits().map((r) => r.body as { model: string; input: Record<string, unknown> });
const toolsOf = (turn = 0): OfferedTool[] => fake.turns()[turn]?.body?.tools ?? [];
/** The tool results the model got, parsed (n8n sends each as JSON text). */
function resultsOf(turn: number) {
	const body = fake.turns()[turn]?.body;
	if (!body) throw new Error(`no turn ${turn} (the fake saw ${fake.turns().length}); problems: ${fake.problems.join('; ')}`);
	return toolResults(body).map((r) => ({ name: r.name, raw: r.content, json: parse(r.content) }));
}
function parse(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}
/** The first item of a tool result: n8n hands the model the items' json (an array, or one object). */
function firstItem(json: unknown): Record<string, unknown> {
	const value = Array.isArray(json) ? json[0] : json;
	return (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
}

describe('the node as an AI Agent tool (n8n 2.41.1, scripted chat model)', () => {
	test('happy path: the model’s prompt, aspect ratio and duration reach the service exactly; the agent gets task, files and expiry; the answer quotes the URL', async () => {
		await n8n.explain(async () => {
			const args = { prompt: 'A paper boat drifting down a rainy street, slow camera follow', aspect_ratio: '9:16', duration: 8, resolution: '1080p' };
			fake.script([
				{ toolCalls: [{ name: toolName('Generate Video'), args }] },
				(request) => {
					const [result] = toolResults(request);
					const file = (firstItem(parse(result.content)).files as Array<{ url: string }> | undefined)?.[0];
					return { content: `Your video is ready: ${file?.url ?? '(no url)'}` };
				},
			]);
			const answer = await chat(n8n, webhooks[TOOLS], 'Make me a vertical 8 second video of a paper boat in the rain');
			expect(fake.problems).toEqual([]);

			expect(submitBodies()).toEqual([{ model: 'vidmodel-1.5-pro', input: args }]);
			const [result] = resultsOf(1);
			expect(result.name).toBe(toolName('Generate Video'));
			const item = firstItem(result.json);
			const task = sim.task(String(item.task_id));
			expect(task).toBeDefined();
			expect(item).toMatchObject({ task_id: task!.id, status: 'finished', model: 'vidmodel-1.5-pro' });
			expect(typeof item.expires_at).toBe('string');
			const files = item.files as Array<Record<string, unknown>>;
			expect(files).toHaveLength(task!.files.length);
			files.forEach((f, i) => {
				expect(f.url).toBe(task!.files[i].url);
				expect(f.mime_type).toBe('video/mp4');
				expect(String(f.file_name)).toMatch(/\.mp4$/);
			});
			expect(answer.output).toBe(`Your video is ready: ${task!.files[0].url}`);
		});
	});
});
