// The callback path in a started n8n: the Media Generation Trigger's workflow is published
// (activated), a second workflow (called through its own production webhook) submits tasks
// without waiting, with the trigger's production URL and a reference per item; the simulator's
// callbacks then start executions, read back through n8n's public API with a key created
// through n8n's REST API. A forged callback (a task the service does not know) starts nothing.
// The same instance plays n8n's own recovery paths on a third workflow (Webhook → Split → Generate
// waiting for the files): Retry from the Executions list with the original and with the current
// workflow, a Timeout then a Retry after the task finished with a restart of n8n in between, and
// a new execution with the same input; submissions are counted at the simulator.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { signCallbackUrl } from '../../nodes/shared/callbackUrl';
import { mediaChunks, referenceChunks, startSimulator, type Simulator } from '../simulator';
import { client } from '../simulator/client';
import {
	N8nInstance,
	NODE_TYPE,
	TRIGGER_TYPE,
	removeEmptyRunFolder,
	type BinaryJson,
	type ItemJson,
} from './n8n';
import {
	activateWorkflows,
	createApiKey as createOwnerApiKey,
	endedExecutions as ended,
	expectLostRunError,
	executionsOf as listExecutions,
	login,
	newOwner,
	rest,
	retryExecution,
} from './executions-api';
import {
	chain,
	credentialImport,
	exampleWorkflow,
	mediaNode,
	splitRows,
	triggerWorkflow,
	webhookNode,
	workflow,
} from './workflows';

jest.setTimeout(300_000);

const TRIGGER_WF = 'mgenTrigger0001';
const SUBMIT_WF = 'mgenSubmitter01';
const RETRY_WF = 'mgenRetryFlow01';
const RETRY_PATH = `e2e-retry-${process.pid}`;
const PARK_RETRY_WF = 'mgenParkRetry01';
const PARK_RETRY_PATH = `e2e-park-retry-${process.pid}`;
const CRASH_SAFE_WF = 'mgenCrashSafe01';
const CRASH_SAFE_PATH = `e2e-crash-safe-${process.pid}`;
const TRIGGER_WEBHOOK_ID = randomUUID();
/** A second published Trigger on the same credential (another workflow of the same user). */
const OTHER_TRIGGER_WF = 'mgenTrigger0002';
const OTHER_TRIGGER_WEBHOOK_ID = randomUUID();
/** examples/form-photo-to-video.json, published; its credential lets the service fetch from loopback. */
const FORM_WF = 'mgenFormPhoto01';
const FORM_CREDENTIAL = {
	id: 'mgenCredForm001',
	name: 'Media Generation (simulator, n8n on loopback)',
};
const SUBMIT_PATH = `e2e-submit-${process.pid}`;
const BROWSER_ID = 'mgen-e2e-browser';
/** The owner account of this throw-away instance. */
const OWNER = newOwner();

/** Four tasks that finish, one the service fails; each with its own reference. */
const ROWS = Array.from({ length: 5 }, (_, i) => ({
	ref: `row-${i + 1}`,
	prompt: `poster ${i + 1} [sim:duration=${300 + i * 150}]${i === 3 ? ' [sim:fail=nsfw filter]' : ''}`,
}));

let sim: Simulator;
let n8n: N8nInstance;
let apiKey = '';
/** The form job's storage folder (its Keep a Copy node), as the guide tells the user to set it. */
let formFolder = '';

const triggerUrl = () => `${n8n.baseUrl}/webhook/${TRIGGER_WEBHOOK_ID}/media-generation`;

/** A Generate of the simulator's image model, one image per row's prompt, with `run`'s settings. */
function imageGenerate(name: string, run: Record<string, unknown>) {
	return mediaNode(name, {
		resource: 'image',
		operation: 'generate',
		model: 'image-by-id',
		modelId: sim.imageModelId,
		prompt: '={{ $json.prompt }}',
		imageByIdOptions: { size: '1:1', n: 1 },
		...run,
	});
}

function submitterWorkflow() {
	return workflow(
		SUBMIT_WF,
		[
			webhookNode(SUBMIT_PATH, 'lastNode'),
			splitRows(),
			imageGenerate('Submit', {
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

/** Generate waiting for the files, each row's Timeout from the row (default 30 minutes). */
function retryWorkflow() {
	return workflow(
		RETRY_WF,
		[
			webhookNode(RETRY_PATH),
			splitRows(),
			imageGenerate('Generate', {
				waitForCompletion: true,
				options: { timeoutMinutes: '={{ $json.timeout || 30 }}', maxPollIntervalSeconds: 1 },
			}),
		],
		{
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Generate', type: 'main', index: 0 }]] },
		},
	);
}

/** The same rows, Generate parked (Wait Mode: Park Until Callbacks), a Wait for Completion after it. */
function parkRetryWorkflow() {
	return workflow(
		PARK_RETRY_WF,
		[
			webhookNode(PARK_RETRY_PATH),
			splitRows(),
			imageGenerate('Generate', {
				waitForCompletion: true,
				options: { waitMode: 'park', timeoutMinutes: 5 },
			}),
			mediaNode('Finish', {
				resource: 'task',
				operation: 'waitForCompletion',
				taskId: '={{ $json.task_id }}',
				options: { maxPollIntervalSeconds: 1 },
			}),
		],
		chain('Webhook', 'Split', 'Generate', 'Finish'),
	);
}

/**
 * The crash-safe layout (docs/reliability.md): Submit (Wait for Completion off), then Task → Wait
 * for Completion, with the workflow setting "Save execution progress" on.
 */
function crashSafeWorkflow() {
	const wf = workflow(
		CRASH_SAFE_WF,
		[
			webhookNode(CRASH_SAFE_PATH),
			splitRows(),
			imageGenerate('Submit', { waitForCompletion: false }),
			mediaNode('Finish', {
				resource: 'task',
				operation: 'waitForCompletion',
				taskId: '={{ $json.task_id }}',
				options: { maxPollIntervalSeconds: 1 },
			}),
		],
		chain('Webhook', 'Split', 'Submit', 'Finish'),
	);
	return { ...wf, settings: { ...wf.settings, saveExecutionProgress: true } };
}

const executionsOf = (workflowId: string) => listExecutions(n8n, apiKey, workflowId);
const endedExecutions = (workflowId: string, count: number, timeoutMs?: number) =>
	ended(n8n, apiKey, workflowId, count, timeoutMs);
/** A callback URL as the Media Generation node writes it (signed with the credential's key). */
const signed = (url: string) => signCallbackUrl(url, sim.apiKey);

function sha256(chunks: Iterable<Buffer>): string {
	const h = createHash('sha256');
	for (const c of chunks) h.update(c);
	return h.digest('hex');
}

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-callback-${process.pid}-secret` });
	n8n = await N8nInstance.create('callback');
	formFolder = path.join(n8n.dir, 'files');
	fs.mkdirSync(formFolder);
	// n8n 2.x's file nodes write only under N8N_RESTRICT_FILE_ACCESS_TO.
	n8n.env.N8N_RESTRICT_FILE_ACCESS_TO = formFolder;
	await n8n.explain(async () => {
		const loopback = credentialImport(
			sim.baseUrl,
			sim.apiKey,
			FORM_CREDENTIAL.id,
			FORM_CREDENTIAL.name,
		);
		await n8n.importCredentials([
			credentialImport(sim.baseUrl, sim.apiKey),
			// The service fetches the photo from n8n's own link, here on 127.0.0.1.
			{ ...loopback, data: { ...loopback.data, allowPrivateFileHosts: true } },
		]);
		const form = exampleWorkflow('form-photo-to-video.json', FORM_WF, formFolder);
		for (const node of form.nodes)
			if (node.credentials?.mediaGenerationApi)
				node.credentials.mediaGenerationApi = FORM_CREDENTIAL;
		await n8n.importWorkflows([
			form,
			triggerWorkflow(
				TRIGGER_WF,
				TRIGGER_WEBHOOK_ID,
				{ event: 'any', verify: true, download: true },
				1,
			),
			triggerWorkflow(
				OTHER_TRIGGER_WF,
				OTHER_TRIGGER_WEBHOOK_ID,
				{ event: 'any', verify: true, download: true },
				1,
			),
			submitterWorkflow(),
			retryWorkflow(),
			parkRetryWorkflow(),
			crashSafeWorkflow(),
		]);
		await n8n.start();
		const owner = await createOwnerApiKey(n8n, OWNER);
		apiKey = owner.key;
		// Published through the public API (the restarts below activate them again from the
		// database, as n8n's start-up does for a `publish:workflow`).
		await activateWorkflows(n8n, apiKey, [
			TRIGGER_WF,
			OTHER_TRIGGER_WF,
			SUBMIT_WF,
			RETRY_WF,
			PARK_RETRY_WF,
			CRASH_SAFE_WF,
		]);
		// Published as the editor does it.
		const { versionId } = (await rest(n8n, `/workflows/${FORM_WF}`, { cookie: owner.cookie })).json
			.data as { versionId: string };
		await rest(n8n, `/workflows/${FORM_WF}/activate`, {
			method: 'POST',
			cookie: owner.cookie,
			body: { versionId },
		});
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

test('the running n8n lists both node types of the package', () =>
	n8n.explain(async () => {
		const auth = await login(n8n, OWNER);
		const res = await fetch(`${n8n.baseUrl}/types/nodes.json`, {
			headers: { cookie: auth, 'browser-id': BROWSER_ID },
		});
		expect(res.status).toBe(200);
		const names = ((await res.json()) as Array<{ name: string }>).map((t) => t.name);
		expect(names).toEqual(expect.arrayContaining([NODE_TYPE, TRIGGER_TYPE]));
	}));

test('examples/form-photo-to-video.json (docs/form-photos-to-videos.md): a photo sent through the form is animated from its upload, the video comes back on the form page and the storage branch beside it keeps the same file', () =>
	n8n.explain(async () => {
		const photo = Buffer.concat([...referenceChunks('png', 40_000)]);
		const prompt = 'The lighthouse beam sweeps over the sea';
		const body = new FormData();
		body.append('field-0', new Blob([photo], { type: 'image/png' }), 'lighthouse.png');
		body.append('field-1', prompt);
		body.append('field-2', 'customer@example.com');
		// Right after start-up n8n may not have registered the published form yet (404).
		let res: Response;
		const deadline = Date.now() + 30_000;
		do {
			res = await fetch(`${n8n.baseUrl}/form/animate-my-photo`, { method: 'POST', body });
			if (res.status !== 404) break;
			await res.text();
			await new Promise((r) => setTimeout(r, 500));
		} while (Date.now() < deadline);
		expect(res.status).toBe(200);
		// The form page moves on to a waiting page while the video is made.
		const { formWaitingUrl } = (await res.json()) as { formWaitingUrl: string };
		expect(formWaitingUrl).toMatch(/\/form-waiting\//);
		const waiting = new URL(formWaitingUrl);
		const statusUrl = `${n8n.baseUrl}${waiting.pathname}/n8n-execution-status${waiting.search}`;
		let status = '';
		for (const until = Date.now() + 60_000; Date.now() < until && status !== 'form-waiting'; ) {
			status = await (await fetch(statusUrl)).text();
			if (status !== 'form-waiting') await new Promise((r) => setTimeout(r, 500));
		}
		expect(status).toBe('form-waiting');

		// The service got the customer's prompt and the photo itself: fetched from this n8n, same bytes.
		const [task] = sim.tasks().filter((t) => t.prompt === prompt);
		expect(task.model).toBe('vidmodel-2.0-fast/image-to-video');
		const fetched = sim.fetches.filter((f) => f.taskId === task.id);
		expect(fetched.map((f) => [f.ok, f.sha256])).toEqual([[true, sha256([photo])]]);
		expect(fetched[0].url.startsWith(`${n8n.baseUrl}/rest/binary-data/signed?`)).toBe(true);

		// The page that follows is the form's ending, with the video as the service served it.
		const page = await (await fetch(formWaitingUrl)).text();
		// n8n's completion page carries the file for the browser to download (form-trigger-completion).
		const embedded = /const binaries = "([^"]+)"/.exec(page)?.[1];
		expect(embedded).toBeDefined();
		const [file] = JSON.parse(decodeURIComponent(embedded!)) as Array<{
			data: { data: number[] };
			fileName: string;
			type: string;
		}>;
		expect(file.type).toBe('video/mp4');
		const [served] = task.files;
		expect(sha256([Buffer.from(file.data.data)])).toBe(
			sha256(mediaChunks(served.kind, served.size)),
		);
		// The storage branch beside the answer (Keep a Copy) stored the same file, named by its task.
		const stored = path.join(formFolder, `${task.id}.mp4`);
		expect(fs.existsSync(stored)).toBe(true);
		expect(sha256([fs.readFileSync(stored)])).toBe(sha256(mediaChunks(served.kind, served.size)));
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
			// The node signed the reference with the credential; the trigger checks it.
			// Each with a nonce of its own under the signature (issue 35).
			const nonce = new URL(task!.callbackUrl!).searchParams.get('nonce');
			expect(task?.callbackUrl).toBe(
				signed(`${triggerUrl()}?ref=${ROWS[index].ref}&nonce=${nonce}`),
			);
			expect(items[index].callback_url).toBe(
				`${triggerUrl()}?ref=${ROWS[index].ref}&nonce=${nonce}&sig=***`,
			);
		}
		expect(
			new Set(taskIds.map((id) => new URL(sim.task(id)!.callbackUrl!).searchParams.get('nonce')))
				.size,
		).toBe(ROWS.length);

		const executions = await endedExecutions(TRIGGER_WF, ROWS.length);
		expect(executions).toHaveLength(ROWS.length);
		// What n8n stored of these executions holds no key.
		expect(JSON.stringify(executions)).not.toContain(sim.apiKey);
		await sim.idle();
		// Every genuine callback was answered 2xx, once (no retries needed).
		const genuine = sim.callbacks.filter((c) => !c.forged);
		expect(genuine.map((c) => c.taskId).sort()).toEqual([...taskIds].sort());
		for (const c of genuine)
			expect(c.status >= 200 && c.status < 300 ? 'answered 2xx' : `answered ${c.status}`).toBe(
				'answered 2xx',
			);

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

/** A real task at the service, finished, that nobody gave a callback URL. */
async function finishedTask(prompt = 'a real one [sim:duration=50]') {
	const api = client(sim);
	const taskId = await api.create(sim.imageModelId, { prompt, size: '1:1', n: 1 });
	await api.pollToEnd(taskId);
	return taskId;
}

test('forged callbacks start nothing: each answer checked, executions counted', () =>
	n8n.explain(async () => {
		await sim.idle();
		const before = new Set((await executionsOf(TRIGGER_WF)).map((e) => e.id));
		const readsBefore = sim.count('status');
		const evil = {
			code: 200,
			data: {
				task_id: 'task_forged_0000',
				status: 'finished',
				progress: 100,
				files: [{ file_url: `${sim.fileBaseUrl}/files/evil.png`, file_type: 'image' }],
			},
		};
		// Unsigned (the attacker has only the trigger's URL): refused before any status read.
		const unsigned = await sim.sendCallback('task_forged_0000', {
			url: `${triggerUrl()}?ref=forged`,
			body: evil,
		});
		expect(unsigned.status).toBe(401);
		expect(sim.count('status')).toBe(readsBefore);
		// Signed (a leaked genuine URL), for a task the service does not know: 404, then from cache.
		const leaked = signed(`${triggerUrl()}?ref=forged`);
		const unknown = await sim.sendCallback('task_forged_0000', { url: leaked, body: evil });
		expect(unknown.status).toBe(404);
		const again = await sim.sendCallback('task_forged_0000', { url: leaked, body: evil });
		expect(again.status).toBe(404);
		expect(sim.count('status')).toBe(readsBefore + 1);

		// Barrier: a genuine callback sent after them; once its execution ended, any execution the
		// forged ones had started would be listed too (n8n starts runs in the order it answers).
		const real = await finishedTask();
		expect(
			(await sim.sendCallback(real, { url: signed(`${triggerUrl()}?ref=barrier`) })).status,
		).toBe(200);
		const fresh = (await endedExecutions(TRIGGER_WF, before.size + 1)).filter(
			(e) => !before.has(e.id),
		);
		expect(fresh).toHaveLength(1);
		expect(
			fresh[0].data!.resultData.runData['Media Generation Trigger'][0].data!.main[0]![0].json,
		).toMatchObject({ task_id: real, reference: 'barrier' });
		// Nothing was fetched from the forged file URL.
		expect(sim.requests.some((r) => r.path.includes('evil'))).toBe(false);
	}));

test("a genuine callback's query sent to another published Trigger on the same credential: 401 there, no status read, no execution; its own Trigger runs it (issue 51, finding 1)", () =>
	n8n.explain(async () => {
		const before = new Set((await executionsOf(TRIGGER_WF)).map((e) => e.id));
		const taskId = await finishedTask();
		const url = new URL(signed(`${triggerUrl()}?ref=row-1`));
		const elsewhere = `${n8n.baseUrl}/webhook/${OTHER_TRIGGER_WEBHOOK_ID}/media-generation${url.search}`;
		const reads = sim.count('status');
		expect((await sim.sendCallback(taskId, { url: elsewhere })).status).toBe(401);
		expect(sim.count('status')).toBe(reads);
		// Its own Trigger accepts it: the one run of the task is there.
		expect((await sim.sendCallback(taskId, { url: url.toString() })).status).toBe(200);
		const fresh = (await endedExecutions(TRIGGER_WF, before.size + 1)).filter(
			(e) => !before.has(e.id),
		);
		expect(fresh).toHaveLength(1);
		expect(
			fresh[0].data!.resultData.runData['Media Generation Trigger'][0].data!.main[0]![0].json,
		).toMatchObject({ task_id: taskId, reference: 'row-1' });
		// The other Trigger's workflow never ran (nothing there ran before either: it has no
		// other traffic in this suite).
		expect(await executionsOf(OTHER_TRIGGER_WF)).toHaveLength(0);
	}));

test('a callback whose body lies about a real task starts one execution with what the service says', () =>
	n8n.explain(async () => {
		const before = new Set((await executionsOf(TRIGGER_WF)).map((e) => e.id));
		const taskId = await finishedTask();
		const real = sim.task(taskId)!;
		await sim.sendCallback(taskId, {
			url: signed(`${triggerUrl()}?ref=lie`),
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
		expect(sha256([fs.readFileSync(onDisk)])).toBe(
			sha256(mediaChunks(real.files[0].kind, real.files[0].size)),
		);
		expect(sim.requests.some((r) => r.path.includes('evil'))).toBe(false);
	}));

test("two tasks' genuine callbacks replayed to each other's URL three times each: one run per task, each with its own reference, the replays answered without a status read (issue 44, item 6)", () =>
	n8n.explain(async () => {
		const before = new Set((await executionsOf(TRIGGER_WF)).map((e) => e.id));
		const [taskA, taskB] = [await finishedTask(), await finishedTask()];
		const urlA = signed(`${triggerUrl()}?ref=row-A`);
		const urlB = signed(`${triggerUrl()}?ref=row-B`);
		expect((await sim.sendCallback(taskA, { url: urlA })).status).toBe(200);
		expect((await sim.sendCallback(taskB, { url: urlB })).status).toBe(200);
		await endedExecutions(TRIGGER_WF, before.size + 2);
		const reads = sim.count('status');
		const replays: number[] = [];
		for (let i = 0; i < 3; i++) {
			replays.push((await sim.sendCallback(taskA, { url: urlB })).status);
			replays.push((await sim.sendCallback(taskB, { url: urlA })).status);
		}
		expect(replays).toEqual([200, 200, 200, 200, 200, 200]);
		expect(sim.count('status')).toBe(reads);
		// Barrier: a genuine callback after the replays; once its run ended, any run a replay had
		// started would be listed too.
		const barrier = await finishedTask();
		expect(
			(await sim.sendCallback(barrier, { url: signed(`${triggerUrl()}?ref=barrier`) })).status,
		).toBe(200);
		const fresh = (await endedExecutions(TRIGGER_WF, before.size + 3)).filter(
			(e) => !before.has(e.id),
		);
		const runs = fresh.map((e) => {
			const json = e.data!.resultData.runData['Media Generation Trigger'][0].data!.main[0]![0].json;
			return [json.task_id, json.reference];
		});
		expect(runs.sort()).toEqual(
			[
				[taskA, 'row-A'],
				[taskB, 'row-B'],
				[barrier, 'barrier'],
			].sort(),
		);
	}));

// ---- n8n's recovery paths: Retry from the Executions list, a restart, a new execution ----

type Row = { prompt: string; timeout?: number };

/** Posts rows to the retry workflow; returns its ended execution (production, mode webhook). */
async function runRows(rows: Row[], workflowId = RETRY_WF, webhookPath = RETRY_PATH) {
	const known = new Set((await executionsOf(workflowId)).map((e) => e.id));
	const res = await fetch(`${n8n.baseUrl}/webhook/${webhookPath}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ rows }),
	});
	expect(res.status).toBe(200);
	const all = await endedExecutions(workflowId, known.size + 1, 120_000);
	return all.find((e) => !known.has(e.id))!;
}

/** The editor's Retry (Executions list): original workflow, or "with current workflow". */
async function retry(executionId: string, loadWorkflow: boolean, workflowId = RETRY_WF) {
	return await retryExecution(n8n, OWNER, apiKey, executionId, workflowId, loadWorkflow);
}

/** Submissions the service accepted for rows of this prefix (each one a task, each one billed). */
const submitsOf = (prefix: string) => sim.tasks().filter((t) => t.prompt.startsWith(prefix)).length;
const generated = (execution: {
	data?: {
		resultData: { runData: Record<string, Array<{ data?: { main: Array<ItemJson[] | null> } }>> };
	};
}) => execution.data!.resultData.runData.Generate.at(-1)!.data!.main[0]!.map((i) => i.json);

test('Retry from the Executions list, original and current workflow: accepted tasks resumed, the failed one submitted anew', () =>
	n8n.explain(async () => {
		for (const loadWorkflow of [false, true]) {
			const p = `retry-${loadWorkflow ? 'current' : 'original'}`;
			const rows = [
				{ prompt: `${p} a` },
				{ prompt: `${p} b [sim:failonce=busy]` },
				{ prompt: `${p} c` },
			];
			const failed = await runRows(rows);
			expect(failed.status).toBe('error');
			expect(submitsOf(p)).toBe(3);
			const first = rows.map((r) => sim.tasks().find((t) => t.prompt === r.prompt)!.id);
			const retried = await retry(failed.id, loadWorkflow);
			expect(retried.status).toBe('success');
			// The failed row asked for a new task; the two finished ones were not paid again (today: 6).
			expect(submitsOf(p)).toBe(4);
			const out = generated(retried);
			expect(out.map((j) => j.status)).toEqual(['finished', 'finished', 'finished']);
			expect([out[0].task_id, out[2].task_id]).toEqual([first[0], first[2]]);
			expect(out[1].task_id).not.toBe(first[1]);
		}
	}));

// One restart of n8n for two recovery paths (each restart costs an n8n start-up): the callbacks
// remembered across it, and a Timeout's Retry after it.
test('n8n restarted once: 10 callbacks that arrived together are remembered (replaying them starts nothing); a Timeout whose task finished meanwhile is fetched by the Retry without paying again', () =>
	n8n.explain(async () => {
		// Before the restart: 10 callbacks at once, each twice, one execution per task; and a
		// Generate that timed out on a task still running.
		const before = new Set((await executionsOf(TRIGGER_WF)).map((e) => e.id));
		const ids = await Promise.all(
			Array.from({ length: 10 }, (_, i) => finishedTask(`concurrent ${i} [sim:duration=30]`)),
		);
		const urls = ids.map((_, i) => signed(`${triggerUrl()}?ref=c-${i}`));
		// All ten at once, each twice: one execution per task.
		const first = await Promise.all(
			[...ids, ...ids].map((id, i) => sim.sendCallback(id, { url: urls[i % 10] })),
		);
		// Delivered: 200, or 202 "confirming" for a call answered before its confirming read (a
		// burst, issue 51); the executions counted below are what the user gets.
		expect(first.filter((e) => e.status !== 200 && e.status !== 202)).toEqual([]);
		const fresh = (await endedExecutions(TRIGGER_WF, before.size + 10)).filter(
			(e) => !before.has(e.id),
		);
		expect(fresh).toHaveLength(10);

		const p = 'retry-timeout';
		const failed = await runRows([{ prompt: `${p} [sim:duration=8000]`, timeout: 0.05 }]);
		expect(failed.status).toBe('error');
		const [task] = sim.tasks().filter((t) => t.prompt.startsWith(p));

		await n8n.stop();
		await n8n.start();

		// After it: the replays start nothing.
		const replays = await Promise.all(ids.map((id, i) => sim.sendCallback(id, { url: urls[i] })));
		expect(replays.filter((e) => e.status !== 200 && e.status !== 202)).toEqual([]);
		const answers = sim.callbacks.slice(-10).map((c) => c.status);
		expect(answers.filter((s) => s !== 200 && s !== 202)).toEqual([]);
		// Barrier (see the forged test): one more genuine task, then exactly one new execution.
		const barrier = await finishedTask();
		expect(
			(await sim.sendCallback(barrier, { url: signed(`${triggerUrl()}?ref=after-restart`) }))
				.status,
		).toBe(200);
		const after = (await endedExecutions(TRIGGER_WF, before.size + 11)).filter(
			(e) => !before.has(e.id),
		);
		expect(after).toHaveLength(11);
		const started = after.map(
			(e) =>
				e.data!.resultData.runData['Media Generation Trigger'][0].data!.main[0]![0].json.task_id,
		);
		expect(started.filter((id) => id === barrier)).toHaveLength(1);
		expect(new Set(started).size).toBe(11);

		// And the Retry of the timed-out execution fetches the task, which finished meanwhile.
		while (sim.task(task.id)?.endedAt === undefined) await new Promise((r) => setTimeout(r, 200));
		const retried = await retry(failed.id, false);
		expect(retried.status).toBe('success');
		expect(submitsOf(p)).toBe(1);
		const [json] = generated(retried);
		expect(json).toMatchObject({ task_id: task.id, status: 'finished' });
	}));

test('a new execution with the same input submits again (a new generation, never a reused task)', () =>
	n8n.explain(async () => {
		const p = 'retry-daily';
		const first = await runRows([{ prompt: `${p} same prompt` }]);
		const second = await runRows([{ prompt: `${p} same prompt` }]);
		expect([first.status, second.status]).toEqual(['success', 'success']);
		expect(submitsOf(p)).toBe(2);
		expect(generated(second)[0].task_id).not.toBe(generated(first)[0].task_id);
	}));

test('Park Until Callbacks: the Retry picks up the accepted task still running, without paying again, and returns it', () =>
	n8n.explain(async () => {
		const p = 'retry-park';
		// The second row's submission is refused (429 beyond the submit budget: no task), after the
		// first row's task was accepted; the node fails before parking.
		const fault = sim.faults.add({
			endpoint: 'submit',
			kind: '429',
			when: 'before',
			match: `${p} refused`,
			retryAfter: 3600,
		});
		// The kept task runs until the Retry has picked it up and got every other callback,
		// whatever the machine's load: 600 s of the simulator's clock, moved on once the refused
		// row, submitted again, has called back. (A Retry that parked would then wait for the
		// kept task's callback, which goes to the failed execution: it never resumes.)
		const rows = [{ prompt: `${p} kept [sim:duration=600000]` }, { prompt: `${p} refused` }];
		const failed = await runRows(rows, PARK_RETRY_WF, PARK_RETRY_PATH);
		sim.faults.remove(fault);
		expect(failed.status).toBe('error');
		expect(submitsOf(p)).toBe(1);
		const [kept] = sim.tasks().filter((t) => t.prompt.startsWith(p));
		const retrying = retry(failed.id, false, PARK_RETRY_WF);
		retrying.catch(() => undefined); // awaited below
		const calledBack = () =>
			sim
				.tasks()
				.some((t) => t.prompt === `${p} refused` && sim.callbacks.some((c) => c.taskId === t.id));
		for (const end = Date.now() + 120_000; !calledBack() && Date.now() < end; )
			await new Promise((r) => setTimeout(r, 100));
		expect(calledBack()).toBe(true);
		expect(sim.view(kept.id)?.status).not.toBe('finished');
		sim.clock.advance(600_000);
		const retried = await retrying;
		// Was: the kept row submitted again (its digest held the failed execution's resume URL).
		expect(submitsOf(p)).toBe(2);
		// Its callback went to the failed execution: the Retry did not park on it, it polled.
		expect(retried.status).toBe('success');
		const out = retried.data!.resultData.runData.Finish[0].data!.main[0]!.map((i) => i.json);
		expect(out.map((j) => j.status)).toEqual(['finished', 'finished']);
		expect(out[0].task_id).toBe(kept.id);
	}));

test('n8n killed while the node waits (SIGKILL), started again, Retry of the crashed executions: the crash-safe layout returns the 6 results byte for byte, nothing is submitted again', () =>
	n8n.explain(async () => {
		const safe = 'crash-safe';
		const one = 'crash-one';
		// Long enough to be running at the kill, short enough to be finished at the Retry.
		const rowsOf = (p: string, n: number) =>
			Array.from({ length: n }, (_, i) => ({ prompt: `${p} ${i} [sim:duration=8000]` }));
		const post = async (path: string, rows: Row[]) => {
			const res = await fetch(`${n8n.baseUrl}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ rows }),
			});
			expect(res.status).toBe(200);
		};
		await post(CRASH_SAFE_PATH, rowsOf(safe, 6));
		await post(RETRY_PATH, rowsOf(one, 3));
		// Both wait: every task accepted and its status read at least once.
		const polled = () => {
			const ids = sim
				.tasks()
				.filter((t) => t.prompt.startsWith('crash-'))
				.map((t) => t.id);
			return (
				ids.length === 9 &&
				ids.every((id) => sim.requests.some((r) => r.endpoint === 'status' && r.taskId === id))
			);
		};
		while (!polled()) await new Promise((r) => setTimeout(r, 100));
		const submitted = new Map(
			sim
				.tasks()
				.filter((t) => t.prompt.startsWith('crash-'))
				.map((t) => [t.prompt, t.id]),
		);

		const killedAt = Date.now();
		await n8n.kill();
		await n8n.start();
		const restartMs = Date.now() - killedAt;
		// n8n's crash recovery at start marks both crashed (ExecutionRecoveryService, event log).
		const [safeRun] = await executionsOf(CRASH_SAFE_WF);
		const [oneRun] = (await executionsOf(RETRY_WF)).filter((e) => e.status === 'crashed');
		expect(safeRun.status).toBe('crashed');
		expect(oneRun).toBeDefined();
		while (![...submitted.values()].every((id) => sim.task(id)?.endedAt !== undefined)) {
			await new Promise((r) => setTimeout(r, 200));
		}

		// The crash-safe layout: the Retry runs only Task → Wait for Completion, on the task_ids
		// n8n saved after Submit.
		const retryStarted = Date.now();
		const retried = await retry(safeRun.id, false, CRASH_SAFE_WF);
		const retryMs = Date.now() - retryStarted;
		expect(retried.status).toBe('success');
		expect(submitsOf(safe)).toBe(6);
		const out = retried.data!.resultData.runData.Finish[0].data!.main[0]!;
		expect(out.map((i) => i.json.task_id)).toEqual(
			rowsOf(safe, 6).map((r) => submitted.get(r.prompt)),
		);
		for (const item of out) {
			const task = sim.task(String(item.json.task_id))!;
			const binaries = Object.values(item.binary ?? {}) as BinaryJson[];
			expect(binaries).toHaveLength(task.files.length);
			for (const [i, file] of task.files.entries()) {
				expect(sha256([fs.readFileSync(n8n.binaryFile(binaries[i]))])).toBe(
					sha256(mediaChunks(file.kind, file.size)),
				);
			}
		}

		// One node that waits itself: the task_ids died with the process. The Retry sends nothing
		// again (was: 3 more submissions, paid twice) and each item says what to do.
		const lost = await retry(oneRun.id, false);
		expect(submitsOf(one)).toBe(3);
		expectLostRunError(lost);
		process.stdout.write(
			`[e2e] n8n killed and started again in ${(restartMs / 1000).toFixed(1)} s; Retry of the crash-safe layout: 6 of 6 results in ${(retryMs / 1000).toFixed(1)} s, 0 submissions; one-node Retry: 0 submissions (was 3)\n`,
		);
	}));

test("the key is nowhere in n8n's server log", () =>
	n8n.explain(async () => {
		const log = n8n.serverLogText();
		expect(log).toContain('Editor is now accessible');
		expect(log).not.toContain(sim.apiKey);
	}));
