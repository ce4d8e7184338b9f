// Test-only. The saved-workflow fixtures (test/fixtures/saved-workflows/<version>/) imported into
// a real n8n as saved and run against the simulator, all on one `n8n start`:
// - the workflows started by a Manual Trigger are started by a Webhook node each instead, all at
//   once (n8n has no manual run without its editor, and an execution costs less than one
//   `n8n execute` each); the nodes of the package keep their saved parameters verbatim;
// - the webhook-started ones (the Trigger fixtures, the durable-wait example) are activated;
//   the manual ones' submissions call the Trigger fixtures back, and the durable-wait example
//   parks on its callbacks.
// Only addresses change: the fixtures' placeholder origins become the simulator's file host and
// this n8n, their credential becomes the test's (allowPrivateFileHosts: the files are on loopback).
// Used by the e2e layer (n8n 2.41.1) and the compat layer (the oldest supported n8n).
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { FILE_HOST, FIXTURES_DIR, N8N_ORIGIN } from '../../tools/saved-workflows';
import { startSimulator, type Simulator } from '../simulator';
import { referenceChunks } from '../simulator/media';
import {
	CREDENTIAL_TYPE,
	N8nInstance,
	NODE_TYPE,
	TRIGGER_TYPE,
	createOwnerApiKey,
	removeEmptyRunFolder,
	type BinaryJson,
	type ExecutionSummary,
	type ItemJson,
} from './n8n';
import {
	CREDENTIAL,
	credentialImport,
	webhookNode,
	type Connections,
	type WorkflowNode,
} from './workflows';
import { endedExecutions, postWebhook } from './executions-api';
import { Table } from './table';
import {
	AGENT_TABLE,
	AGENT_TABLE_COLUMNS,
	chat,
	openAiCredentialImport,
	prepare,
	toolName,
} from '../agent/agent-workflows';
import { startFakeOpenAi, toolResults, type FakeOpenAi } from '../agent/fake-openai';

interface SavedWorkflow {
	name: string;
	nodes: WorkflowNode[];
	connections: Record<
		string,
		{ main: Array<Array<{ node: string; type: string; index: number }>> }
	>;
	settings?: Record<string, unknown>;
}

interface Fixture {
	/** `<version>/<file>` */
	label: string;
	id: string;
	workflow: SavedWorkflow;
}

const MANUAL = 'n8n-nodes-base.manualTrigger';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const ours = (n: WorkflowNode) => n.type === NODE_TYPE || n.type === TRIGGER_TYPE;

/**
 * Every fixture of every version, as imported: placeholders pointed at this set-up, webhook ids
 * made unique per version folder (two versions save the same example with the same id).
 */
/** The service's address in the HTTP Request loop examples, as users import them. */
const SERVICE_PLACEHOLDER = 'https://media-generation.example.com';
/** The loop examples' Header Auth credential (Authorization: Bearer <API key>). */
const HEADER_CREDENTIAL = { id: 'mgenHdrAuth0001', name: 'Media Generation API key (header)' };

function loadFixtures(fileHost: string, n8nOrigin: string, serviceUrl: string): Fixture[] {
	const versions = fs
		.readdirSync(FIXTURES_DIR)
		.filter((v) => fs.statSync(path.join(FIXTURES_DIR, v)).isDirectory())
		.sort();
	// A version saves most workflows exactly as the one before it: such a copy is run once, under
	// the earlier version's label (the unit test checks every folder in full).
	const seen = new Map<string, string>();
	return versions.flatMap((version, v) => {
		const all = fs
			.readdirSync(path.join(FIXTURES_DIR, version))
			.filter((f) => f.endsWith('.json') && f !== 'index.json')
			.sort();
		const allTexts = all.map((f) => fs.readFileSync(path.join(FIXTURES_DIR, version, f), 'utf8'));
		const fresh = all.map((f, i) => seen.get(f) !== allTexts[i]);
		all.forEach((f, i) => seen.set(f, allTexts[i]));
		// A changed trigger needs its callers: a workflow that calls a fresh one's webhook runs
		// again too (the example that submits with the receiving example's URL, say), and so on.
		const idsIn = (t: string) => [...t.matchAll(/"webhookId":\s*"([^"]+)"/g)].map((m) => m[1]);
		for (let added = true; added; ) {
			added = false;
			const ids = allTexts.filter((_, i) => fresh[i]).flatMap(idsIn);
			allTexts.forEach((t, i) => {
				if (!fresh[i] && ids.some((id) => t.includes(id))) fresh[i] = added = true;
			});
		}
		const files = all.filter((_, i) => fresh[i]);
		const texts = allTexts.filter((_, i) => fresh[i]);
		const webhookIds = new Set(
			texts.flatMap((t) => [...t.matchAll(/"webhookId":\s*"([^"]+)"/g)].map((m) => m[1])),
		);
		return files.map((file, i) => {
			let text = texts[i]
				.split(FILE_HOST)
				.join(fileHost)
				.split(N8N_ORIGIN)
				.join(n8nOrigin)
				.split(SERVICE_PLACEHOLDER)
				.join(serviceUrl);
			if (v > 0)
				for (const id of webhookIds)
					text = text.split(id).join(`${id.slice(0, -4)}${String(v).padStart(4, '0')}`);
			const workflow = JSON.parse(text) as SavedWorkflow;
			for (const node of workflow.nodes) {
				if (node.credentials?.[CREDENTIAL_TYPE]) node.credentials[CREDENTIAL_TYPE] = CREDENTIAL;
				if (node.credentials?.httpHeaderAuth) node.credentials.httpHeaderAuth = HEADER_CREDENTIAL;
			}
			const id = `mgenSv${createHash('sha256').update(`${version}/${file}`).digest('hex').slice(0, 9)}`;
			return { label: `${version}/${file}`, id, workflow };
		});
	});
}

/**
 * The Manual-Trigger fixtures, each started by a Webhook in place of its triggers (path
 * `<webhookPath>-<n>`), under the fixture's id. They run at once: one after another they would
 * take the sum of their waits (two minutes), where each takes a few seconds. Node names carry
 * the fixture's label, so their runs read as one (`origin`: each node's fixture and saved node).
 */
function manualFixtureWorkflows(fixtures: Fixture[], webhookPath: string) {
	const origin = new Map<string, { fixture: string; node: WorkflowNode }>();
	const workflows = fixtures.map(({ label, id, workflow }, i) => {
		const path = `${webhookPath}-${i}`;
		const start = { ...webhookNode(path), name: 'Start' };
		const nodes: WorkflowNode[] = [start];
		const connections: SavedWorkflow['connections'] = { Start: { main: [[]] } };
		const rename = (name: string) => `${label}: ${name}`;
		const triggers = new Set(workflow.nodes.filter((n) => n.type === MANUAL).map((n) => n.name));
		for (const node of workflow.nodes.filter((n) => !triggers.has(n.name))) {
			const copy = { ...node, id: randomUUID(), name: rename(node.name) };
			nodes.push(copy);
			origin.set(copy.name, { fixture: label, node });
		}
		for (const [from, out] of Object.entries(workflow.connections)) {
			const main = out.main.map((targets) => targets.map((t) => ({ ...t, node: rename(t.node) })));
			if (triggers.has(from)) connections.Start.main[0].push(...main[0]);
			else connections[rename(from)] = { main };
		}
		return {
			path,
			workflow: {
				id,
				name: `${label} (webhook-started)`,
				active: false,
				nodes,
				connections,
				settings: { executionOrder: 'v1' },
				pinData: {},
			},
		};
	});
	return { workflows, origin };
}

const isManual = (f: Fixture) => f.workflow.nodes.some((n) => n.type === MANUAL);
/**
 * n8n's own nodes a fixture may use here: none of them reaches anything but this n8n. A fixture
 * with another node (an AI Agent needs a chat model: the agent layer runs that example with its
 * scripted one; an HTTP Request would leave the machine) is checked by the unit test only.
 */
const LOCAL_NODES = new Set(
	[
		'manualTrigger',
		'webhook',
		'splitOut',
		'noOp',
		'stickyNote',
		'set',
		'if',
		'merge',
		'respondToWebhook',
		// The HTTP Request loop examples, their service address pointed at the simulator.
		'httpRequest',
		// The binary reference-image saves make their frame with Edit Fields → Convert to File.
		'convertToFile',
		'wait',
		'splitInBatches',
	].map((n) => `n8n-nodes-base.${n}`),
);
/**
 * The fixtures not run here, by file name, and why. Every other fixture runs, in the e2e layer
 * (n8n 2.41.1) and in the compat layer (the oldest supported n8n) alike; a test holds the suite
 * to this list, so that no fixture drops out unnoticed.
 */
export const NOT_RUN_HERE: Record<string, string> = {
	'example-mcp-media-generation.json':
		'MCP Server Trigger; the agent layer runs the example itself, with the MCP client SDK, on n8n 2.41.1 only',
	'example-big-video-by-url.json': 'HTTP Request to a storage service outside this machine',
	'example-table-rows-to-videos.json':
		'a Data Table the user creates, and its batch workflow by id; test/e2e/table-job.test.ts runs the example itself',
	'example-table-rows-to-videos-batch.json':
		'a Data Table the user creates, called by the job; test/e2e/table-job.test.ts runs the example itself',
	'example-table-rows-to-videos-google-sheets.json':
		'Google Sheets nodes, which need a Google account; its nodes are checked against the Google Sheets node of both versions by test/compat/google-sheets-example.test.ts',
	'example-form-photo-to-video.json':
		"a form a person fills in; test/e2e/callback.test.ts submits the example's form itself",
	'example-save-finished-videos.json':
		'writes files in a folder of the machine; the agent layer runs the example itself, called back by the AI Agent example',
};

/** The HTTP Request polling loops (no node of this package): what the node replaces. */
const LOOP_FIXTURES = [
	'example-http-request-loop-all-together.json',
	'example-http-request-loop-one-at-a-time.json',
];
const isLoop = (f: Fixture) => LOOP_FIXTURES.includes(path.basename(f.label));

/** The AI Agent example's saves: run on their own, with the agent layer's scripted chat model. */
const AGENT_FIXTURE = 'example-agent-media-generation.json';
const isAgentFixture = (f: Fixture) => path.basename(f.label) === AGENT_FIXTURE;

const runsHere = (f: Fixture) =>
	!NOT_RUN_HERE[path.basename(f.label)] &&
	f.workflow.nodes.every(
		(n) => n.type.startsWith('n8n-nodes-media-generation.') || LOCAL_NODES.has(n.type),
	);

/** The credential that refuses private addresses (Allow Private Network File Hosts off). */
const STRICT_CREDENTIAL = { id: 'mgenCredStrict01', name: 'Media Generation (strict)' };
const BINARY_WORKFLOW_ID = 'mgenBinaryImg001';
/** The sub-workflow the binary-image workflow hands its items to (Execute Workflow). */
const BINARY_SUB_WORKFLOW_ID = 'mgenBinarySub001';
/** The files the binary-image workflow reads from disk, in the order the webhook names them. */
const BINARY_FILES = ['frame.png', 'big.png', 'notes.png'];

/** Vidmodel 2.0 Fast animating the item's binary field `data`, continuing on failure. */
function animateNode(
	name: string,
	credential: { id: string; name: string },
	y: number,
): WorkflowNode {
	return {
		id: `n-${name.replace(/\W+/g, '-')}`,
		name,
		type: NODE_TYPE,
		typeVersion: 1,
		position: [780, y],
		credentials: { [CREDENTIAL_TYPE]: credential },
		onError: 'continueRegularOutput',
		parameters: {
			resource: 'video',
			operation: 'generate',
			model: 'vidmodel-2.0-fast/image-to-video',
			prompt: 'The boat sails off',
			frameSource: 'binary',
			startFrameBinaryField: 'data',
			options: { maxPollIntervalSeconds: 1, timeoutMinutes: 2 },
		},
	};
}

/**
 * Reference images from binary data (issue 34): Webhook → one item per file name → Read/Write
 * Files from Disk (n8n takes the type from the extension) → Vidmodel 2.0 Fast from the binary,
 * once with the test's credential and once with a strict one, and the same items handed to a
 * sub-workflow whose Generate animates them (issue 51, finding 7). Each continues on failure, so
 * that one execution shows every outcome.
 */
function binaryImagesWorkflow(webhookPath: string, filesDir: string) {
	const animate = animateNode;
	const nodes: WorkflowNode[] = [
		webhookNode(webhookPath),
		{
			id: 'n-split-files',
			name: 'One Item per File',
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			position: [260, 0],
			parameters: { fieldToSplitOut: 'body.files', options: {} },
		},
		{
			id: 'n-read-file',
			name: 'Read File',
			type: 'n8n-nodes-base.readWriteFile',
			typeVersion: 1,
			position: [520, 0],
			parameters: {
				fileSelector: `={{ ${JSON.stringify(`${filesDir}/`)} + $json.name }}`,
				options: {},
			},
		},
		animate('Animate', CREDENTIAL, 0),
		animate('Animate (strict credential)', STRICT_CREDENTIAL, 200),
		{
			id: 'n-animate-in-sub-workflow',
			name: 'Animate in a Sub-workflow',
			type: 'n8n-nodes-base.executeWorkflow',
			typeVersion: 1.2,
			position: [780, 400],
			parameters: {
				workflowId: { __rl: true, mode: 'id', value: BINARY_SUB_WORKFLOW_ID },
				workflowInputs: {
					mappingMode: 'defineBelow',
					value: {},
					matchingColumns: [],
					schema: [],
					attemptToConvertTypes: false,
					convertFieldsToString: true,
				},
				options: {},
			},
		},
	];
	const connections: Connections = {
		Webhook: { main: [[{ node: 'One Item per File', type: 'main', index: 0 }]] },
		'One Item per File': { main: [[{ node: 'Read File', type: 'main', index: 0 }]] },
		'Read File': {
			main: [
				[
					{ node: 'Animate', type: 'main', index: 0 },
					{ node: 'Animate (strict credential)', type: 'main', index: 0 },
					{ node: 'Animate in a Sub-workflow', type: 'main', index: 0 },
				],
			],
		},
	};
	return {
		id: BINARY_WORKFLOW_ID,
		name: 'Reference images from binary data',
		active: false,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

/** The sub-workflow: its caller's items as they come (passthrough) → Generate from the binary. */
function binarySubWorkflow() {
	return {
		id: BINARY_SUB_WORKFLOW_ID,
		name: 'Reference images from a calling workflow',
		active: false,
		nodes: [
			{
				id: 'n-sub-start',
				name: 'When Executed by Another Workflow',
				type: 'n8n-nodes-base.executeWorkflowTrigger',
				typeVersion: 1.1,
				position: [0, 0],
				parameters: { inputSource: 'passthrough' },
			},
			{ ...animateNode('Animate', CREDENTIAL, 0), position: [260, 0] },
		],
		connections: {
			'When Executed by Another Workflow': {
				main: [[{ node: 'Animate', type: 'main', index: 0 }]],
			},
		},
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

/**
 * The suite: `describe` it from a test file. `n8nVersion` picks the n8n (default the e2e one).
 */
export function savedWorkflowsSuite(options: { n8nVersion?: string; name: string }) {
	let sim: Simulator;
	let n8n: N8nInstance;
	let apiKey = '';
	let fixtures: Fixture[] = [];
	let notRun: string[] = [];
	let agentFixtures: Array<Fixture & { webhookId: string }> = [];
	let fake: FakeOpenAi;
	/** The Data Table the AI Agent example of 0.2.0 records its tasks in, as its guide has the user create it. */
	let agentTable: Table;
	let manual: ReturnType<typeof manualFixtureWorkflows>;
	const webhookPath = `saved-workflows-${process.pid}`;
	const binaryPath = `binary-images-${process.pid}`;
	let filesDir = '';

	const ended = (workflowId: string, count: number) =>
		endedExecutions(n8n, apiKey, workflowId, count, 120_000);

	const post = async (pathname: string, body: unknown) =>
		(await postWebhook(n8n, pathname, body)).status;

	const binaries = (item: ItemJson) => Object.values(item.binary ?? {}) as BinaryJson[];
	const fileSize = (b: BinaryJson) => fs.statSync(n8n.binaryFile(b)).size;

	beforeAll(async () => {
		sim = await startSimulator({
			apiKey: `saved-${options.name}-${process.pid}-secret`,
			defaultDurationMs: 800,
		});
		n8n = await N8nInstance.create(`saved-workflows-${options.name}`, {
			n8nVersion: options.n8nVersion,
		});
		const all = loadFixtures(sim.fileBaseUrl, n8n.baseUrl, sim.baseUrl);
		fixtures = all.filter(runsHere);
		agentFixtures = all.filter(isAgentFixture).map((f) => {
			const wf = prepare(f.workflow as unknown as Parameters<typeof prepare>[0]);
			return { ...f, workflow: wf as unknown as SavedWorkflow, webhookId: wf.webhookId };
		});
		notRun = all.filter((f) => !runsHere(f) && !isAgentFixture(f)).map((f) => f.label);
		fake = await startFakeOpenAi();
		manual = manualFixtureWorkflows(fixtures.filter(isManual), webhookPath);
		// The files Read/Write Files from Disk may read (n8n restricts it to one folder).
		filesDir = path.join(n8n.dir, 'files');
		fs.mkdirSync(filesDir, { recursive: true });
		fs.writeFileSync(
			path.join(filesDir, 'frame.png'),
			Buffer.concat([...referenceChunks('png', 2000)]),
		);
		fs.writeFileSync(
			path.join(filesDir, 'big.png'),
			Buffer.concat([...referenceChunks('png', 10.5 * 1024 * 1024)]),
		);
		fs.writeFileSync(
			path.join(filesDir, 'notes.png'),
			'Shopping list: milk, eggs, a paper boat.\n',
		);
		n8n.env.N8N_RESTRICT_FILE_ACCESS_TO = filesDir;
		const started = fixtures.filter((f) => !isManual(f));
		await n8n.explain(async () => {
			const credential = credentialImport(sim.baseUrl, sim.apiKey);
			await n8n.importCredentials([
				{ ...credential, data: { ...credential.data, allowPrivateFileHosts: true } },
				openAiCredentialImport(fake.url, fake.apiKey),
				{
					...credentialImport(
						sim.baseUrl,
						sim.apiKey,
						STRICT_CREDENTIAL.id,
						STRICT_CREDENTIAL.name,
					),
					data: { apiKey: sim.apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: false },
				},
				{
					...HEADER_CREDENTIAL,
					type: 'httpHeaderAuth',
					data: { name: 'Authorization', value: `Bearer ${sim.apiKey}` },
				},
			]);
			await n8n.importWorkflows([
				...manual.workflows.map((w) => w.workflow),
				binaryImagesWorkflow(binaryPath, filesDir),
				binarySubWorkflow(),
				...[...started, ...agentFixtures].map((f) => ({ ...f.workflow, id: f.id, active: false })),
			]);
			await n8n.start();
			apiKey = await createOwnerApiKey(n8n);
			agentTable = await Table.createNamed(
				Table.publicApi(n8n, apiKey),
				AGENT_TABLE,
				AGENT_TABLE_COLUMNS,
			);
			// Activated through the public API: one request each, where `n8n publish:workflow`
			// costs an n8n start-up each.
			for (const id of [
				...manual.workflows.map((w) => w.workflow.id),
				// Before its caller: n8n 2.x publishes a workflow only once its sub-workflows are.
				BINARY_SUB_WORKFLOW_ID,
				BINARY_WORKFLOW_ID,
				...[...started, ...agentFixtures].map((f) => f.id),
			]) {
				const res = await fetch(`${n8n.baseUrl}/api/v1/workflows/${id}/activate`, {
					method: 'POST',
					headers: { 'X-N8N-API-KEY': apiKey },
				});
				if (!res.ok)
					throw new Error(
						`activating ${id}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`,
					);
			}
		});
	}, 600_000);

	afterAll(async () => {
		await n8n?.dispose();
		await fake?.close();
		await sim?.close();
		removeEmptyRunFolder();
	});

	test('the saved AI Agent examples (AI Agent 3.1, OpenAI Chat Model 1.3, a scripted model): Start Video submits once and answers at once, Get Video Status returns the files', () =>
		n8n.explain(async () => {
			// 0.2.0's adds a Simple Memory and a Callback URL to Start Video.
			expect(agentFixtures.map((f) => f.label)).toEqual([
				`0.1.0/${AGENT_FIXTURE}`,
				`0.2.0/${AGENT_FIXTURE}`,
			]);
			for (const agent of agentFixtures) await savedAgentRuns(agent);
		}));

	const savedAgentRuns = async (agent: Fixture & { webhookId: string }) => {
		sim.reset();
		const args = {
			prompt: 'A paper lantern rising over a lake',
			aspect_ratio: '16:9',
			duration: 8,
			resolution: '720p',
		};
		const firstJson = (text: string) => {
			const parsed = JSON.parse(text) as unknown;
			return (Array.isArray(parsed) ? parsed[0] : parsed) as Record<string, unknown>;
		};
		fake.script([
			{ toolCalls: [{ name: toolName('Start Video'), args }] },
			(request) => ({
				content: `Started ${String(firstJson(toolResults(request)[0].content).task_id)}`,
			}),
		]);
		const first = await chat(n8n, agent.webhookId, 'A lantern video please');
		expect(fake.problems).toEqual([]);
		const submits = () => sim.requests.filter((r) => r.endpoint === 'submit');
		expect(submits().map((r) => ({ ...(r.body as object), callback_url: undefined }))).toEqual([
			{ model: 'vidmodel-1.5-pro', input: args, callback_url: undefined },
		]);
		const [task] = sim.tasks();
		expect(first.output).toBe(`Started ${task.id}`);
		// The examples that record their tasks (0.2.0 on) leave one row for it, where the user sees it.
		if (agent.workflow.nodes.some((n) => n.type === 'n8n-nodes-base.dataTable'))
			expect(
				(await agentTable.rows())
					.filter((r) => r.task_id === task.id)
					.map((r) => ({ prompt: r.prompt, status: r.status })),
			).toEqual([{ prompt: args.prompt, status: 'submitted' }]);

		await new Promise((r) => setTimeout(r, 1500)); // the simulator's 800 ms task
		fake.script([
			{ toolCalls: [{ name: toolName('Get Video Status'), args: { task_id: task.id } }] },
			(request) => {
				const status = firstJson(toolResults(request)[0].content);
				const files = status.files as Array<{ url: string }> | undefined;
				return { content: `${String(status.status)} ${files?.[0]?.url ?? ''}` };
			},
		]);
		const later = await chat(n8n, agent.webhookId, 'Is it ready?');
		expect(fake.problems).toEqual([]);
		expect(later.output).toBe(`finished ${sim.task(task.id)!.files[0].url}`);
		expect(submits()).toHaveLength(1);
	};

	test('every fixture runs but the ones named in NOT_RUN_HERE (nodes that reach beyond this n8n), which the unit test checks', () => {
		const names = [...new Set(notRun.map((label) => path.basename(label)))].sort();
		expect(names).toEqual(Object.keys(NOT_RUN_HERE).sort());
		expect(fixtures.length).toBeGreaterThan(0);
		expect(fixtures.some((f) => NOT_RUN_HERE[path.basename(f.label)])).toBe(false);
	});

	test('the Manual Trigger fixtures run, each node of the package with its saved parameters, and their callbacks start the Trigger fixtures', () =>
		n8n.explain(async () => {
			const started = await Promise.all(manual.workflows.map((w) => post(w.path, {})));
			expect(started).toEqual(manual.workflows.map(() => 200));
			const runs = await Promise.all(
				manual.workflows.map(async (w) => {
					const [run] = await ended(w.workflow.id, 1);
					return { workflow: w.workflow.name, status: run.status, run };
				}),
			);
			expect(runs.map(({ workflow, status }) => ({ workflow, status }))).toEqual(
				manual.workflows.map((w) => ({ workflow: w.workflow.name, status: 'success' })),
			);
			// Node names are unique across the fixtures: their runs read as one.
			const runData = Object.assign(
				{},
				...runs.map((r) => r.run.data!.resultData.runData),
			) as NonNullable<ExecutionSummary['data']>['resultData']['runData'];
			const nodes = [...manual.origin].filter(([, o]) => ours(o.node));
			expect(nodes.length).toBeGreaterThanOrEqual(10);
			for (const [name, { fixture, node }] of nodes) {
				const runs = runData[name];
				expect({ node: name, ran: runs?.length ?? 0 }).toEqual({ node: name, ran: 1 });
				const items = runs[0].data!.main[0]!;
				expect({ node: name, items: items.length > 0, error: runs[0].error?.message }).toEqual({
					node: name,
					items: true,
					error: undefined,
				});
				const p = node.parameters as {
					operation?: string;
					waitForCompletion?: boolean;
					options?: { downloadFiles?: boolean; binaryPropertyName?: string };
				};
				for (const item of items) {
					expect({ fixture, node: name, error: item.json.error }).toEqual({
						fixture,
						node: name,
						error: undefined,
					});
					const waits = p.operation === 'generate' && p.waitForCompletion !== false;
					if (waits || p.operation === 'waitForCompletion')
						expect(item.json.status).toBe('finished');
					const downloads =
						(waits && p.options?.downloadFiles !== false) || p.operation === 'downloadFiles';
					if (downloads) {
						// Every file under the saved binary property name, as large as the service served it.
						const files = binaries(item);
						expect(files.length).toBeGreaterThan(0);
						const prefix = p.options?.binaryPropertyName ?? 'data';
						expect(Object.keys(item.binary!).every((k) => k.startsWith(prefix))).toBe(true);
						for (const f of files) expect(fileSize(f)).toBeGreaterThan(0);
					}
				}
			}
			// The saved image URLs reached the service whole: the simulator fetched each one.
			const imageUrls = sim.requests
				.filter((r) => r.endpoint === 'submit' && r.taskId)
				.flatMap((r) =>
					((r.body as { input?: { image_urls?: string[] } }).input?.image_urls ?? []).map(
						(url) => ({
							taskId: r.taskId,
							url,
						}),
					),
				);
			expect(imageUrls.length).toBeGreaterThanOrEqual(4);
			for (const sent of imageUrls)
				expect(sim.fetches).toContainEqual(
					expect.objectContaining({ ...sent, ok: true, status: 200 }),
				);
			// The binary reference images (the saves from 0.2.0 on): the service fetched them from
			// this n8n's signed links, and got the bytes of a file this execution holds.
			const stored = new Set(
				Object.values(runData)
					.flatMap((runs) => runs.flatMap((r) => (r.data?.main ?? []).flatMap((out) => out ?? [])))
					.flatMap((item) => binaries(item))
					.map((b) => sha256(fs.readFileSync(n8n.binaryFile(b)))),
			);
			const fromN8n = sim.fetches.filter((f) =>
				f.url.startsWith(`${n8n.baseUrl}/rest/binary-data/signed?token=`),
			);
			expect(fromN8n.length).toBeGreaterThanOrEqual(5);
			for (const f of fromN8n)
				expect({ index: f.index, ok: f.ok, stored: stored.has(f.sha256) }).toEqual({
					index: f.index,
					ok: true,
					stored: true,
				});
			// The HTTP Request loops: every prompt's file downloaded by their last node.
			const loops = fixtures.filter(isLoop);
			expect(loops.map((f) => path.basename(f.label)).sort()).toEqual([...LOOP_FIXTURES].sort());
			for (const f of loops) {
				const runs = runData[`${f.label}: Download File`] ?? [];
				const items = runs.flatMap((r) => r.data?.main[0] ?? []);
				expect({
					fixture: f.label,
					files: items.length,
					errors: runs.map((r) => r.error?.message).filter(Boolean),
				}).toEqual({
					fixture: f.label,
					files: 3,
					errors: [],
				});
				for (const item of items)
					expect(binaries(item).map(fileSize)).toEqual([expect.any(Number)]);
			}
			// Each submission with a Callback URL started its Trigger fixture once, with the files.
			for (const f of fixtures.filter((x) =>
				x.workflow.nodes.some((n) => n.type === TRIGGER_TYPE),
			)) {
				const [received] = await ended(f.id, 1);
				expect({ fixture: f.label, status: received.status }).toEqual({
					fixture: f.label,
					status: 'success',
				});
				const trigger = f.workflow.nodes.find((n) => n.type === TRIGGER_TYPE)!;
				const [item] = received.data!.resultData.runData[trigger.name][0].data!.main[0]!;
				expect(item.json.status).toBe('finished');
				expect(binaries(item).length).toBeGreaterThan(0);
			}
		}));

	test('reference images from binary data (issue 34): the service fetches the file from this n8n, the same bytes; a 10.5 MiB file, a text file named .png and, with a strict credential, a local n8n URL are refused before any request; a sub-workflow given a picture of its caller is refused and told what to do (issue 51, finding 7)', () =>
		n8n.explain(async () => {
			expect(await post(binaryPath, { files: BINARY_FILES.map((name) => ({ name })) })).toBe(200);
			const [run] = await ended(BINARY_WORKFLOW_ID, 1);
			expect(run.status).toBe('success');
			const runData = run.data!.resultData.runData;
			const items = (node: string) => runData[node][0].data!.main[0]!;
			const [frame, big, notes] = items('Animate');
			expect(frame.json.error).toBeUndefined();
			expect(frame.json.status).toBe('finished');
			expect(String(big.json.error)).toMatch(
				/^Item 1: binary field "data" \("Start Frame Binary Field"\) \(file "big\.png"\) is 10\.5 MB; allowed: at most 10 MB/,
			);
			expect(String(notes.json.error)).toMatch(
				/^Item 2: binary field "data" \("Start Frame Binary Field"\) \(file "notes\.png"\) is declared image\/png, but its first bytes are not a JPEG, PNG or WebP image/,
			);
			const strict = items('Animate (strict credential)');
			expect(String(strict[0].json.error)).toMatch(
				/^Item 0: the service cannot fetch the reference images from this n8n: its public URL http:\/\/127\.0\.0\.1:\d+\/ is refused \(127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)\).* Set WEBHOOK_URL to it and restart n8n/,
			);
			// A sub-workflow given the caller's picture (issue 51, finding 7): n8n hands it the
			// caller's files under the caller's ids; it is refused before any request, and told
			// what to do instead.
			const [fromCaller] = items('Animate in a Sub-workflow');
			expect(String(fromCaller.json.error)).toMatch(
				/^Item 0: binary field "data" \("Start Frame Binary Field"\) \(file "frame\.png"\) is a file of another workflow \(id mgenBinaryImg001\), so no link is made for it; .*run this Generate in the calling workflow, or pass the picture to the sub-workflow as a URL/,
			);
			// One task in all: the frame with the test's credential.
			const submits = sim.requests.filter(
				(r) =>
					r.endpoint === 'submit' &&
					(r.body as { input?: { prompt?: string } }).input?.prompt === 'The boat sails off',
			);
			expect(submits.map((r) => r.taskId)).toEqual([frame.json.task_id]);
			const [link] = (submits[0].body as { input: { image_urls: string[] } }).input.image_urls;
			expect(link.startsWith(`${n8n.baseUrl}/rest/binary-data/signed?token=`)).toBe(true);
			const fetched = sim.fetches.filter((f) => f.taskId === frame.json.task_id);
			expect(fetched.map((f) => [f.url, f.status, f.contentType, f.sha256])).toEqual([
				[link, 200, 'image/png', sha256(fs.readFileSync(path.join(filesDir, 'frame.png')))],
			]);
			// The link's token is nowhere in what n8n saved of the execution.
			expect(JSON.stringify(run)).not.toContain(new URL(link).searchParams.get('token'));
		}));

	test('the durable-wait example parks on its callbacks and completes with its files', () =>
		n8n.explain(async () => {
			const parked = fixtures.find((f) => f.label.endsWith('/example-durable-wait-batch.json'))!;
			const webhook = parked.workflow.nodes.find((n) => n.type === 'n8n-nodes-base.webhook')!;
			const rows = [0, 1].map((i) => ({
				prompt: `parked ${i} [sim:duration=4000]`,
				ref: `row-${i}`,
			}));
			expect(await post(String(webhook.parameters.path), { rows })).toBe(200);
			const [done] = await ended(parked.id, 1);
			expect(done.status).toBe('success');
			// It waited: the callbacks resumed it (a second run of the parking node).
			const runData = done.data!.resultData.runData;
			const finisher = parked.workflow.nodes.find(
				(n) => n.type === NODE_TYPE && n.parameters.resource === 'task',
			)!;
			const items = runData[finisher.name][0].data!.main[0]!;
			expect(items.map((i) => i.json.reference)).toEqual(['row-0', 'row-1']);
			for (const item of items) {
				expect(item.json.status).toBe('finished');
				expect(fileSize(binaries(item)[0])).toBeGreaterThan(0);
			}
			const tasks = sim.tasks().filter((t) => t.prompt.startsWith('parked '));
			expect(tasks).toHaveLength(2);
			// Parked on n8n's resume URL: the callbacks went there, signed.
			for (const t of tasks) {
				const url = new URL(t.callbackUrl!);
				expect(url.pathname).toBe(`/webhook-waiting/${done.id}`);
				expect(url.searchParams.get('signature')).toBeTruthy();
			}
		}));
}
