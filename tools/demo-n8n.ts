/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// The half of `npm run demo` that needs n8n's own nodes (Data Tables, Merge, the AI Agent,
// the Form Trigger): the three jobs of the README's guides run in a real n8n (the version the test layers use,
// installed once into the cache), with this package installed as a community package, against
// the demo's simulator. The agent's chat model is the agent layer's scripted OpenAI-compatible
// stand-in (test/agent/fake-openai.ts): no OpenAI account and no network are used.
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {
	AGENT_TABLE,
	AGENT_TABLE_COLUMNS,
	chat,
	exampleAgentWorkflow,
	exampleSaveWorkflow,
	openAiCredentialImport,
	toolName,
	withStartVideoCallback,
} from '../test/agent/agent-workflows';
import { startFakeOpenAi, textOf, toolResults, type ChatRequest } from '../test/agent/fake-openai';
import { N8nInstance } from '../test/e2e/n8n';
import { rest, setupOwner, type RestSession } from '../test/e2e/rest';
import { SHEET_FILE, SHIPPED_SHEET, parseCsv, toCsv, type Row } from '../test/e2e/sheet';
import { BATCH_ID, TABLE_BATCH_EXAMPLE, TABLE_EXAMPLE, Table } from '../test/e2e/table';
import { credentialImport, exampleWorkflow } from '../test/e2e/workflows';
import { referenceChunks, type Simulator } from '../test/simulator';

const TABLE_JOB = 'mgenDemoTable01';
const AGENT = 'mgenDemoAgent01';
const SAVE = 'mgenDemoSave001';
const FORM = 'mgenDemoForm001';
/** The form's address in examples/form-photo-to-video.json (Photo Form → Options → Form Path). */
const FORM_PATH = 'animate-my-photo';

export interface JobsReport {
	ok: boolean;
	n8nVersion: string;
	sheet: { rows: Row[]; finished: number; files: string[]; seconds: number; error?: string };
	agent: {
		conversation: Array<{ from: 'user' | 'agent'; text: string }>;
		savedFile?: string;
		error?: string;
	};
	form: { photo?: string; video?: string; error?: string };
	/** The OpenAI model the example names, answered by the scripted stand-in. */
	chatModel: string;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
	what: string,
	timeoutMs: number,
	fn: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await Promise.resolve()
			.then(fn)
			.catch(() => undefined);
		if (value !== undefined) return value;
		if (Date.now() > deadline) throw new Error(`not within ${timeoutMs / 1000} s: ${what}`);
		await wait(300);
	}
}

/** Runs a Manual Trigger workflow as the editor's Execute Workflow does; resolves when it ended. */
async function runInEditor(n8n: N8nInstance, session: RestSession, id: string, trigger: string) {
	const { data } = await rest<{ executionId: string }>(n8n, `/workflows/${id}/run`, {
		method: 'POST',
		session,
		body: { triggerToStartFrom: { name: trigger } },
	});
	return await until(`execution ${data.executionId} ended`, 600_000, async () => {
		const { data: e } = await rest<{ status: string }>(n8n, `/executions/${data.executionId}`, {
			session,
		});
		return ['new', 'running', 'waiting'].includes(e.status) ? undefined : e.status;
	});
}

/**
 * What a customer's browser does with the form: posts the photo and the wish, follows the
 * waiting page until the workflow reaches its Form Ending, and saves the file that page offers.
 */
async function submitPhoto(
	n8n: N8nInstance,
	photoFile: string | undefined,
	outDir: string,
	log: (line: string) => void,
): Promise<JobsReport['form']> {
	const photo = photoFile
		? fs.readFileSync(photoFile)
		: Buffer.concat([...referenceChunks('png', 40_000)]);
	const name = photoFile ? path.basename(photoFile) : 'photo.png';
	const wish = 'The paper boat drifts slowly away, rain falling';
	log(
		`  photo ${photoFile ? path.relative(process.cwd(), photoFile) : name} (${photo.length} bytes), "${wish}"`,
	);
	const body = new FormData();
	body.append('field-0', new Blob([photo], { type: 'image/png' }), name);
	body.append('field-1', wish);
	body.append('field-2', 'customer@example.com');
	const started = Date.now();
	const res = await until('the published form', 30_000, async () => {
		const r = await fetch(`${n8n.baseUrl}/form/${FORM_PATH}`, { method: 'POST', body });
		return r.status === 404 ? undefined : r;
	});
	if (!res.ok) return { error: `the form answered HTTP ${res.status}` };
	const { formWaitingUrl } = (await res.json()) as { formWaitingUrl: string };
	const waiting = new URL(formWaitingUrl);
	const status = `${n8n.baseUrl}${waiting.pathname}/n8n-execution-status${waiting.search}`;
	await until('the video on the form page', 120_000, async () =>
		(await (await fetch(status)).text()) === 'form-waiting' ? true : undefined,
	);
	const page = await (await fetch(formWaitingUrl)).text();
	// n8n's completion page carries the file for the browser to download.
	const embedded = /const binaries = "([^"]+)"/.exec(page)?.[1];
	if (!embedded) return { error: 'the form page offered no file' };
	const [file] = JSON.parse(decodeURIComponent(embedded)) as Array<{
		data: { data: number[] };
		fileName: string;
		type: string;
	}>;
	fs.mkdirSync(outDir, { recursive: true });
	const video = path.join(outDir, file.fileName);
	fs.writeFileSync(video, Buffer.from(file.data.data));
	log(
		`  after ${((Date.now() - started) / 1000).toFixed(1)} s the form page offers ${file.fileName} (${file.type}) → ${path.relative(process.cwd(), video)}`,
	);
	return { photo: photoFile, video };
}

/** A public-API key of the owner (Data Tables' rows are filled and read through it). */
async function apiKeyOf(n8n: N8nInstance, session: RestSession): Promise<string> {
	const { data: scopes } = await rest<string[]>(n8n, '/api-keys/scopes', { session });
	const { data } = await rest<{ rawApiKey?: string; apiKey?: string }>(n8n, '/api-keys', {
		method: 'POST',
		session,
		body: { label: 'demo', scopes, expiresAt: null },
	});
	const key = data.rawApiKey ?? data.apiKey;
	if (!key) throw new Error('no API key in the answer of POST /rest/api-keys');
	return key;
}

export async function runJobsInN8n(options: {
	sim: Simulator;
	outDir: string;
	log: (line: string) => void;
	/** A picture to upload through the form (the one the in-process part generated), else a test image. */
	photo?: string;
}): Promise<JobsReport> {
	const { sim, outDir, log } = options;
	const fake = await startFakeOpenAi();
	const n8n = await N8nInstance.create('demo');
	const folder = path.join(n8n.dir, 'files');
	fs.mkdirSync(folder);
	// n8n 2.x lets its file nodes read and write only under N8N_RESTRICT_FILE_ACCESS_TO.
	n8n.env.N8N_RESTRICT_FILE_ACCESS_TO = folder;
	const report: JobsReport = {
		ok: false,
		n8nVersion: n8n.install.version,
		sheet: { rows: [], finished: 0, files: [], seconds: 0 },
		agent: { conversation: [] },
		form: {},
		chatModel: fake.models[0],
	};
	try {
		const started = Date.now();
		const media = credentialImport(sim.baseUrl, sim.apiKey);
		await n8n.importCredentials([
			// The simulator's files are on 127.0.0.1.
			{ ...media, data: { ...media.data, allowPrivateFileHosts: true } },
			openAiCredentialImport(fake.url, fake.apiKey),
		]);
		const save = exampleSaveWorkflow(SAVE, folder);
		const agent = withStartVideoCallback(
			exampleAgentWorkflow('agent-media-generation.json', AGENT),
			`${n8n.baseUrl}/${save.productionPath}`,
		);
		await n8n.importWorkflows([
			// The table job as imported: published is only its batch workflow (the job's schedules would
			// start runs of their own), the job runs from Try It Now as Execute workflow does.
			exampleWorkflow(TABLE_EXAMPLE, TABLE_JOB, folder),
			exampleWorkflow(TABLE_BATCH_EXAMPLE, BATCH_ID, folder),
			agent,
			save.workflow,
			// Its Keep a Copy node writes into the demo's folder, as the guide has the user set it.
			exampleWorkflow('form-photo-to-video.json', FORM, folder),
		]);
		await n8n.start();
		const session = await setupOwner(n8n);
		for (const id of [AGENT, SAVE, FORM, BATCH_ID]) {
			const { data } = await rest<{ versionId: string }>(n8n, `/workflows/${id}`, { session });
			await rest(n8n, `/workflows/${id}/activate`, {
				method: 'POST',
				session,
				body: { versionId: data.versionId },
			});
		}
		log(
			`  n8n ${n8n.install.version} started with this package installed, ready after ${((Date.now() - started) / 1000).toFixed(1)} s`,
		);

		// Job 1: the table, 20 rows, each result back in its row.
		log('');
		const key = await apiKeyOf(n8n, session);
		const table = await Table.create(n8n, key);
		// The table the AI Agent example writes a row per video into, as its guide has the user create it.
		await Table.createNamed(Table.publicApi(n8n, key), AGENT_TABLE, AGENT_TABLE_COLUMNS);
		const sample = parseCsv(fs.readFileSync(SHIPPED_SHEET, 'utf8'));
		await table.insert(sample);
		log(
			`▶ examples/${TABLE_EXAMPLE} and examples/${TABLE_BATCH_EXAMPLE}, the Data Table "products" filled from examples/${SHEET_FILE} (${sample.length} rows)`,
		);
		const tableStarted = Date.now();
		const status = await runInEditor(n8n, session, TABLE_JOB, 'Try It Now');
		report.sheet.seconds = (Date.now() - tableStarted) / 1000;
		report.sheet.rows = (await table.rows()).map((r) =>
			Object.fromEntries(
				['sku', 'product', 'prompt', 'status', 'task_id', 'video_file', 'error'].map((k) => [
					k,
					r[k] === null || r[k] === undefined ? '' : String(r[k]),
				]),
			),
		);
		const tableOut = path.join(outDir, 'table');
		fs.mkdirSync(tableOut, { recursive: true });
		fs.writeFileSync(path.join(tableOut, SHEET_FILE), toCsv(report.sheet.rows));
		for (const row of report.sheet.rows.filter((r) => r.video_file)) {
			if (!fs.existsSync(row.video_file)) continue;
			const to = path.join(tableOut, path.basename(row.video_file));
			fs.copyFileSync(row.video_file, to);
			report.sheet.files.push(to);
		}
		report.sheet.finished = report.sheet.rows.filter(
			(r) => r.status === 'finished' && r.video_file,
		).length;
		log(
			`  execution ${status} in ${report.sheet.seconds.toFixed(1)} s: ${report.sheet.finished} of ${report.sheet.rows.length} rows have their video`,
		);
		for (const row of report.sheet.rows.slice(0, 3)) {
			log(
				`  row ${row.sku}: status ${row.status}, video_file ${path.basename(row.video_file) || '(none)'}, task_id ${row.task_id}`,
			);
		}
		log(
			`  … the table with every row, as a CSV file: ${path.relative(process.cwd(), path.join(tableOut, SHEET_FILE))}`,
		);
		if (status !== 'success' || report.sheet.finished !== report.sheet.rows.length) {
			report.sheet.error = `execution ${status}, ${report.sheet.finished} of ${report.sheet.rows.length} rows with a video`;
		}

		// Job 3: the AI Agent with its memory, and the callback workflow that saves the video.
		log('');
		log(
			'▶ examples/agent-media-generation.json, with examples/save-finished-videos.json receiving the callback',
		);
		const chatSession = randomUUID();
		const say = async (text: string) => {
			report.agent.conversation.push({ from: 'user', text });
			log(`  user:  ${text}`);
			const answer = await chat(n8n, agent.webhookId, text, chatSession);
			const reply = String(answer.output ?? '');
			report.agent.conversation.push({ from: 'agent', text: reply });
			log(`  agent: ${reply}`);
		};
		const lastResult = (request: ChatRequest) => {
			const results = toolResults(request);
			const parsed = JSON.parse(results[results.length - 1]?.content ?? '{}') as unknown;
			return ((Array.isArray(parsed) ? parsed[0] : parsed) ?? {}) as Record<string, unknown>;
		};
		const args = {
			prompt:
				'A white ceramic pour-over coffee set on a sunlit kitchen counter, steam rising, slow orbit around the cups',
			aspect_ratio: '16:9',
			duration: 8,
			resolution: '720p',
		};
		fake.script([
			{ toolCalls: [{ name: toolName('Start Video'), args }] },
			(request) => ({
				content: `I started your video (task ${String(lastResult(request).task_id)}). It is saved automatically when it is done; ask me any time.`,
			}),
		]);
		await say('Please make an 8 second video of our ceramic coffee set.');
		const taskId = sim.tasks()[sim.tasks().length - 1]?.id ?? '';
		const saved = path.join(folder, `${taskId}.mp4`);
		await until('the finished video saved by save-finished-videos.json', 120_000, () =>
			fs.existsSync(saved) ? true : undefined,
		);
		const agentOut = path.join(outDir, 'agent');
		fs.mkdirSync(agentOut, { recursive: true });
		report.agent.savedFile = path.join(agentOut, path.basename(saved));
		fs.copyFileSync(saved, report.agent.savedFile);
		log(
			`  (the service called back: save-finished-videos.json saved ${path.relative(process.cwd(), report.agent.savedFile)}, nobody asked)`,
		);
		// The scripted model knows the task_id only from the conversation, which Simple Memory keeps.
		const remembered = (request: ChatRequest) =>
			/task_[0-9a-f]+/.exec(request.messages.map((m) => textOf(m.content)).join('\n'))?.[0] ?? '';
		fake.script([
			(request) => ({
				toolCalls: [{ name: toolName('Get Video Status'), args: { task_id: remembered(request) } }],
			}),
			(request) => {
				const task = lastResult(request);
				const file = (task.files as Array<{ url: string }> | undefined)?.[0];
				return {
					content:
						task.status === 'finished'
							? `Yes, task ${String(task.task_id)} is finished: ${file?.url ?? ''} (link valid until ${String(task.expires_at)}).`
							: `Not yet: task ${String(task.task_id)} is ${String(task.status)}.`,
				};
			},
		]);
		await say('Is it ready?');
		if (fake.problems.length) report.agent.error = fake.problems.join('; ');

		// Job 2: a photo sent through the form, animated, given back on the form's page.
		log('');
		log('▶ examples/form-photo-to-video.json: a customer uploads a photo in the form');
		report.form = await submitPhoto(n8n, options.photo, path.join(outDir, 'form'), log);
		if (report.form.error) log(`  failed: ${report.form.error}`);
		const last = report.agent.conversation[report.agent.conversation.length - 1]?.text ?? '';
		if (!last.includes(taskId) || !last.includes('finished'))
			report.agent.error ??= `unexpected answer: ${last}`;
		report.ok = !report.sheet.error && !report.agent.error && !report.form.error;
		return report;
	} catch (error) {
		report.agent.error ??= error instanceof Error ? error.message : String(error);
		log(`  failed: ${report.agent.error}\n  n8n's logs (kept): ${n8n.logsDir}`);
		// dispose() keeps the folder to read.
		process.env.MGEN_KEEP_E2E = '1';
		return report;
	} finally {
		await n8n.dispose();
		await fake.close();
	}
}
