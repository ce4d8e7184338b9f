// The node as an AI Agent tool in a real n8n 2.41.1: Chat Trigger → AI Agent 3.1 with the
// OpenAI Chat Model 1.3 pointed at a scripted model (fake-openai.ts) and Media Generation tools,
// against the simulator. ONE started n8n serves every case; each case sends chat messages to a
// published workflow and scripts the model's turns. Checked from both ends: what the service
// received (the simulator's log) and what the model was offered and got back (the fake's log).
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/require-node-api-error -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// The MCP SDK's subpaths come from its exports map ("./*"), which the import linter's resolver
// does not follow; jest and tsc resolve them.
/* eslint-disable import-x/no-unresolved */
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { mediaChunks, startSimulator, type Simulator } from '../simulator';
import { N8nInstance, ROOT, removeEmptyRunFolder } from '../e2e/n8n';
import { rest, setupOwner, type RestSession } from '../e2e/rest';
import { Table, type TableRow } from '../e2e/table';
import { credentialImport } from '../e2e/workflows';
import {
	startFakeOpenAi,
	textOf,
	toolResults,
	type ChatRequest,
	type FakeOpenAi,
	type JsonSchema,
	type OfferedTool,
} from './fake-openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
	AGENT_TABLE,
	AGENT_TABLE_COLUMNS,
	agentWorkflow,
	chat,
	exampleAgentWorkflow,
	exampleSaveWorkflow,
	exampleMcpWorkflow,
	FETCH_SCHEDULE,
	mcpBearerCredentialImport,
	openAiCredentialImport,
	toolName,
	toolNode,
	withStartVideoCallback,
	withUserAuth,
} from './agent-workflows';

jest.setTimeout(240_000);

// The built node's own lists, so the checks follow the model registry.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const vid15 = require(path.join(ROOT, 'dist/nodes/MediaGeneration/models/vidmodel15Pro.js')) as {
	ASPECT_RATIOS: readonly string[];
	DURATIONS: readonly number[];
	RESOLUTIONS: ReadonlyArray<{ value: string }>;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { TOOL_DESCRIPTIONS } = require(
	path.join(ROOT, 'dist/nodes/MediaGeneration/actions/toolDescriptions.js'),
) as {
	TOOL_DESCRIPTIONS: Record<string, Record<string, string>>;
};

const EXAMPLE = 'mgenAgentExampl';
const TOOLS = 'mgenAgentTools1';
const MCP = 'mgenMcpExample1';
const SAVE = 'mgenSaveVideos1';
/** Options → Max Submissions per Execution of the example's Start Video: the videos one chat message may start. */
const CAP = 3;
/** Minutes after which the save example fetches a video whose callback never came. */
const LATE_MINUTES = 15;
/** How often the save example's schedule looks for such videos (its Every 15 Minutes). */
const FETCH_EVERY_MINUTES = 15;
/** The owner set up by the test: the n8n user the example's chat (n8n User Auth) lets in. */
const OWNER_EMAIL = 'owner@example.com';
/** The MCP Server Trigger's bearer token, new on every run. */
const MCP_TOKEN = randomBytes(16).toString('hex');
const ALLOWED = {
	aspect_ratio: vid15.ASPECT_RATIOS.map(String),
	duration: vid15.DURATIONS.map(String),
	resolution: vid15.RESOLUTIONS.map((r) => r.value),
};
const oneOf = (values: string[]) => `one of: ${values.join(', ')}`;
/** The simulator's identifier of the further video model, offered with the two named ones. */
const VIDEO_MODEL_ID = 'video-1';
const VIDEO_MODEL_IDS = ['vidmodel-1.5-pro', 'vidmodel-2.0-fast/image-to-video', VIDEO_MODEL_ID];

const fromAi = (key: string, description: string, type = 'string') =>
	`={{ $fromAI('${key}', '${description}', '${type}') }}`;
const videoArgs = {
	prompt: fromAi('prompt', 'What the video shows: subject, setting, motion and camera'),
	aspectRatio: fromAi('aspect_ratio', `Aspect ratio of the video; ${oneOf(ALLOWED.aspect_ratio)}`),
	duration: fromAi(
		'duration',
		`Length of the video in seconds; ${oneOf(ALLOWED.duration)}`,
		'number',
	),
};

/** Tools of the test workflow: a waiting Generate (short Timeout), Get Status, and a model choice. */
const tools = [
	toolNode('Generate Video', {
		resource: 'video',
		operation: 'generate',
		model: 'vidmodel-1.5-pro',
		...videoArgs,
		vidmodel15ProOptions: {
			resolution: fromAi('resolution', `Resolution of the video; ${oneOf(ALLOWED.resolution)}`),
		},
		options: { timeoutMinutes: 0.2 },
	}),
	toolNode('Get Video Status', {
		resource: 'task',
		operation: 'getStatus',
		taskId: fromAi('task_id', 'The task_id a generation returned'),
	}),
	// The panel's Model dropdown takes no expression (n8n's publish check would also flag every
	// model's required fields): a model the agent picks goes in the by-ID model's Model ID.
	toolNode('Generate Video By Model ID', {
		resource: 'video',
		operation: 'generate',
		model: 'video-by-id',
		modelId: fromAi('model', `Video model identifier; one of: ${VIDEO_MODEL_IDS.join(', ')}`),
		prompt: videoArgs.prompt,
		waitForCompletion: false,
	}),
];

let sim: Simulator;
let fake: FakeOpenAi;
let n8n: N8nInstance;
const webhooks: Record<string, string> = {};
let mcpPath: string;
/** The save example's "Fetch Now", a production Webhook here (see exampleSaveWorkflow). */
let fetchPath: string;
let owner: RestSession;
/** The Data Table both examples write, created as the guide says. */
let table: Table;
/** Where save-finished-videos.json writes (the only folder n8n may write to here). */
let folder: string;

beforeAll(async () => {
	sim = await startSimulator({ defaultDurationMs: 1000, videoModelId: VIDEO_MODEL_ID });
	fake = await startFakeOpenAi();
	n8n = await N8nInstance.create('agent');
	folder = path.join(n8n.dir, 'files');
	fs.mkdirSync(folder);
	n8n.env.N8N_RESTRICT_FILE_ACCESS_TO = folder;
	await n8n.explain(async () => {
		const media = credentialImport(sim.baseUrl, sim.apiKey);
		await n8n.importCredentials([
			// The simulator's files are on 127.0.0.1.
			{ ...media, data: { ...media.data, allowPrivateFileHosts: true } },
			openAiCredentialImport(fake.url, fake.apiKey),
			mcpBearerCredentialImport(MCP_TOKEN),
		]);
		const save = exampleSaveWorkflow(SAVE, folder);
		// Public with n8n User Auth, as the guide's step has the user set it.
		const example = withUserAuth(
			withStartVideoCallback(
				exampleAgentWorkflow('agent-media-generation.json', EXAMPLE),
				`${n8n.baseUrl}/${save.productionPath}`,
			),
		);
		fetchPath = save.fetchPath;
		const test = agentWorkflow(TOOLS, tools);
		const mcp = exampleMcpWorkflow('mcp-media-generation.json', MCP);
		webhooks[EXAMPLE] = example.webhookId;
		webhooks[TOOLS] = test.webhookId;
		mcpPath = mcp.mcpPath;
		await n8n.importWorkflows([example, test, mcp.workflow, save.workflow]);
		await n8n.start();
		// Published as the editor does it (no `n8n publish:workflow` process per workflow).
		const session = await setupOwner(n8n);
		owner = session;
		table = await Table.createNamed(
			Table.publicApi(n8n, await ownerApiKey(session)),
			AGENT_TABLE,
			AGENT_TABLE_COLUMNS,
		);
		for (const id of [EXAMPLE, TOOLS, MCP, SAVE]) {
			const { data } = await rest<{ versionId: string }>(n8n, `/workflows/${id}`, { session });
			await rest(n8n, `/workflows/${id}/activate`, {
				method: 'POST',
				session,
				body: { versionId: data.versionId },
			});
		}
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await fake?.close();
	await sim?.close();
	removeEmptyRunFolder();
});

beforeEach(() => sim.reset());

/** An API key of the owner (n8n's public API reads and writes Data Table rows). */
async function ownerApiKey(session: RestSession) {
	const scopes = (await rest<string[]>(n8n, '/api-keys/scopes', { session })).data;
	const { data } = await rest<{ rawApiKey?: string; apiKey?: string }>(n8n, '/api-keys', {
		method: 'POST',
		session,
		body: { label: 'agent layer', scopes, expiresAt: null },
	});
	const key = data.rawApiKey ?? data.apiKey;
	if (!key) throw new Error('no key in the answer of POST /rest/api-keys');
	return key;
}
/** A chat message to the example, sent by the signed-in owner (its Chat Trigger has n8n User Auth). */
const userChat = (message: string, session: ReturnType<typeof randomUUID>) =>
	chat(n8n, webhooks[EXAMPLE], message, session, { cookie: owner.cookie });
/** The table's rows of one chat session. */
const rowsOfSession = async (session: string): Promise<TableRow[]> =>
	(await table.rows()).filter((r) => r.session === session);
async function until<T>(what: string, check: () => Promise<T | undefined | false>, ms = 60_000) {
	const deadline = Date.now() + ms;
	for (;;) {
		const v = await check();
		if (v !== undefined && v !== false) return v;
		if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
		await new Promise((r) => setTimeout(r, 200));
	}
}

const submits = () => sim.requests.filter((r) => r.endpoint === 'submit');
const submitBodies = () =>
	submits().map(
		(r) => r.body as { model: string; input: Record<string, unknown>; callback_url?: string },
	);
const toolsOf = (turn = 0): OfferedTool[] => fake.turns()[turn]?.body?.tools ?? [];
/** The tool results the model got, parsed (n8n sends each as JSON text). */
function resultsOf(turn: number) {
	const body = fake.turns()[turn]?.body;
	if (!body)
		throw new Error(
			`no turn ${turn} (the fake saw ${fake.turns().length}); problems: ${fake.problems.join('; ')}`,
		);
	return toolResults(body).map((r) => ({ name: r.name, raw: r.content, json: parse(r.content) }));
}
function parse(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}
/** The last tool result the agent sent the model in a request (earlier turns may hold others). */
function lastToolResult(request: ChatRequest) {
	const results = toolResults(request);
	if (!results.length) throw new Error('no tool result in the request');
	return results[results.length - 1];
}
async function waitFor(check: () => boolean, timeoutMs: number, what: string) {
	const deadline = Date.now() + timeoutMs;
	while (!check()) {
		if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
		await new Promise((r) => setTimeout(r, 200));
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
			const args = {
				prompt: 'A paper boat drifting down a rainy street, slow camera follow',
				aspect_ratio: '9:16',
				duration: 8,
				resolution: '1080p',
			};
			fake.script([
				{ toolCalls: [{ name: toolName('Generate Video'), args }] },
				(request) => {
					const [result] = toolResults(request);
					const file = (
						firstItem(parse(result.content)).files as Array<{ url: string }> | undefined
					)?.[0];
					return { content: `Your video is ready: ${file?.url ?? '(no url)'}` };
				},
			]);
			const answer = await chat(
				n8n,
				webhooks[TOOLS],
				'Make me a vertical 8 second video of a paper boat in the rain',
			);
			expect(fake.problems).toEqual([]);

			expect(submitBodies()).toEqual([{ model: 'vidmodel-1.5-pro', input: args }]);
			const [result] = resultsOf(1);
			expect(result.name).toBe(toolName('Generate Video'));
			const item = firstItem(result.json);
			const task = sim.task(String(item.task_id));
			expect(task).toBeDefined();
			expect(item).toMatchObject({
				task_id: task!.id,
				status: 'finished',
				model: 'vidmodel-1.5-pro',
			});
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

	test('invalid arguments: a 5 s duration (and a 2:1 aspect ratio) come back to the model as an error naming the fields and the allowed values; the corrected call is the only submit', async () => {
		await n8n.explain(async () => {
			const args = {
				prompt: 'A lighthouse at dusk, waves below',
				aspect_ratio: '16:9',
				resolution: '720p',
			};
			fake.script([
				{
					toolCalls: [
						{
							name: toolName('Generate Video'),
							args: { ...args, aspect_ratio: '2:1', duration: 5 },
						},
					],
				},
				{ toolCalls: [{ name: toolName('Generate Video'), args: { ...args, duration: 8 } }] },
				{ content: 'Done.' },
			]);
			await chat(n8n, webhooks[TOOLS], 'A 5 second lighthouse video please');
			expect(fake.problems).toEqual([]);

			const [refused] = resultsOf(1);
			expect(refused.raw).toMatch(/duration/);
			expect(refused.raw).toContain(ALLOWED.duration.join(', '));
			expect(refused.raw).toMatch(/\b5\b/);
			// Every problem of the call in one answer: one correction, not one per field.
			expect(refused.raw).toContain('aspect_ratio');
			expect(refused.raw).toContain(ALLOWED.aspect_ratio.join(', '));
			expect(refused.raw).not.toContain(sim.apiKey);
			// Nothing was sent for the refused call; the corrected one is the only task.
			expect(submitBodies()).toEqual([
				{ model: 'vidmodel-1.5-pro', input: { ...args, duration: 8 } },
			]);
			expect(firstItem(resultsOf(2)[1].json).status).toBe('finished');
		});
	});

	test('a model chosen with $fromAI: an identifier the service does not know is refused with no task created, naming the allowed ones', async () => {
		await n8n.explain(async () => {
			const prompt = 'Clouds over mountains, time-lapse';
			fake.script([
				{
					toolCalls: [
						{ name: toolName('Generate Video By Model ID'), args: { prompt, model: 'sora-9' } },
					],
				},
				{
					toolCalls: [
						{
							name: toolName('Generate Video By Model ID'),
							args: { prompt, model: VIDEO_MODEL_ID },
						},
					],
				},
				{ content: 'Started.' },
			]);
			await chat(n8n, webhooks[TOOLS], 'Clouds over mountains with the sora-9 model');
			expect(fake.problems).toEqual([]);

			const [refused] = resultsOf(1);
			expect(refused.raw).toContain('sora-9');
			for (const model of VIDEO_MODEL_IDS) expect(refused.raw).toContain(model);
			expect(refused.raw).toMatch(/no task was created/i);
			// The refused request created nothing; the corrected one is the only task.
			expect(submits().map((r) => r.status)).toEqual([400, 200]);
			expect(sim.tasks().map((t) => t.model)).toEqual([VIDEO_MODEL_ID]);
			expect(submitBodies()[1]).toEqual({ model: VIDEO_MODEL_ID, input: { prompt } });
		});
	});

	test('long generations (examples/agent-media-generation.json, guide docs/agent-videos.md): Start Video returns the task_id at once; the memory keeps it, so "is it ready?" is enough; the finished video is saved by save-finished-videos.json without anyone asking', async () => {
		await n8n.explain(async () => {
			// A ten-minute video: the simulator's clock is moved instead of waiting.
			const args = {
				prompt: 'A slow dolly shot through a neon market at night [sim:duration=600000]',
				aspect_ratio: '16:9',
				duration: 12,
				resolution: '1080p',
			};
			const session = randomUUID();
			fake.script([
				{ toolCalls: [{ name: toolName('Start Video'), args }] },
				(request) => ({
					content: `Started, task ${String(firstItem(parse(lastToolResult(request).content)).task_id)}`,
				}),
			]);
			const first = await userChat('Make a 12 second video of a neon market', session);
			expect(fake.problems).toEqual([]);
			// Submitted once, with the save workflow's trigger as callback (signed by the node).
			expect(submitBodies()).toEqual([
				{
					model: 'vidmodel-1.5-pro',
					input: args,
					callback_url: expect.stringMatching(/\/media-generation\?(.*&)?sig=/),
				},
			]);
			const started = firstItem(resultsOf(1)[0].json);
			const taskId = String(started.task_id);
			expect(sim.task(taskId)).toBeDefined();
			// The agent answered while the task still runs at the service: nothing waited for it.
			expect(sim.task(taskId)!.endedAt).toBeUndefined();
			expect(['not_started', 'queued', 'processing']).toContain(started.status);
			expect(first.output).toBe(`Started, task ${taskId}`);
			// Authentication on the public chat: without the n8n session, n8n answers 401 and
			// nothing runs (no model turn, no submission).
			const turns = fake.turns().length;
			const anonymous = await fetch(`${n8n.baseUrl}/webhook/${webhooks[EXAMPLE]}/chat`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({
					action: 'sendMessage',
					sessionId: session,
					chatInput: 'Make a video',
				}),
			});
			expect(anonymous.status).toBe(401);
			expect(fake.turns()).toHaveLength(turns);
			expect(submits()).toHaveLength(1);
			// The task is written where the user sees it: one row, who asked and what, 'submitted'.
			expect(await rowsOfSession(session)).toEqual([
				expect.objectContaining({
					session,
					user: OWNER_EMAIL,
					prompt: args.prompt,
					task_id: taskId,
					status: 'submitted',
					video_file: null,
				}),
			]);

			// The user does not repeat the task_id: the scripted model finds it in the conversation
			// n8n sends it, which holds the earlier turns only through the Simple Memory.
			const remembered = (request: ChatRequest) =>
				/task_[0-9a-f]+/.exec(
					request.messages
						.slice(0, -1)
						.map((m) => textOf(m.content))
						.join('\n'),
				)?.[0];
			const check = () =>
				fake.script([
					(request) => ({
						toolCalls: [
							{
								name: toolName('Get Video Status'),
								args: { task_id: remembered(request) ?? 'no task_id in the conversation' },
							},
						],
					}),
					(request) => {
						const task = firstItem(parse(lastToolResult(request).content));
						const url = (task.files as Array<{ url: string }> | undefined)?.[0]?.url;
						return {
							content:
								task.status === 'finished' ? `Ready: ${url}` : `Still ${String(task.status)}`,
						};
					},
				]);
			check();
			const early = await userChat('Is my video ready?', session);
			expect(fake.problems).toEqual([]);
			expect(remembered(fake.turns()[0].body!)).toBe(taskId);
			expect(early.output).toMatch(/^Still (not_started|queued|processing)$/);

			sim.clock.advance(600_000);
			// The service calls the save workflow's trigger back; it saves the video, unasked.
			const task = sim.task(taskId)!;
			const saved = path.join(folder, `${taskId}.mp4`);
			await waitFor(
				() => fs.existsSync(saved) && fs.statSync(saved).size === task.files[0].size,
				60_000,
				`${saved} written`,
			);
			expect(
				fs
					.readFileSync(saved)
					.equals(Buffer.concat([...mediaChunks(task.files[0].kind, task.files[0].size)])),
			).toBe(true);
			// ...and marks its row saved.
			const [savedRow] = await until('the row marked saved', async () => {
				const rows = await rowsOfSession(session);
				return rows[0]?.status === 'saved' && rows;
			});
			expect(savedRow).toMatchObject({ task_id: taskId, video_file: `${taskId}.mp4` });

			check();
			const later = await userChat('Is my video ready now?', session);
			expect(fake.problems).toEqual([]);
			const done = firstItem(parse(lastToolResult(fake.turns()[1].body!).content));
			expect(done).toMatchObject({ task_id: taskId, status: 'finished' });
			expect(typeof done.expires_at).toBe('string');
			const files = done.files as Array<Record<string, unknown>>;
			expect(files.map((f) => [f.url, f.mime_type])).toEqual(
				task.files.map((f) => [f.url, 'video/mp4']),
			);
			expect(later.output).toBe(`Ready: ${task.files[0].url}`);
			// Checking cost no new generation, and wrote no row.
			expect(submits()).toHaveLength(1);
			expect(await rowsOfSession(session)).toHaveLength(1);
		});
	});

	test(`a cap per chat message (examples/agent-media-generation.json): the model asks for ${CAP + 1} videos at once; Start Video's Max Submissions per Execution starts ${CAP}, refuses the next with nothing sent, and the table gets one row per task; the next message may start again`, async () => {
		await n8n.explain(async () => {
			const example = JSON.parse(
				fs.readFileSync(path.join(ROOT, 'examples', 'agent-media-generation.json'), 'utf8'),
			) as {
				nodes: Array<{ name: string; parameters: { options?: { maxSubmissions?: number } } }>;
			};
			expect(
				example.nodes.find((n) => n.name === 'Start Video')?.parameters.options?.maxSubmissions,
			).toBe(CAP);
			const session = randomUUID();
			// A message that calls no tool still gets its answer (no row, nothing submitted).
			fake.script([{ content: 'Hello, what should I make?' }]);
			expect((await userChat('hi', session)).output).toBe('Hello, what should I make?');
			expect(await rowsOfSession(session)).toEqual([]);
			const video = (i: number) => ({
				prompt: `Product shot number ${i} of a ceramic mug [sim:duration=600000]`,
				aspect_ratio: '1:1',
				duration: 4,
				resolution: '480p',
			});
			let refusal = '';
			fake.script([
				{
					toolCalls: Array.from({ length: CAP + 1 }, (_, i) => ({
						name: toolName('Start Video'),
						args: video(i),
					})),
				},
				(request) => {
					refusal = toolResults(request)
						.map((r) => r.content)
						.filter((c) => /Max Submissions per Execution/.test(c))
						.join('\n');
					return { content: 'Started some of them.' };
				},
			]);
			const answer = await userChat(`Make ${CAP + 1} mug videos`, session);
			expect(fake.problems).toEqual([]);
			expect(answer.output).toBe('Started some of them.');
			expect(submits()).toHaveLength(CAP);
			expect(refusal).toContain(
				`This execution would submit ${CAP + 1} generations (1 now, ${CAP} earlier in this execution), more than Options → Max Submissions per Execution (${CAP})`,
			);
			const rows = await rowsOfSession(session);
			expect(rows.map((r) => r.task_id).sort()).toEqual(
				sim
					.tasks()
					.map((t) => t.id)
					.sort(),
			);
			expect(rows.every((r) => r.status === 'submitted' && r.user === OWNER_EMAIL)).toBe(true);

			// The cap is per execution, one per chat message: the next message starts the rest.
			fake.script([
				{ toolCalls: [{ name: toolName('Start Video'), args: video(CAP) }] },
				{ content: 'Started the last one.' },
			]);
			await userChat('Now the last one', session);
			expect(fake.problems).toEqual([]);
			expect(submits()).toHaveLength(CAP + 1);
			expect(await rowsOfSession(session)).toHaveLength(CAP + 1);
		});
	});

	test(`n8n restarted while a video renders, its callback lost (examples/save-finished-videos.json): the row stays 'submitted'; the fetch leaves it alone while younger than ${LATE_MINUTES} minutes, then downloads the video by its task ID, saves it and marks the row saved`, async () => {
		await n8n.explain(async () => {
			const saveExample = fs.readFileSync(
				path.join(ROOT, 'examples', 'save-finished-videos.json'),
				'utf8',
			);
			expect(saveExample).toContain(`$now.minus({ minutes: ${LATE_MINUTES} })`);
			const schedule = (
				JSON.parse(saveExample) as {
					nodes: Array<{ name: string; parameters: Record<string, unknown> }>;
				}
			).nodes.find((n) => n.name === FETCH_SCHEDULE)?.parameters;
			expect(schedule?.rule).toEqual({
				interval: [{ field: 'minutes', minutesInterval: FETCH_EVERY_MINUTES }],
			});
			const session = randomUUID();
			const args = {
				prompt: 'A sailing boat at sunrise, drone shot [sim:duration=600000]',
				aspect_ratio: '16:9',
				duration: 8,
				resolution: '720p',
			};
			// A second video that is still rendering when the fetch comes: its row waits for the next one.
			const rendering = { ...args, prompt: 'A glacier calving, slow motion [sim:never]' };
			fake.script([
				{
					toolCalls: [
						{ name: toolName('Start Video'), args },
						{ name: toolName('Start Video'), args: rendering },
					],
				},
				{ content: 'Started.' },
			]);
			await userChat('A sailing boat video please, and a glacier', session);
			expect(fake.problems).toEqual([]);
			const task = sim.tasks().find((t) => t.prompt === args.prompt)!;
			const still = sim.tasks().find((t) => t.prompt === rendering.prompt)!;
			// n8n stops (an update, a restart) while the video renders: the service's report, sent
			// meanwhile with its retries, reaches nobody.
			await n8n.stop();
			sim.clock.advance(600_000);
			await sim.idle();
			const lost = sim.callbacks.filter((c) => c.taskId === task.id);
			expect(lost.length).toBeGreaterThan(0);
			expect(lost.filter((c) => c.status !== 0)).toEqual([]);
			await n8n.start();
			const saved = path.join(folder, `${task.id}.mp4`);
			const fetchNow = async () => {
				// Published webhooks are registered shortly after n8n reports ready.
				const deadline = Date.now() + 30_000;
				for (;;) {
					const res = await fetch(`${n8n.baseUrl}/${fetchPath}`, { method: 'POST', body: '{}' });
					const text = await res.text();
					if (res.status === 404 && Date.now() < deadline) {
						await new Promise((r) => setTimeout(r, 250));
						continue;
					}
					expect([res.status, text.slice(0, 300)]).toEqual([200, expect.any(String)]);
					return;
				}
			};

			// Asked a moment ago: its callback may still come; the fetch leaves it alone.
			await fetchNow();
			expect(fs.existsSync(saved)).toBe(false);
			const byTask = async () =>
				Object.fromEntries((await rowsOfSession(session)).map((r) => [String(r.task_id), r]));
			expect(await byTask()).toEqual({
				[task.id]: expect.objectContaining({ status: 'submitted', error: null }),
				[still.id]: expect.objectContaining({ status: 'submitted', error: null }),
			});

			// Older than the wait: fetched by its task ID (nothing paid again), saved, row updated.
			const older = new Date(Date.now() - (LATE_MINUTES + 5) * 60_000).toISOString();
			for (const t of [task, still]) await table.update({ task_id: t.id }, { asked_at: older });
			await fetchNow();
			expect(
				fs
					.readFileSync(saved)
					.equals(Buffer.concat([...mediaChunks(task.files[0].kind, task.files[0].size)])),
			).toBe(true);
			const rows = await byTask();
			expect(rows[task.id]).toMatchObject({ status: 'saved', video_file: `${task.id}.mp4` });
			// The one still rendering keeps 'submitted' for the next fetch, with the reason.
			expect(rows[still.id]).toMatchObject({ status: 'submitted', video_file: null });
			expect(String(rows[still.id].error)).toMatch(/is not finished yet/);
			expect(fs.existsSync(path.join(folder, `${still.id}.mp4`))).toBe(false);
			expect(submits()).toHaveLength(2);
		});
	});

	test('a waiting tool call respects its Timeout and returns the task_id when the time runs out', async () => {
		await n8n.explain(async () => {
			const args = {
				prompt: 'An endless staircase [sim:never]',
				aspect_ratio: '1:1',
				duration: 4,
				resolution: '480p',
			};
			let seen = '';
			fake.script([
				{ toolCalls: [{ name: toolName('Generate Video'), args }] },
				(request) => {
					seen = toolResults(request)[0].content;
					const id = /task_[A-Za-z0-9_-]+/.exec(seen)?.[0] ?? '(none)';
					return { toolCalls: [{ name: toolName('Get Video Status'), args: { task_id: id } }] };
				},
				(request) => ({
					content: `Still ${String(firstItem(parse(toolResults(request)[1].content)).status)}`,
				}),
			]);
			const answer = await chat(n8n, webhooks[TOOLS], 'An endless staircase video');
			expect(fake.problems).toEqual([]);
			const [only] = submits();
			expect(submits()).toHaveLength(1);
			const taskId = String(only.taskId ?? sim.tasks()[0].id);
			// Options → Timeout is 0.2 minutes (room for the happy path on a busy machine): the call ends at 12 s, naming the task.
			expect(seen).toContain(taskId);
			expect(seen).toMatch(/did not finish within the timeout of 12 s/);
			expect(sim.task(taskId)!.endedAt).toBeUndefined();
			expect(answer.output).toBe('Still processing');
		});
	});

	test('schema quality: every argument has a description, fixed choices state their allowed values, each tool says what it costs and returns', async () => {
		await n8n.explain(async () => {
			fake.script([{ content: 'Hello.' }]);
			await chat(n8n, webhooks[TOOLS], 'hi');
			const offered = toolsOf(0);
			expect(offered.map((t) => t.function.name).sort()).toEqual(
				['Generate Video', 'Generate Video By Model ID', 'Get Video Status'].map(toolName).sort(),
			);
			const byName = Object.fromEntries(offered.map((t) => [t.function.name, t.function]));
			// The default description of each tool is its operation's.
			expect(byName[toolName('Generate Video')].description).toBe(TOOL_DESCRIPTIONS.video.generate);
			expect(byName[toolName('Get Video Status')].description).toBe(
				TOOL_DESCRIPTIONS.task.getStatus,
			);
			expect(TOOL_DESCRIPTIONS.video.generate).toMatch(/paid/);
			for (const field of [
				'task_id',
				'status',
				'files',
				'url',
				'mime_type',
				'file_name',
				'expires_at',
			])
				expect(TOOL_DESCRIPTIONS.video.generate).toContain(field);

			for (const tool of offered) {
				const schema = tool.function.parameters as JsonSchema;
				for (const [key, prop] of Object.entries(schema.properties ?? {})) {
					expect([tool.function.name, key, (prop.description ?? '').trim().length > 0]).toEqual([
						tool.function.name,
						key,
						true,
					]);
				}
			}
			const video = byName[toolName('Generate Video')].parameters!.properties!;
			expect(Object.keys(video).sort()).toEqual([
				'aspect_ratio',
				'duration',
				'prompt',
				'resolution',
			]);
			expect(video.duration.type).toBe('number');
			// n8n 2.41.1's $fromAI offers the types string, number, boolean and json, no enum: the
			// fixed choices are stated in the description, from the model registry, and enforced
			// by the node (see the invalid-arguments case).
			for (const key of ['aspect_ratio', 'duration', 'resolution'] as const)
				expect(video[key].description).toContain(oneOf(ALLOWED[key]));
			const byId = byName[toolName('Generate Video By Model ID')].parameters!.properties!;
			expect(byId.model.description).toContain(VIDEO_MODEL_IDS.join(', '));
		});
	});
});

describe("the node behind n8n's MCP Server Trigger (examples/mcp-media-generation.json), called with the official MCP client SDK", () => {
	const mcpUrl = () => new URL(`${n8n.baseUrl}/mcp/${mcpPath}`);
	/** The text of a tool result (n8n answers the output items' JSON as one text content). */
	const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
		(result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');

	/** Connects as Claude Desktop or Cursor would over streamable HTTP; n8n may take a moment to register the published webhook. */
	async function connect(): Promise<Client> {
		const deadline = Date.now() + 30_000;
		for (;;) {
			const client = new Client({ name: 'mgen-agent-layer', version: '1.0.0' });
			const transport = new StreamableHTTPClientTransport(mcpUrl(), {
				requestInit: { headers: { Authorization: `Bearer ${MCP_TOKEN}` } },
			});
			try {
				await client.connect(transport);
				return client;
			} catch (error) {
				await client.close().catch(() => undefined);
				if (Date.now() > deadline || !/404|not registered/i.test(String(error))) throw error;
				await new Promise((r) => setTimeout(r, 250));
			}
		}
	}

	test('the trigger refuses a client without its bearer token; with it: tools listed with their descriptions and schemas, one call submits once, a wrong duration is refused before anything is sent, Get Video Status finishes the job', async () => {
		await n8n.explain(async () => {
			const client = await connect();
			try {
				// Authentication on the trigger: the same request without the token, or with another, is refused (n8n answers 403).
				for (const authorization of [undefined, 'Bearer not-the-token']) {
					const res = await fetch(mcpUrl(), {
						method: 'POST',
						headers: {
							'content-type': 'application/json',
							accept: 'application/json, text/event-stream',
							...(authorization ? { authorization } : {}),
						},
						body: JSON.stringify({
							jsonrpc: '2.0',
							id: 1,
							method: 'initialize',
							params: {
								protocolVersion: '2025-06-18',
								capabilities: {},
								clientInfo: { name: 'anonymous', version: '1' },
							},
						}),
					});
					expect([authorization, res.status]).toEqual([authorization, 403]);
				}

				const { tools: listed } = await client.listTools();
				expect(listed.map((t) => t.name).sort()).toEqual(
					[toolName('Get Video Status'), toolName('Start Video')].sort(),
				);
				const byName = Object.fromEntries(listed.map((t) => [t.name, t]));
				const start = byName[toolName('Start Video')];
				expect(start.description).toBe(TOOL_DESCRIPTIONS.video.generate);
				expect(byName[toolName('Get Video Status')].description).toBe(
					TOOL_DESCRIPTIONS.task.getStatus,
				);
				const props = start.inputSchema.properties as Record<
					string,
					{ type?: string; description?: string }
				>;
				expect(Object.keys(props).sort()).toEqual([
					'aspect_ratio',
					'duration',
					'prompt',
					'resolution',
				]);
				expect(props.duration.type).toBe('number');
				expect(props.duration.description).toContain(oneOf(ALLOWED.duration));

				// A wrong duration: an error naming the allowed values, and nothing sent.
				const args = {
					prompt: 'A kite over a beach at noon [sim:duration=600000]',
					aspect_ratio: '16:9',
					resolution: '720p',
				};
				const refused = await client.callTool({
					name: start.name,
					arguments: { ...args, duration: 5 },
				});
				expect(refused.isError).toBe(true);
				expect(textOf(refused)).toMatch(/duration/);
				expect(textOf(refused)).toContain(ALLOWED.duration.join(', '));
				expect(textOf(refused)).not.toContain(sim.apiKey);
				expect(submits()).toHaveLength(0);

				// One call, one submit: the task_id comes back at once, the video goes on rendering.
				const started = await client.callTool({
					name: start.name,
					arguments: { ...args, duration: 8 },
				});
				expect(started.isError).toBeFalsy();
				expect(submitBodies()).toEqual([
					{ model: 'vidmodel-1.5-pro', input: { ...args, duration: 8 } },
				]);
				const item = firstItem(parse(textOf(started)));
				const taskId = String(item.task_id);
				expect(sim.task(taskId)).toBeDefined();
				expect(['not_started', 'queued', 'processing']).toContain(item.status);

				// The long-generation pattern over MCP: a status read later, no new generation.
				sim.clock.advance(600_000);
				const checked = await client.callTool({
					name: toolName('Get Video Status'),
					arguments: { task_id: taskId },
				});
				expect(checked.isError).toBeFalsy();
				const done = firstItem(parse(textOf(checked)));
				const task = sim.task(taskId)!;
				expect(done).toMatchObject({ task_id: taskId, status: 'finished' });
				expect((done.files as Array<{ url: string }>).map((f) => f.url)).toEqual(
					task.files.map((f) => f.url),
				);
				expect(submits()).toHaveLength(1);
			} finally {
				await client.close();
			}
		});
	});
});
