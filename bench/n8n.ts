// `npm run bench:n8n`: the node side by side with what users build without it, in ONE real n8n
// 2.41.1 process (n8n start, this package installed as a community package, SQLite) against the
// simulator, in one run:
//   node        Webhook → Split Out → Media Generation (video, waits, downloads)
//   loop, all   the HTTP Request polling loop of examples/http-request-loop-all-together.json
//   loop, one   the same with Loop Over Items of batch size 1 (examples/http-request-loop-one-at-a-time.json)
// on 1 task of T = 60 s, 50 tasks of T = 60 s (one execution of 50 items; the one-at-a-time
// loop on a few items, extrapolated: it takes 50 × T), and one task with a 300 MB file. Then
// downloads of one 300 MB and one 1 GB file: the node (Task → Download Files), HTTP Request's
// File response, and a plain Node stream run inside the same n8n process (the floor).
// `--generate`: only the Generate path of a 300 MB file, phase by phase, against Task → Download
// Files of the same file (issue 30). `--quick`: every form above (the comparison on one case, the
// downloads, the Generate path, the profile) at tiny sizes in one n8n, to prove it runs; `--out
// FILE` writes the results elsewhere. `--burst`: the callback burst under CPU load instead
// (bench/callback-burst.ts). `--polling`: only the status reads of 5 and 50 tasks of 60 s, the
// node on nothing learnt (and learnt) against the all-items loop (issue 37; about 9 minutes).
//
// Per run: wall time (n8n's own startedAt → stoppedAt), status reads the simulator answered,
// executions and node runs, the bytes of the execution's `execution_data` row in n8n's SQLite
// database, and the peak RSS growth of the n8n process (its peak counter reset before the run).
// The examples are the very files users import: only their trigger, service URL and credential
// are swapped for the simulator's. Figures only: nothing here passes or fails.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../test/simulator';
import { createApiKey, newOwner } from '../test/e2e/executions-api';
import {
	CREDENTIAL_TYPE,
	N8nInstance,
	freePort,
	ROOT,
	removeEmptyRunFolder,
	type ExecutionJson,
} from '../test/e2e/n8n';
import { plainDownload, simFileUrl } from '../test/e2e/plain-download';
import {
	CREDENTIAL,
	mediaNode,
	splitRows,
	webhookNode,
	type Connections,
	type WorkflowNode,
} from '../test/e2e/workflows';
import { videoParams } from '../test/queue/workflows';
import { npmRun, provenance } from './lib/provenance';
import { withDatabase } from './lib/sqlite';
import { mb, round, seconds, table } from './lib/stats';
import { regenerateDocs } from '../tools/docs-figures';

const SERVICE_PLACEHOLDER = 'https://media-generation.example.com';
const HEADER_CREDENTIAL = { id: 'benchHeader00001', name: 'Media Generation API key (header)' };
const T = 60_000;
/** Issue 37's targets of the polling comparison: the node's reads over the all-items loop's. */
const POLLING_TARGETS = { fiveTasks: 1.0, fiftyFresh: 0.33 };
const BIG = 300_000_000;
const GB = 1_000_000_000;

type Form = 'node' | 'loop, all together' | 'loop, one at a time';

interface Run {
	form: Form;
	case: string;
	items: number;
	wallMs: number;
	statusReads: number;
	submits: number;
	fileRequests: number;
	executions: number;
	nodeRuns: number;
	executionDataBytes: number;
	rssGrowthBytes: number;
	/** Measured on fewer items than the case names, and scaled linearly (see `measuredItems`). */
	extrapolated?: boolean;
	measuredItems?: number;
	status: string;
}

interface DownloadRun {
	way: 'node' | 'HTTP Request (File)' | 'plain stream in n8n' | 'n8n helpers (no node code)';
	bytes: number;
	rep: number;
	/** The downloading node's own run time (n8n's executionTime). */
	nodeMs: number;
	rssGrowthBytes: number;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
const say = (...lines: string[]) => {
	for (const line of lines) {
		printed.push(line);
		process.stdout.write(`${line}\n`);
	}
};
const printed: string[] = [];

function uptime(): string {
	return os
		.loadavg()
		.map((l) => l.toFixed(2))
		.join(' ');
}

/** Reads a process's VmRSS / VmHWM in bytes. */
function procMemory(pid: number): { rss: number; hwm: number } {
	const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
	const kb = (key: string) =>
		Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) * 1024;
	return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Resets the kernel's peak-RSS counter of a process to its current RSS (clear_refs 5). */
function resetPeak(pid: number) {
	fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** The bytes of an execution's saved data (bench/lib/sqlite.ts: read-only beside n8n). */
function executionDataBytes(dbFile: string, executionId: string): number {
	const row = withDatabase(dbFile, (db) =>
		db
			.prepare(
				'SELECT length(CAST(data AS BLOB)) + length(CAST(workflowData AS BLOB)) AS bytes FROM execution_data WHERE executionId = ?',
			)
			.get(Number(executionId)),
	);
	return Number(row?.bytes ?? 0);
}

/** A shipped example as the bench runs it: a webhook with rows instead of the manual trigger. */
function exampleForBench(file: string, id: string, serviceUrl: string, webhookPath: string) {
	const text = fs
		.readFileSync(path.join(ROOT, 'examples', file), 'utf8')
		.split(SERVICE_PLACEHOLDER)
		.join(serviceUrl);
	const wf = JSON.parse(text) as { nodes: WorkflowNode[]; connections: Connections };
	wf.nodes = wf.nodes.filter((n) => n.name !== 'Start' && n.name !== 'Prompts');
	for (const node of wf.nodes) {
		if (node.credentials?.httpHeaderAuth) node.credentials.httpHeaderAuth = HEADER_CREDENTIAL;
		if (node.name === 'Split Out') node.parameters.fieldToSplitOut = 'body.rows';
	}
	wf.nodes.push(webhookNode(webhookPath));
	delete wf.connections.Start;
	delete wf.connections.Prompts;
	wf.connections.Webhook = { main: [[{ node: 'Split Out', type: 'main', index: 0 }]] };
	return { ...wf, id, name: `bench ${file}`, active: false, settings: { executionOrder: 'v1' } };
}

function nodeWorkflow(id: string, webhookPath: string, options?: Record<string, unknown>) {
	const nodes: WorkflowNode[] = [
		webhookNode(webhookPath),
		splitRows(),
		mediaNode('Generate Video', videoParams(options ? { options } : {})),
	];
	return {
		id,
		name: `bench node ${id}`,
		active: false,
		nodes,
		connections: {
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Generate Video', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * The two-node layout: Generate (Wait for Completion off) → Task → Wait for Completion, with or
 * without the workflow setting "Save execution progress" (the crash-safe layout when on).
 */
function twoStepWorkflow(id: string, webhookPath: string, saveProgress: boolean) {
	const nodes: WorkflowNode[] = [
		webhookNode(webhookPath),
		splitRows(),
		mediaNode('Submit', videoParams({ waitForCompletion: false })),
		mediaNode('Finish', {
			resource: 'task',
			operation: 'waitForCompletion',
			taskId: '={{ $json.task_id }}',
		}),
	];
	return {
		id,
		name: `bench two-step${saveProgress ? ', progress saved' : ''}`,
		active: false,
		nodes,
		connections: {
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Submit', type: 'main', index: 0 }]] },
			Submit: { main: [[{ node: 'Finish', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1', saveExecutionProgress: saveProgress },
	};
}

/** Webhook → one downloading node, reading the URL (or task id) from the body. */
function downloadWorkflow(id: string, webhookPath: string, way: DownloadRun['way']) {
	let node: WorkflowNode;
	if (way === 'node') {
		node = mediaNode('Download', {
			resource: 'task',
			operation: 'downloadFiles',
			taskId: '={{ $json.body.taskId }}',
		});
	} else {
		const [type, typeVersion, parameters] =
			way === 'HTTP Request (File)'
				? [
						'n8n-nodes-base.httpRequest',
						4.2,
						{ options: { response: { response: { responseFormat: 'file' } } } },
					]
				: ['CUSTOM.downloadProbe', 1, { way: way === 'plain stream in n8n' ? 'plain' : 'helpers' }];
		node = {
			id: 'n-download',
			name: 'Download',
			type,
			typeVersion,
			position: [400, 0],
			parameters: { url: '={{ $json.body.url }}', ...parameters },
		};
	}
	return {
		id,
		name: `bench download ${way}`,
		active: false,
		nodes: [webhookNode(webhookPath), node],
		connections: { Webhook: { main: [[{ node: 'Download', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

interface ExecutionRecord {
	id: string;
	status: string;
	startedAt?: string;
	stoppedAt?: string;
	data?: ExecutionJson['data'];
}

class Bench {
	private apiKey = '';
	private seen = new Set<string>();

	constructor(
		readonly n8n: N8nInstance,
		readonly sim: Simulator,
	) {}

	get pid(): number {
		return this.n8n.serverPid!;
	}

	async setUp(workflowIds: string[]) {
		this.apiKey = (await createApiKey(this.n8n, newOwner())).key;
		for (const id of workflowIds) {
			const res = await fetch(`${this.n8n.baseUrl}/api/v1/workflows/${id}/activate`, {
				method: 'POST',
				headers: { 'X-N8N-API-KEY': this.apiKey },
			});
			if (!res.ok)
				throw new Error(`activate ${id}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
		}
	}

	private async api<T>(pathname: string): Promise<T> {
		const res = await fetch(`${this.n8n.baseUrl}/api/v1${pathname}`, {
			headers: { 'X-N8N-API-KEY': this.apiKey },
		});
		if (!res.ok)
			throw new Error(`GET ${pathname}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
		return (await res.json()) as T;
	}

	/** Starts the workflow through its production webhook; resolves with its ended execution. */
	async runOnce(workflowId: string, webhookPath: string, body: unknown, timeoutMs: number) {
		const deadline = Date.now() + 30_000;
		for (;;) {
			const res = await fetch(`${this.n8n.baseUrl}/webhook/${webhookPath}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			await res.text();
			if (res.ok) break;
			// Right after start-up n8n may not have registered every webhook yet.
			if (res.status !== 404 || Date.now() > deadline)
				throw new Error(`webhook ${webhookPath}: HTTP ${res.status}`);
			await new Promise((r) => setTimeout(r, 500));
		}
		const end = Date.now() + timeoutMs;
		for (;;) {
			const list = await this.api<{ data: ExecutionRecord[] }>(
				`/executions?workflowId=${workflowId}&includeData=false&limit=20`,
			);
			const fresh = list.data.filter((e) => !this.seen.has(e.id));
			const ended = fresh.find((e) => !['running', 'new', 'waiting'].includes(e.status));
			if (ended) {
				for (const e of fresh) this.seen.add(e.id);
				const full = await this.api<ExecutionRecord>(`/executions/${ended.id}?includeData=true`);
				return { execution: full, executions: fresh.length };
			}
			if (Date.now() > end)
				throw new Error(`no execution of ${workflowId} ended within ${timeoutMs} ms`);
			await new Promise((r) => setTimeout(r, 1_000));
		}
	}

	/** One measured run: the RSS peak is reset first, the simulator's log marked. */
	async measure(workflowId: string, webhookPath: string, body: unknown, timeoutMs: number) {
		const mark = this.sim.requests.length;
		const base = procMemory(this.pid).rss;
		resetPeak(this.pid);
		const { execution, executions } = await this.runOnce(workflowId, webhookPath, body, timeoutMs);
		const peak = procMemory(this.pid).hwm;
		const requests = this.sim.requests.slice(mark);
		const runData = execution.data?.resultData.runData ?? {};
		const dbFile = path.join(this.n8n.userFolder, '.n8n', 'database.sqlite');
		return {
			execution,
			executions,
			wallMs: Date.parse(execution.stoppedAt ?? '') - Date.parse(execution.startedAt ?? ''),
			statusReads: requests.filter((r) => r.endpoint === 'status').length,
			submits: requests.filter((r) => r.endpoint === 'submit').length,
			fileRequests: requests.filter((r) => r.endpoint === 'file').length,
			nodeRuns: Object.values(runData).reduce((sum, runs) => sum + runs.length, 0),
			executionDataBytes: executionDataBytes(dbFile, execution.id),
			rssGrowthBytes: Math.max(0, peak - base),
			runData,
			// Where the execution data comes from: each node's runs as plain JSON (n8n stores them
			// flattened, with repeated values once, so these add up to more than the row).
			jsonBytesByNode: Object.fromEntries(
				Object.entries(runData).map(([node, runs]) => [node, JSON.stringify(runs).length]),
			),
		};
	}
}

type CrashSafeForm = 'one node (polls)' | 'two nodes' | 'two nodes, progress saved';

interface CrashSafeRun {
	form: CrashSafeForm;
	case: string;
	items: number;
	wallMs: number;
	statusReads: number;
	submits: number;
	nodeRuns: number;
	/** Writes of the whole execution data while it runs: one per node run with progress saved. */
	progressWrites: number;
	executionDataBytes: number;
	/** Between one node's end and the next one's start, per boundary (the progress write is there). */
	gapsMs: number[];
	/** The submitting node's run: how long tasks are accepted but not yet saved anywhere. */
	submitNodeMs: number;
	status: string;
}

/** The crash-safe bench's video tasks (docs/performance.md). */
export const CRASH_SAFE_TASK_MS = 10_000;

/**
 * Issue 39: the crash-safe layout against today's polling path, on the same rows. n8n writes the
 * whole execution data after each node when "Save execution progress" is on
 * (`hookFunctionsSaveProgress` → `saveExecutionProgress`, awaited in `nodeExecuteAfter` before the
 * next node starts), so its cost is the gap between nodes, which the execution's run data shows
 * (each node's startTime and executionTime).
 */
async function crashSafeCosts(
	bench: Bench,
	flows: Record<CrashSafeForm, { id: string; path: string }>,
	cases: Array<{ items: number; taskMs: number }>,
): Promise<CrashSafeRun[]> {
	const runs: CrashSafeRun[] = [];
	for (const c of cases) {
		const name = `${c.items} × ${seconds(c.taskMs)}`;
		for (const form of Object.keys(flows) as CrashSafeForm[]) {
			const flow = flows[form];
			const load = uptime();
			const m = await bench.measure(
				flow.id,
				flow.path,
				{ rows: rows(c.items, `crash-safe ${form} ${name}`, `[sim:duration=${c.taskMs}]`) },
				c.items * 2_000 + c.taskMs + 300_000,
			);
			const spans = Object.entries(m.runData)
				.map(([node, list]) => {
					const run = list[0] as { startTime?: number; executionTime?: number };
					return {
						node,
						start: run.startTime ?? 0,
						end: (run.startTime ?? 0) + (run.executionTime ?? 0),
					};
				})
				.sort((a, b) => a.start - b.start);
			const gapsMs = spans.slice(1).map((span, i) => span.start - spans[i].end);
			const submitter = spans.find(
				(span) => span.node === 'Submit' || span.node === 'Generate Video',
			);
			const run: CrashSafeRun = {
				form,
				case: name,
				items: c.items,
				wallMs: m.wallMs,
				statusReads: m.statusReads,
				submits: m.submits,
				nodeRuns: m.nodeRuns,
				progressWrites: form === 'two nodes, progress saved' ? m.nodeRuns : 0,
				executionDataBytes: m.executionDataBytes,
				gapsMs,
				submitNodeMs: submitter ? submitter.end - submitter.start : 0,
				status: m.execution.status,
			};
			runs.push(run);
			say(
				`${name} · ${form}: ${seconds(run.wallMs)}, ${run.statusReads} status reads, ${run.nodeRuns} node runs, gaps between nodes ${gapsMs.map((g) => `${g} ms`).join(' / ')}, ${run.progressWrites} progress writes of up to ${kb(run.executionDataBytes)}, submitting node ${run.submitNodeMs} ms, ${run.status} (load ${load} → ${uptime()})`,
			);
		}
	}
	return runs;
}

interface GenerateRun {
	rep: number;
	bytes: number;
	taskMs: number;
	/** Generate: the execution's wall time, and the node's own run time. */
	generateWallMs: number;
	generateNodeMs: number;
	/** Milliseconds from the execution's start: submission, each status read, the file request, the end. */
	timeline: {
		submitMs: number;
		readsMs: number[];
		taskEndMs: number;
		fileRequestMs: number;
		endMs: number;
	};
	/** From the task's end to the read that saw it. */
	lagMs: number;
	/** From the file request to the end of the execution (the download and the store). */
	downloadAndStoreMs: number;
	/** Task → Download Files of the same task, in the same n8n, right after: its node's run time. */
	downloadFilesMs: number;
	/** Generate / (task duration + Task → Download Files): target <= 1.1. */
	ratio: number;
}

/**
 * The Generate path of one big file, phase by phase (issue 30): Generate (video, T = 10 s) of a
 * file of `bytes`, its timeline from n8n's execution and the simulator's request log, then Task →
 * Download Files of the same task in the same n8n, for the target Generate <= 1.1 × (T + Download
 * Files).
 */
async function generatePath(
	bench: Bench,
	sim: Simulator,
	flow: { id: string; path: string },
	download: { id: string; path: string },
	reps: number,
	bytes: number,
	taskMs = 10_000,
): Promise<GenerateRun[]> {
	const out: GenerateRun[] = [];
	say(`\n## The Generate path of a ${mb(bytes)} file (T = ${seconds(taskMs)}), phase by phase`);
	for (let rep = 1; rep <= reps; rep++) {
		const load = uptime();
		const mark = sim.requests.length;
		const m = await bench.measure(
			flow.id,
			flow.path,
			{ rows: rows(1, `generate path ${rep}`, `[sim:duration=${taskMs}] [sim:size=${bytes}]`) },
			600_000,
		);
		if (m.execution.status !== 'success') throw new Error(`generate: ${m.execution.status}`);
		const requests = sim.requests.slice(mark);
		const submit = requests.find((r) => r.endpoint === 'submit');
		const taskId = submit?.taskId ?? requests.find((r) => r.taskId)?.taskId;
		const task = taskId ? sim.task(taskId) : undefined;
		if (!task) throw new Error('generate: no task in the simulator log');
		const started = Date.parse(m.execution.startedAt ?? '');
		const ended = Date.parse(m.execution.stoppedAt ?? '');
		const reads = requests.filter((r) => r.endpoint === 'status' && r.taskId === task.id);
		const file = requests.find((r) => r.endpoint === 'file' && r.taskId === task.id);
		const taskEnd = task.createdAt + task.durationMs;
		const seen = reads.find((r) => r.at >= taskEnd);
		const nodeRun = m.runData['Generate Video']?.[0] as { executionTime?: number } | undefined;
		const d = await bench.measure(download.id, download.path, { taskId: task.id }, 600_000);
		const dlRun = d.runData.Download?.[0] as { executionTime?: number } | undefined;
		if (d.execution.status !== 'success') throw new Error(`download files: ${d.execution.status}`);
		const run: GenerateRun = {
			rep,
			bytes,
			taskMs: task.durationMs,
			generateWallMs: ended - started,
			generateNodeMs: nodeRun?.executionTime ?? Number.NaN,
			timeline: {
				submitMs: (submit?.at ?? Number.NaN) - started,
				readsMs: reads.map((r) => r.at - started),
				taskEndMs: taskEnd - started,
				fileRequestMs: (file?.at ?? Number.NaN) - started,
				endMs: ended - started,
			},
			lagMs: seen ? seen.at - taskEnd : Number.NaN,
			downloadAndStoreMs: ended - (file?.at ?? Number.NaN),
			downloadFilesMs: dlRun?.executionTime ?? d.wallMs,
			ratio: 0,
		};
		run.ratio = run.generateWallMs / (run.taskMs + run.downloadFilesMs);
		out.push(run);
		const t = run.timeline;
		say(
			`#${rep}: Generate ${seconds(run.generateWallMs)} (node run ${seconds(run.generateNodeMs)}); Task → Download Files ${seconds(run.downloadFilesMs)}; ratio Generate / (T + Download Files) ${round(run.ratio, 2)} (target <= 1.1); RSS +${mb(m.rssGrowthBytes)} (load ${load} → ${uptime()})`,
			`    timeline from the execution's start: submit +${seconds(t.submitMs)}; status reads ${t.readsMs.map((x) => `+${seconds(x)}`).join(', ')}; task ended +${seconds(t.taskEndMs)} (seen ${seconds(run.lagMs)} later); file request +${seconds(t.fileRequestMs)}; stored, execution ended +${seconds(t.endMs)} (download and store ${seconds(run.downloadAndStoreMs)})`,
		);
	}
	return out;
}

interface CpuProfile {
	nodes: Array<{ id: number; callFrame: { url: string; functionName: string } }>;
	samples: number[];
	timeDeltas: number[];
}

/** Where a sampled function lives: its npm package, this package, Node's runtime, or V8. */
function whereIn(url: string, fn: string): string {
	if (fn === '(garbage collector)') return 'garbage collection';
	if (fn === '(idle)') return 'idle (waiting for I/O)';
	if (fn === '(program)' || fn === '(root)') return 'V8 / native';
	if (url.startsWith('node:') || url === '') return 'Node.js runtime (streams, sockets, fs)';
	const m = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
	return m ? m[1] : 'other';
}

/** One Chrome DevTools Protocol session on n8n's inspector (Node 24's global WebSocket). */
async function inspector(port: number) {
	const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
		webSocketDebuggerUrl: string;
	}>;
	const WS = (
		globalThis as unknown as {
			WebSocket: new (url: string) => {
				onopen: () => void;
				onmessage: (e: { data: string }) => void;
				onerror: (e: unknown) => void;
				send(data: string): void;
				close(): void;
			};
		}
	).WebSocket;
	const ws = new WS(target.webSocketDebuggerUrl);
	await new Promise<void>((resolve, reject) => {
		ws.onopen = () => resolve();
		ws.onerror = reject;
	});
	let seq = 0;
	const pending = new Map<number, (result: unknown) => void>();
	ws.onmessage = (e) => {
		const msg = JSON.parse(e.data) as { id?: number; result?: unknown };
		if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
	};
	return {
		post<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
			const id = ++seq;
			return new Promise<T>((resolve) => {
				pending.set(id, resolve as (result: unknown) => void);
				ws.send(JSON.stringify({ id, method, params }));
			});
		},
		close: () => ws.close(),
	};
}

/** The 1 GB download by the node and by HTTP Request, each under V8's sampling profiler. */
async function profileDownloads(
	bench: Bench,
	sim: Simulator,
	ways: Array<{ way: DownloadRun['way']; id: string; path: string }>,
	port: number,
	size: number,
) {
	const session = await inspector(port);
	const url = await simFileUrl(sim, size);
	const task = sim.tasks().find((t) => t.files.some((f) => f.url === url));
	const out: Record<string, unknown> = {};
	try {
		await session.post('Profiler.enable');
		await session.post('Profiler.setSamplingInterval', { interval: 500 });
		for (const d of ways) {
			await session.post('Profiler.start');
			const m = await bench.measure(d.id, d.path, { url, taskId: task?.id }, 600_000);
			const { profile } = await session.post<{ profile: CpuProfile }>('Profiler.stop');
			const byId = new Map(profile.nodes.map((n) => [n.id, n]));
			const self = new Map<string, number>();
			const ours = new Map<string, number>();
			for (let i = 0; i < profile.samples.length; i++) {
				const frame = byId.get(profile.samples[i])!.callFrame;
				const dt = (profile.timeDeltas[i] ?? 0) / 1000;
				const where = whereIn(frame.url, frame.functionName);
				self.set(where, (self.get(where) ?? 0) + dt);
				if (where === 'n8n-nodes-media-generation') {
					const key = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/dist\//, '')}`;
					ours.set(key, (ours.get(key) ?? 0) + dt);
				}
			}
			const top = (m2: Map<string, number>, n: number) =>
				Object.fromEntries(
					[...m2]
						.sort((a, b) => b[1] - a[1])
						.slice(0, n)
						.map(([k, v]) => [k, round(v, 0)]),
				);
			const nodeRun = m.runData.Download?.[0] as { executionTime?: number } | undefined;
			out[d.way] = {
				bytes: size,
				nodeMs: nodeRun?.executionTime,
				selfMs: top(self, 12),
				thisPackageMs: top(ours, 10),
			};
			say(
				`\nprofile, ${mb(size)} by ${d.way}: node run ${seconds(nodeRun?.executionTime ?? 0)}; self time by where the code lives (ms):`,
			);
			say(table([['where', 'self ms'], ...Object.entries(top(self, 12)).map(([k, v]) => [k, v])]));
			if (ours.size)
				say(
					`hottest functions of this package: ${Object.entries(top(ours, 8))
						.map(([k, v]) => `${k} ${v} ms`)
						.join('; ')}`,
				);
		}
	} finally {
		session.close();
	}
	return out;
}

const rows = (n: number, tag: string, markers: string) =>
	Array.from({ length: n }, (_, i) => ({ prompt: `${tag} ${i} ${markers}` }));

interface PollingRun {
	case: string;
	form: string;
	items: number;
	wallMs: number;
	statusReads: number;
	status: string;
	load: string;
}

/**
 * `--polling` (issue 37): status reads of the node against the users' all-items loop (HTTP
 * Request + Wait 5 s), 5 and 50 tasks of 60 s with rising progress. "Fresh": a workflow whose
 * node has learnt nothing (its own static data is empty; the warm-up runs in another workflow);
 * "learnt": the same workflow again, starting from what its first run saved. Also the sooner
 * pace on 5 fresh tasks (issue 30's schedule). Each workflow is its own, so that nothing one
 * case learns reaches another.
 */
async function pollingComparison(
	bench: Bench,
	flows: Record<'p5' | 'p50' | 'p5sooner' | 'loop', { id: string; path: string }>,
	quick: boolean,
): Promise<PollingRun[]> {
	const taskMs = quick ? 2_000 : T;
	const big = quick ? 6 : 50;
	const plan: Array<[string, string, { id: string; path: string }, number]> = [
		[`5 × ${seconds(taskMs)}, fresh`, 'node (balanced)', flows.p5, 5],
		[`5 × ${seconds(taskMs)}, fresh`, 'loop, all together', flows.loop, 5],
		[`5 × ${seconds(taskMs)}, fresh`, 'node (sooner)', flows.p5sooner, 5],
		[`${big} × ${seconds(taskMs)}, fresh`, 'node (balanced)', flows.p50, big],
		[`${big} × ${seconds(taskMs)}, fresh`, 'loop, all together', flows.loop, big],
		[`5 × ${seconds(taskMs)}, learnt`, 'node (balanced)', flows.p5, 5],
		[`5 × ${seconds(taskMs)}, learnt`, 'loop, all together', flows.loop, 5],
	];
	const runs: PollingRun[] = [];
	for (const [name, form, flow, items] of quick ? plan.slice(0, 2) : plan) {
		const load = uptime();
		const m = await bench.measure(
			flow.id,
			flow.path,
			{ rows: rows(items, `${form} ${name}`, `[sim:duration=${taskMs}]`) },
			taskMs + 600_000,
		);
		const run: PollingRun = {
			case: name,
			form,
			items,
			wallMs: m.wallMs,
			statusReads: m.statusReads,
			status: m.execution.status,
			load: `${load} → ${uptime()}`,
		};
		runs.push(run);
		say(
			`polling ${name} · ${form}: ${seconds(run.wallMs)}, ${run.statusReads} status reads (${round(run.statusReads / items, 1)} per task), ${run.status} (load ${run.load})`,
		);
	}
	say("\n## Polling: status reads of the node against the users' all-items loop (one n8n process)");
	const table_: Array<Array<string | number>> = [
		['case', 'form', 'wall time', 'status reads', 'per task', 'reads vs the loop', 'load (1 min)'],
	];
	for (const r of runs) {
		const loop = runs.find((x) => x.case === r.case && x.form === 'loop, all together');
		table_.push([
			r.case,
			r.form,
			seconds(r.wallMs),
			r.statusReads,
			round(r.statusReads / r.items, 1),
			loop && loop !== r ? round(r.statusReads / loop.statusReads, 2) : '-',
			r.load,
		]);
	}
	say(table(table_));
	say(
		`targets (issue 37): 5 x 60 s <= ${POLLING_TARGETS.fiveTasks.toFixed(1)} x the loop's reads, 50 x 60 s fresh <= ${POLLING_TARGETS.fiftyFresh} x. The simulator reports rising progress.`,
	);
	return runs;
}

export async function main(argv: string[]) {
	// --burst: the callback burst of issue 27 under CPU load, a benchmark of its own.
	if (argv.includes('--burst')) return (await import('./callback-burst')).main(argv);
	const quick = argv.includes('--quick');
	const mode = argv.includes('--generate')
		? '-generate'
		: argv.includes('--crash-safe')
			? '-crash-safe'
			: argv.includes('--polling')
				? '-polling'
				: argv.includes('--profile')
					? '-profile'
					: argv.includes('--files')
						? '-files'
						: '';
	const name = quick ? 'n8n-quick' : `n8n${mode}`;
	const outArg = argv.indexOf('--out');
	const out =
		outArg >= 0 && argv[outArg + 1]
			? path.resolve(argv[outArg + 1])
			: path.join(__dirname, 'results', `${name}.json`);
	// --quick: every form of the benchmark (the comparison, the downloads, the Generate path and
	// the profile) at tiny sizes in one n8n, to check that it runs (the e2e layer runs it).
	const oneAtATimeItems = quick ? 1 : 3;
	const taskMs = quick ? 2_000 : T;
	const batchItems = quick ? 3 : 50;
	const sizes = quick ? [2_000_000] : [BIG, GB];
	const reps = quick ? 1 : 2;
	const profile = argv.includes('--profile') || quick;
	if (profile)
		printed.push('(--profile: downloads under the CPU profiler; times are not comparable)');

	say(
		`# bench:n8n ${new Date().toISOString()}, load average before: ${uptime()}${quick ? ' (--quick: reduced sizes)' : ''}`,
	);
	const sim = await startSimulator({ apiKey: `bench-n8n-${process.pid}-secret`, seed: 22 });
	const n8n = await N8nInstance.create('bench-n8n');
	const results: Record<string, unknown> = {
		date: new Date().toISOString(),
		...provenance(npmRun('bench:n8n', argv)),
		quick,
		loadBefore: os.loadavg(),
	};
	try {
		n8n.installCustomNode(path.join(ROOT, 'test', 'fixtures', 'DownloadProbe.node.js'));
		await n8n.importCredentials([
			{
				...CREDENTIAL,
				type: CREDENTIAL_TYPE,
				data: { apiKey: sim.apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
			},
			{
				...HEADER_CREDENTIAL,
				type: 'httpHeaderAuth',
				data: { name: 'Authorization', value: `Bearer ${sim.apiKey}` },
			},
		]);
		const flows = {
			node: { id: 'benchNode000001', path: `bench-node-${process.pid}` },
			all: { id: 'benchLoopAll001', path: `bench-loop-all-${process.pid}` },
			one: { id: 'benchLoopOne001', path: `bench-loop-one-${process.pid}` },
		};
		const crashSafeFlows: Record<CrashSafeForm, { id: string; path: string }> = {
			'one node (polls)': flows.node,
			'two nodes': { id: 'benchTwoStep001', path: `bench-two-${process.pid}` },
			'two nodes, progress saved': { id: 'benchTwoStepPr1', path: `bench-two-pr-${process.pid}` },
		};
		// --polling: a node workflow per case, so that none starts from what another learnt.
		const polling = {
			p5: { id: 'benchPoll5000001', path: `bench-poll-5-${process.pid}` },
			p50: { id: 'benchPoll5000050', path: `bench-poll-50-${process.pid}` },
			p5sooner: { id: 'benchPoll5Soon01', path: `bench-poll-5s-${process.pid}` },
			loop: flows.all,
		};
		const ways: DownloadRun['way'][] = [
			'node',
			'HTTP Request (File)',
			'plain stream in n8n',
			'n8n helpers (no node code)',
		];
		const dl = ways.map((way, i) => ({
			way,
			id: `benchDownload00${i}`,
			path: `bench-dl-${i}-${process.pid}`,
		}));
		await n8n.importWorkflows([
			nodeWorkflow(flows.node.id, flows.node.path),
			exampleForBench(
				'http-request-loop-all-together.json',
				flows.all.id,
				sim.baseUrl,
				flows.all.path,
			),
			exampleForBench(
				'http-request-loop-one-at-a-time.json',
				flows.one.id,
				sim.baseUrl,
				flows.one.path,
			),
			...dl.map((d) => downloadWorkflow(d.id, d.path, d.way)),
			twoStepWorkflow(crashSafeFlows['two nodes'].id, crashSafeFlows['two nodes'].path, false),
			twoStepWorkflow(
				crashSafeFlows['two nodes, progress saved'].id,
				crashSafeFlows['two nodes, progress saved'].path,
				true,
			),
			nodeWorkflow(polling.p5.id, polling.p5.path),
			nodeWorkflow(polling.p50.id, polling.p50.path),
			nodeWorkflow(polling.p5sooner.id, polling.p5sooner.path, { checkForResults: 'sooner' }),
		]);
		// --profile: n8n's main process under the inspector, for V8's sampling CPU profiler.
		const inspectPort = profile ? await freePort() : undefined;
		if (inspectPort) n8n.env.NODE_OPTIONS = `--inspect=127.0.0.1:${inspectPort}`;
		await n8n.start();
		const bench = new Bench(n8n, sim);
		await bench.setUp([
			flows.node.id,
			flows.all.id,
			flows.one.id,
			...dl.map((d) => d.id),
			crashSafeFlows['two nodes'].id,
			crashSafeFlows['two nodes, progress saved'].id,
			polling.p5.id,
			polling.p50.id,
			polling.p5sooner.id,
		]);
		say(`n8n pid ${bench.pid}, RSS after start ${mb(procMemory(bench.pid).rss)}`);

		// Warm-up: every workflow once, unmeasured, so that no figure carries n8n's first-run costs
		// (modules loaded on first use, caches, the database's first pages). Not in --quick, whose
		// figures are not comparable anyway.
		if (!quick) {
			const warmUrl = await simFileUrl(sim, 1_000_000);
			const warmTask = sim.tasks().find((t) => t.files.some((f) => f.url === warmUrl));
			const warm = [flows.node, flows.all, flows.one];
			if (argv.includes('--crash-safe'))
				warm.push(crashSafeFlows['two nodes'], crashSafeFlows['two nodes, progress saved']);
			for (const flow of warm)
				await bench.runOnce(
					flow.id,
					flow.path,
					{ rows: rows(1, 'warm-up', '[sim:duration=1000]') },
					120_000,
				);
			for (const d of dl)
				await bench.runOnce(d.id, d.path, { url: warmUrl, taskId: warmTask?.id }, 120_000);
			say(`after the warm-up: RSS ${mb(procMemory(bench.pid).rss)}`);
		}
		const generate = async () => {
			results.generatePath = await generatePath(
				bench,
				sim,
				flows.node,
				dl[0],
				quick ? 1 : 3,
				quick ? sizes[0] : BIG,
				quick ? taskMs : 10_000,
			);
		};
		const profileRun = async (port: number) => {
			const m = await bench.measure(
				flows.node.id,
				flows.node.path,
				{ rows: rows(batchItems, 'data', '[sim:duration=1000]') },
				300_000,
			);
			results.executionDataByNode = {
				rowBytes: m.executionDataBytes,
				jsonBytesByNode: m.jsonBytesByNode,
			};
			say(
				`execution data of the node's form, ${batchItems} items: row ${kb(m.executionDataBytes)}; JSON by node: ${Object.entries(
					m.jsonBytesByNode,
				)
					.map(([k, v]) => `${k} ${kb(v)}`)
					.join(', ')}`,
			);
			results.profiles = await profileDownloads(
				bench,
				sim,
				dl.slice(0, 2),
				port,
				sizes[sizes.length - 1],
			);
		};
		if (!quick && argv.includes('--generate')) {
			await generate();
			return finish(out, results);
		}
		const crashSafe = async () => {
			results.crashSafe = await crashSafeCosts(
				bench,
				crashSafeFlows,
				quick
					? [{ items: 2, taskMs: 1_000 }]
					: [
							{ items: 6, taskMs: CRASH_SAFE_TASK_MS },
							{ items: 50, taskMs: CRASH_SAFE_TASK_MS },
						],
			);
			printCrashSafe(results.crashSafe as CrashSafeRun[]);
		};
		if (!quick && argv.includes('--crash-safe')) {
			await crashSafe();
			return finish(out, results);
		}
		if (!quick && argv.includes('--polling')) {
			// The warm-up above ran the node in its own workflow: these start from nothing learnt.
			results.polling = await pollingComparison(bench, polling, false);
			return finish(out, results);
		}
		if (!quick && inspectPort) {
			await profileRun(inspectPort);
			return finish(out, results);
		}

		const runs: Run[] = [];
		const forms: Array<[Form, { id: string; path: string }]> = [
			['node', flows.node],
			['loop, all together', flows.all],
			['loop, one at a time', flows.one],
		];
		const cases: Array<{ name: string; items: number; markers: string }> = [
			{ name: `1 × ${seconds(taskMs)}`, items: 1, markers: `[sim:duration=${taskMs}]` },
			{
				name: `${batchItems} × ${seconds(taskMs)}`,
				items: batchItems,
				markers: `[sim:duration=${taskMs}]`,
			},
			{
				name: `1 × ${mb(sizes[0])} file`,
				items: 1,
				markers: `[sim:duration=${quick ? taskMs : 10_000}] [sim:size=${sizes[0]}]`,
			},
		];
		// --files: only the file case and the downloads (a second sample of the noisiest figures).
		// --quick: one case (the others differ only in their figures).
		const measured = quick ? cases.slice(0, 1) : argv.includes('--files') ? cases.slice(2) : cases;
		for (const c of measured) {
			for (const [form, flow] of forms) {
				// The one-at-a-time loop takes items × T: measured on a few items, scaled (said so).
				const items =
					form === 'loop, one at a time' && c.items > oneAtATimeItems ? oneAtATimeItems : c.items;
				const load = uptime();
				const m = await bench.measure(
					flow.id,
					flow.path,
					{ rows: rows(items, `${form} ${c.name}`, c.markers) },
					items * (taskMs + 60_000) + 300_000,
				);
				const scale = c.items / items;
				const run: Run = {
					form,
					case: c.name,
					items: c.items,
					wallMs: m.wallMs * scale,
					statusReads: Math.round(m.statusReads * scale),
					submits: Math.round(m.submits * scale),
					fileRequests: Math.round(m.fileRequests * scale),
					executions: m.executions,
					nodeRuns: Math.round(m.nodeRuns * scale),
					executionDataBytes: Math.round(m.executionDataBytes * scale),
					rssGrowthBytes: m.rssGrowthBytes,
					status: m.execution.status,
					...(scale !== 1 ? { extrapolated: true, measuredItems: items } : {}),
				};
				runs.push(run);
				say(
					`${c.name} · ${form}${scale !== 1 ? ` (measured on ${items}, ×${scale})` : ''}: ${seconds(run.wallMs)}, ${run.statusReads} status reads, ${run.nodeRuns} node runs, ${kb(run.executionDataBytes)} execution data, RSS +${mb(run.rssGrowthBytes)}, ${run.status} (load ${load} → ${uptime()})`,
				);
			}
		}
		results.loops = runs;

		const downloads: DownloadRun[] = [];
		const bare: Array<{ bytes: number; ms: number; growth: number }> = [];
		for (const size of sizes) {
			const url = await simFileUrl(sim, size);
			const task = sim.tasks().find((t) => t.files.some((f) => f.url === url));
			for (let rep = 1; rep <= reps; rep++) {
				for (const d of dl) {
					const load = uptime();
					const m = await bench.measure(d.id, d.path, { url, taskId: task?.id }, 600_000);
					const nodeRun = m.runData.Download?.[0] as
						| { executionTime?: number; error?: { message?: string } }
						| undefined;
					if (m.execution.status !== 'success')
						throw new Error(
							`${d.way} download: ${m.execution.status} ${nodeRun?.error?.message ?? ''}`,
						);
					const run: DownloadRun = {
						way: d.way,
						bytes: size,
						rep,
						nodeMs: nodeRun?.executionTime ?? m.wallMs,
						rssGrowthBytes: m.rssGrowthBytes,
					};
					downloads.push(run);
					say(
						`download ${mb(size)} · ${d.way} #${rep}: ${seconds(run.nodeMs)}, RSS +${mb(run.rssGrowthBytes)} (load ${load} → ${uptime()})`,
					);
				}
			}
			// For information only: the plain stream in a small process of its own.
			const b = await plainDownload(url);
			bare.push({ bytes: size, ...b });
			say(
				`download ${mb(size)} · plain stream, bare process (information): ${seconds(b.ms)}, RSS +${mb(b.growth)}`,
			);
		}
		results.downloads = downloads;
		results.bareProcess = bare;
		results.loadAfter = os.loadavg();
		printSummary(runs, downloads, bare);
		if (quick) {
			await generate();
			await crashSafe();
			if (inspectPort) await profileRun(inspectPort);
			results.polling = await pollingComparison(bench, polling, true);
		}
	} finally {
		await n8n.dispose();
		await sim.close();
		removeEmptyRunFolder();
	}
	finish(out, results);
}

function finish(out: string, results: Record<string, unknown>) {
	say(`load average after: ${uptime()}`);
	fs.writeFileSync(out, `${JSON.stringify(results, null, '\t')}\n`);
	fs.writeFileSync(out.replace(/\.json$/, '.txt'), `${printed.join('\n')}\n`);
	say(`results written to ${path.relative(process.cwd(), out)} and its .txt`);
	if (results.quick !== true) regenerateDocs(out);
}

function printSummary(
	runs: Run[],
	downloads: DownloadRun[],
	bare: Array<{ bytes: number; ms: number; growth: number }>,
) {
	say("\n## The node against the users' HTTP Request loops (one n8n process)");
	say(
		table([
			[
				'case',
				'form',
				'wall time',
				'status reads',
				'executions',
				'node runs',
				'execution data',
				'RSS growth',
			],
			...runs.map((r) => [
				r.case,
				r.form + (r.extrapolated ? ` (${r.measuredItems} items, scaled)` : ''),
				seconds(r.wallMs),
				r.statusReads,
				r.executions,
				r.nodeRuns,
				kb(r.executionDataBytes),
				mb(r.rssGrowthBytes),
			]),
		]),
	);
	const ratios: Array<Array<string | number>> = [
		['case', 'vs', 'wall time', 'status reads', 'node runs', 'execution data', 'RSS growth'],
	];
	for (const c of [...new Set(runs.map((r) => r.case))]) {
		const node = runs.find((r) => r.case === c && r.form === 'node');
		if (!node) continue;
		for (const other of runs.filter((r) => r.case === c && r.form !== 'node')) {
			const ratio = (a: number, b: number) => (b > 0 ? round(a / b, 3) : '-');
			ratios.push([
				c,
				other.form,
				ratio(node.wallMs, other.wallMs),
				ratio(node.statusReads, other.statusReads),
				ratio(node.nodeRuns, other.nodeRuns),
				ratio(node.executionDataBytes, other.executionDataBytes),
				ratio(node.rssGrowthBytes, other.rssGrowthBytes),
			]);
		}
	}
	say('\nratios: the node / the loop (below 1: the node uses less)');
	say(table(ratios));
	say('\n## Downloads in the same n8n: time of the downloading node, RSS growth of n8n');
	const sizes = [...new Set(downloads.map((d) => d.bytes))];
	const rowsOut: Array<Array<string | number>> = [
		['file', 'way', 'times', 'RSS growth', 'best time vs HTTP Request'],
	];
	for (const size of sizes) {
		const best = (way: DownloadRun['way']) =>
			Math.min(...downloads.filter((d) => d.bytes === size && d.way === way).map((d) => d.nodeMs));
		for (const way of [...new Set(downloads.map((d) => d.way))]) {
			const mine = downloads.filter((d) => d.bytes === size && d.way === way);
			rowsOut.push([
				mb(size),
				way,
				mine.map((d) => seconds(d.nodeMs)).join(' / '),
				mine.map((d) => mb(d.rssGrowthBytes)).join(' / '),
				round(best(way) / best('HTTP Request (File)'), 2),
			]);
		}
		const b = bare.find((x) => x.bytes === size);
		if (b)
			rowsOut.push([
				mb(size),
				'plain stream, bare process (information only)',
				seconds(b.ms),
				mb(b.growth),
				round(b.ms / best('HTTP Request (File)'), 2),
			]);
	}
	say(table(rowsOut));
}

function printCrashSafe(runs: CrashSafeRun[]) {
	say('\n## The crash-safe layout against one node that polls (issue 39)');
	const mean = (xs: number[]) =>
		xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length, 1) : 0;
	say(
		table([
			[
				'case',
				'form',
				'wall time',
				'status reads',
				'node runs',
				'mean gap between nodes',
				'progress writes',
				'execution data',
				'submitting node',
			],
			...runs.map((r) => [
				r.case,
				r.form,
				seconds(r.wallMs),
				r.statusReads,
				r.nodeRuns,
				`${mean(r.gapsMs)} ms`,
				r.progressWrites,
				kb(r.executionDataBytes),
				`${r.submitNodeMs} ms`,
			]),
		]),
	);
	say(
		'progress writes: one write of the whole execution data per node run (n8n: nodeExecuteAfter → saveExecutionProgress), each at most the final size shown; the mean gap between nodes holds that write.',
	);
}
