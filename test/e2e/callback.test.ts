// The callback path in a started n8n: the Media Generation Trigger's workflow is published
// (activated), a second workflow (called through its own production webhook) submits tasks
// without waiting, with the trigger's production URL and a reference per item; the simulator's
// callbacks then start executions, read back through n8n's public API with a key created
// through n8n's REST API. A forged callback (a task the service does not know) starts nothing.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';

import { mediaChunks, startSimulator, type Simulator } from '../simulator';
import { client } from '../simulator/client';
import {
	N8nInstance,
	NODE_TYPE,
	TRIGGER_TYPE,
	removeEmptyRunFolder,
	type BinaryJson,
	type ExecutionJson,
	type ItemJson,
} from './n8n';
import { CREDENTIAL, credentialImport, mediaNode, noOp, workflow } from './workflows';

jest.setTimeout(300_000);

const TRIGGER_WF = 'mgenTrigger0001';
const SUBMIT_WF = 'mgenSubmitter01';
const TRIGGER_WEBHOOK_ID = randomUUID();
const SUBMIT_PATH = `e2e-submit-${process.pid}`;
const BROWSER_ID = 'mgen-e2e-browser';
/** The owner account of this throw-away instance. */
const OWNER = { email: 'e2e@example.com', secret: `${randomUUID()}-Aa1` };

/** Four tasks that finish, one the service fails; each with its own reference. */
const ROWS = Array.from({ length: 5 }, (_, i) => ({
	ref: `row-${i + 1}`,
	prompt: `poster ${i + 1} [sim:duration=${300 + i * 150}]${i === 3 ? ' [sim:fail=nsfw filter]' : ''}`,
}));

let sim: Simulator;
let n8n: N8nInstance;
let apiKey = '';

const triggerUrl = () => `${n8n.baseUrl}/webhook/${TRIGGER_WEBHOOK_ID}/media-generation`;

function triggerWorkflow() {
	return workflow(
		TRIGGER_WF,
		[
			{
				id: 'n-trigger',
				name: 'Media Generation Trigger',
				type: TRIGGER_TYPE,
				typeVersion: 1,
				position: [0, 0],
				webhookId: TRIGGER_WEBHOOK_ID,
				parameters: { event: 'any', verify: true, download: true },
				credentials: { mediaGenerationApi: CREDENTIAL },
			},
			noOp('Received'),
		],
		{ 'Media Generation Trigger': { main: [[{ node: 'Received', type: 'main', index: 0 }]] } },
	);
}

function submitterWorkflow() {
	return workflow(
		SUBMIT_WF,
		[
			{
				id: 'n-webhook',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: { httpMethod: 'POST', path: SUBMIT_PATH, responseMode: 'lastNode', responseData: 'allEntries', options: {} },
			},
			{
				id: 'n-split',
				name: 'Split',
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [200, 0],
				parameters: { fieldToSplitOut: 'body.rows' },
			},
			mediaNode('Submit', {
				resource: 'image',
				operation: 'generate',
				model: 'image-by-id',
				modelId: sim.imageModelId,
				prompt: '={{ $json.prompt }}',
				imageByIdOptions: { size: '1:1', n: 1 },
				waitForCompletion: false,
				options: { callbackUrl: triggerUrl(), callbackReference: '={{ $json.ref }}' },
			}),
		],
		{
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Submit', type: 'main', index: 0 }]] },
		},
	);
}

/** n8n's internal REST API as its editor uses it (cookie + browser id). */
async function rest(path: string, init: { method?: string; body?: unknown; cookie?: string } = {}) {
	const res = await fetch(`${n8n.baseUrl}/rest${path}`, {
		method: init.method ?? 'GET',
		headers: {
			'content-type': 'application/json',
			'browser-id': BROWSER_ID,
			...(init.cookie ? { cookie: init.cookie } : {}),
		},
		body: init.body === undefined ? undefined : JSON.stringify(init.body),
	});
	const text = await res.text();
	if (!res.ok) throw new Error(`${init.method ?? 'GET'} /rest${path}: HTTP ${res.status} ${text.slice(0, 500)}`);
	return { res, json: JSON.parse(text) as { data: unknown } };
}

/** Sets up the owner account and creates a public-API key with every scope the owner may have. */
async function createApiKey(): Promise<{ key: string; cookie: string }> {
	const { res } = await rest('/owner/setup', {
		method: 'POST',
		body: { email: OWNER.email, firstName: 'End', lastName: 'ToEnd', password: OWNER.secret },
	});
	const cookie = (res.headers.getSetCookie?.() ?? [])
		.map((c) => c.split(';')[0])
		.join('; ');
	expect(cookie).toContain('n8n-auth=');
	const scopes = (await rest('/api-keys/scopes', { cookie })).json.data as string[];
	const created = (await rest('/api-keys', { method: 'POST', cookie, body: { label: 'e2e', scopes, expiresAt: null } })).json
		.data as { rawApiKey?: string; apiKey?: string };
	const key = created.rawApiKey ?? created.apiKey;
	if (!key) throw new Error(`no key in the api-keys answer: ${Object.keys(created).join(', ')}`);
	return { key, cookie };
}

interface ExecutionSummary {
	id: string;
	finished: boolean;
	status: string;
	workflowId: string;
	data?: ExecutionJson['data'];
}

async function executionsOf(workflowId: string): Promise<ExecutionSummary[]> {
	const res = await fetch(`${n8n.baseUrl}/api/v1/executions?workflowId=${workflowId}&includeData=true&limit=100`, {
		headers: { 'X-N8N-API-KEY': apiKey },
	});
	if (!res.ok) throw new Error(`GET /api/v1/executions: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
	return ((await res.json()) as { data: ExecutionSummary[] }).data;
}

/** Polls the public API until `count` executions of the workflow have ended. */
async function endedExecutions(workflowId: string, count: number, timeoutMs = 60_000): Promise<ExecutionSummary[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const list = await executionsOf(workflowId);
		const ended = list.filter((e) => !['running', 'new', 'waiting'].includes(e.status));
		if (ended.length >= count) return ended;
		if (Date.now() > deadline) {
			throw new Error(`${ended.length} of ${count} executions of ${workflowId} ended after ${timeoutMs} ms: ${JSON.stringify(list.map((e) => [e.id, e.status]))}`);
		}
		await new Promise((r) => setTimeout(r, 250));
	}
}

function sha256(chunks: Iterable<Buffer>): string {
	const h = createHash('sha256');
	for (const c of chunks) h.update(c);
	return h.digest('hex');
}

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-callback-${process.pid}-secret` });
	n8n = await N8nInstance.create('callback');
	await n8n.explain(async () => {
		await n8n.importCredentials([credentialImport(sim.baseUrl, sim.apiKey)]);
		await n8n.importWorkflows([triggerWorkflow(), submitterWorkflow()]);
		await n8n.cli(['publish:workflow', `--id=${TRIGGER_WF}`], { label: 'publish-trigger' });
		await n8n.cli(['publish:workflow', `--id=${SUBMIT_WF}`], { label: 'publish-submitter' });
		await n8n.start();
		apiKey = (await createApiKey()).key;
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

test('the running n8n lists both node types of the package', () =>
	n8n.explain(async () => {
		const login = await rest('/login', {
			method: 'POST',
			body: { emailOrLdapLoginId: OWNER.email, password: OWNER.secret },
		});
		const auth = (login.res.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
		const res = await fetch(`${n8n.baseUrl}/types/nodes.json`, { headers: { cookie: auth, 'browser-id': BROWSER_ID } });
		expect(res.status).toBe(200);
		const names = ((await res.json()) as Array<{ name: string }>).map((t) => t.name);
		expect(names).toEqual(expect.arrayContaining([NODE_TYPE, TRIGGER_TYPE]));
	}));

test('callbacks start one execution per task with the confirmed task, the reference and the files', () =>
	n8n.explain(async () => {
		const submitted = await fetch(`${n8n.baseUrl}/webhook/${SUBMIT_PATH}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ rows: ROWS }),
		});
		const submitText = await submitted.text();
		expect(submitted.status).toBe(200);
		expect(submitText).not.toContain(sim.apiKey);
		const items = JSON.parse(submitText) as Array<Record<string, unknown>>;
		expect(items).toHaveLength(ROWS.length);
		// Not waiting: each item has its task_id at once, the callback URL went with the task.
		const taskIds = items.map((i) => String(i.task_id));
		for (const [index, id] of taskIds.entries()) {
			const task = sim.task(id);
			expect(task?.prompt).toBe(ROWS[index].prompt);
			expect(task?.callbackUrl).toBe(`${triggerUrl()}?ref=${ROWS[index].ref}`);
		}

		const executions = await endedExecutions(TRIGGER_WF, ROWS.length);
		expect(executions).toHaveLength(ROWS.length);
		// What n8n stored of these executions holds no key.
		expect(JSON.stringify(executions)).not.toContain(sim.apiKey);
		await sim.idle();
		// Every genuine callback was answered 2xx, once (no retries needed).
		const genuine = sim.callbacks.filter((c) => !c.forged);
		expect(genuine.map((c) => c.taskId).sort()).toEqual([...taskIds].sort());
		for (const c of genuine) expect(c.status >= 200 && c.status < 300 ? 'answered 2xx' : `answered ${c.status}`).toBe('answered 2xx');

		const seen = new Map<string, ItemJson>();
		for (const execution of executions) {
			expect(execution.status).toBe('success');
			const runs = execution.data!.resultData.runData['Media Generation Trigger'];
			const [item] = runs[0].data!.main[0]!;
			seen.set(String(item.json.task_id), item);
			// And the rest of the workflow ran on it.
			expect(execution.data!.resultData.runData.Received).toHaveLength(1);
		}
		expect([...seen.keys()].sort()).toEqual([...taskIds].sort());

		for (const [index, id] of taskIds.entries()) {
			const item = seen.get(id)!;
			const task = sim.task(id)!;
			expect(item.json.reference).toBe(ROWS[index].ref);
			if (task.outcome === 'fail') {
				expect(item.json).toMatchObject({ status: 'failed', error_message: 'nsfw filter' });
				expect(item.binary ?? {}).toEqual({});
				continue;
			}
			expect(item.json.status).toBe('finished');
			const binaries = Object.values(item.binary ?? {}) as BinaryJson[];
			expect(binaries).toHaveLength(task.files.length);
			for (const [i, file] of task.files.entries()) {
				const onDisk = n8n.binaryFile(binaries[i]);
				expect(fs.statSync(onDisk).size).toBe(file.size);
				expect(sha256([fs.readFileSync(onDisk)])).toBe(sha256(mediaChunks(file.kind, file.size)));
			}
		}
		// The key never went to the file host.
		for (const r of sim.requests.filter((q) => q.origin === 'files')) {
			expect(JSON.stringify(r.headers)).not.toContain(sim.apiKey);
		}
	}));

test('a forged callback for a task the service does not know starts nothing', () =>
	n8n.explain(async () => {
		const ids = async () => (await executionsOf(TRIGGER_WF)).map((e) => e.id).sort();
		const before = await ids();
		const forged = await sim.sendCallback('task_forged_0000', {
			url: `${triggerUrl()}?ref=forged`,
			body: {
				code: 200,
				data: {
					task_id: 'task_forged_0000',
					status: 'finished',
					progress: 100,
					files: [{ file_url: `${sim.fileBaseUrl}/files/evil.png`, file_type: 'image' }],
				},
			},
		});
		expect(forged.status).toBeGreaterThan(0);
		// The trigger answers after asking the service; give n8n a moment to (not) start anything.
		await new Promise((r) => setTimeout(r, 1500));
		expect(await ids()).toEqual(before);
		// Nothing was fetched from the forged file URL.
		expect(sim.requests.some((r) => r.path.includes('evil'))).toBe(false);
	}));

test('a callback whose body lies about a real task starts one execution with what the service says', () =>
	n8n.explain(async () => {
		const before = new Set((await executionsOf(TRIGGER_WF)).map((e) => e.id));
		// A real task at the service, finished, that nobody gave a callback URL.
		const api = client(sim);
		const taskId = await api.create(sim.imageModelId, { prompt: 'a real one [sim:duration=50]', size: '1:1', n: 1 });
		await api.pollToEnd(taskId);
		const real = sim.task(taskId)!;
		await sim.sendCallback(taskId, {
			url: `${triggerUrl()}?ref=lie`,
			body: {
				code: 200,
				data: {
					task_id: taskId,
					status: 'finished',
					files: [{ file_url: `${sim.fileBaseUrl}/files/evil.png`, file_type: 'image' }],
				},
			},
		});
		const ended = await endedExecutions(TRIGGER_WF, before.size + 1);
		const fresh = ended.filter((e) => !before.has(e.id));
		expect(fresh).toHaveLength(1);
		const [item] = fresh[0].data!.resultData.runData['Media Generation Trigger'][0].data!.main[0]!;
		expect(item.json).toMatchObject({ task_id: taskId, status: 'finished', reference: 'lie' });
		const [binary] = Object.values(item.binary ?? {}) as BinaryJson[];
		const onDisk = n8n.binaryFile(binary);
		expect(sha256([fs.readFileSync(onDisk)])).toBe(sha256(mediaChunks(real.files[0].kind, real.files[0].size)));
		expect(sim.requests.some((r) => r.path.includes('evil'))).toBe(false);
	}));

test("the key is nowhere in n8n's server log", () =>
	n8n.explain(async () => {
		const log = n8n.serverLogText();
		expect(log).toContain('Editor is now accessible');
		expect(log).not.toContain(sim.apiKey);
	}));
