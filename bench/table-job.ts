// `npm run bench -- --table`: the nightly table job (examples/table-rows-to-videos.json and its
// batch sub-workflow) on 500 and 5,000 rows in ONE real n8n 2.41.1 process (n8n start, this
// package installed as a community package, SQLite, the Data Table "products" in it) against the
// simulator, video tasks of 5 s (issue 49: "a night of 5,000 rows on a small n8n").
//
// Per size: the job's wall time (n8n's own startedAt → stoppedAt of the run), against the floor
// of the same work: the same number of tasks submitted 10 at a time (Generate Videos' Max Tasks
// in Flight), waited for and their files downloaded 50 at a time (Wait for Videos') and written
// to disk by a plain Node loop against the same simulator, right after the job, with nothing
// between (no n8n, no table). Then n8n's memory (peak resident size of its process tree, sampled,
// and of the main process, VmHWM reset before the run) and the saved execution data (the
// `execution_data` rows in n8n's SQLite: the run itself, and its batch executions: the largest
// and all together). Each row's submissions are counted at the simulator: each row once.
// `--rows 200,2000` other sizes, `--task-ms` another task time, `--quick` 60 rows (proves it runs,
// writes nothing into bench/results/), `--out FILE` the results elsewhere. Figures only: nothing
// here passes or fails.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../test/simulator';
import { client, type TaskView } from '../test/simulator/client';
import { activateWorkflows } from '../test/e2e/executions-api';
import {
	N8nInstance,
	ROOT,
	createOwnerApiKey,
	listExecutions,
	removeEmptyRunFolder,
	sampleMemory,
} from '../test/e2e/n8n';
import { BATCH_ID, Table, tableWorkflows, type TableRow } from '../test/e2e/table';
import { timedSheet } from '../test/e2e/sheet';
import { credentialImport } from '../test/e2e/workflows';
import { npmRun, provenance } from './lib/provenance';
import { withDatabase } from './lib/sqlite';
import { mb, round, seconds, table as textTable } from './lib/stats';
import { regenerateDocs } from '../tools/docs-figures';

const WF = 'mgenBenchTable01';
const HOOK = `bench-table-${process.pid}`;
/** Generate Videos' and Wait for Videos' Max Tasks in Flight in the batch workflow. */
const SUBMIT_CONCURRENCY = 10;
const DOWNLOAD_CONCURRENCY = 50;
/** Rows one batch execution takes (Rows to Send's and Rows to Collect's limit). */
const BATCH_ROWS = 50;

export interface TableJobRun {
	rows: number;
	taskMs: number;
	/** n8n's startedAt → stoppedAt of the job's execution. */
	wallMs: number;
	/** The plain loop's time for the same submissions, waits and downloads. */
	floorMs: number;
	ratio: number;
	/**
	 * Issue 49's floor, which its figures of the CSV job (300 rows in 95 s: 3.2x) were measured
	 * against: the rows collected 50 at a time, each batch taking one task time.
	 */
	batchFloorMs: number;
	batchRatio: number;
	status: string;
	submissions: number;
	rowsPaidTwice: number;
	finished: number;
	batchExecutions: number;
	/** Bytes of the job's own `execution_data` row. */
	jobExecutionBytes: number;
	largestBatchExecutionBytes: number;
	allExecutionBytes: number;
	/** Resident size of n8n's process tree (n8n and its task runners) just before the run. */
	treeIdleBytes: number;
	/** Peak resident size of n8n's process tree during the run, sampled every 250 ms. */
	treePeakBytes: number;
	/** VmHWM of n8n's main process (reset before the run) minus its resident size then. */
	mainPeakGrowthBytes: number;
}

const out: string[] = [];
const say = (...lines: string[]) => {
	for (const l of lines) {
		out.push(l);
		process.stdout.write(`${l}\n`);
	}
};
const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rowsFor(count: number, taskMs: number, tag: string): TableRow[] {
	const sample = timedSheet(taskMs);
	return Array.from({ length: count }, (_, i) => {
		const s = sample[i % sample.length];
		return { sku: `${s.sku}-${tag}-${i}`, product: s.product, prompt: `${s.prompt} ${tag}-${i}` };
	});
}

/** Execution ids above `after`, with the workflow and the bytes of their saved data. */
function savedExecutions(dbFile: string, after: number) {
	return withDatabase(dbFile, (db) =>
		db
			.prepare(
				'SELECT e.id AS id, e.workflowId AS workflowId, length(CAST(d.data AS BLOB)) + length(CAST(d.workflowData AS BLOB)) AS bytes FROM execution_entity e JOIN execution_data d ON d.executionId = e.id WHERE e.id > ?',
			)
			.all(after)
			.map((r) => ({ id: Number(r.id), workflowId: String(r.workflowId), bytes: Number(r.bytes) })),
	);
}

/** Runs `fn` on every item, at most `limit` at a time. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
	let next = 0;
	await Promise.all(
		Array.from({ length: Math.min(limit, items.length) }, async () => {
			while (next < items.length) await fn(items[next++]);
		}),
	);
}

/**
 * The floor: the same service work as the job's, with nothing between. The tasks are submitted
 * 10 at a time; once all are in, each is waited for (a status read when its time is up, then
 * every 250 ms) and its file downloaded and written, 50 at a time.
 */
async function floor(sim: Simulator, rows: TableRow[], dir: string): Promise<number> {
	const api = client(sim);
	fs.rmSync(dir, { recursive: true, force: true });
	fs.mkdirSync(dir, { recursive: true });
	const started = Date.now();
	const ids: string[] = [];
	// What Generate Videos submits for a row (its model and panel in the batch workflow).
	await pool(rows, SUBMIT_CONCURRENCY, async (row) => {
		ids.push(
			await api.create('vidmodel-1.5-pro', {
				prompt: `${row.prompt} floor`,
				aspect_ratio: '16:9',
				duration: 4,
				resolution: '720p',
			}),
		);
	});
	await pool(ids, DOWNLOAD_CONCURRENCY, async (id) => {
		for (;;) {
			const { data } = await api.status(id);
			const task = (data as { data: TaskView }).data;
			if (task.status === 'finished' && task.files?.[0]) {
				const res = await fetch(task.files[0].file_url);
				fs.writeFileSync(path.join(dir, `${id}.mp4`), Buffer.from(await res.arrayBuffer()));
				return;
			}
			if (task.status === 'failed') throw new Error(`floor task ${id} failed`);
			await wait(250);
		}
	});
	return Date.now() - started;
}

async function runSize(ctx: {
	sim: Simulator;
	n8n: N8nInstance;
	key: string;
	table: Table;
	folder: string;
	rows: number;
	taskMs: number;
}): Promise<TableJobRun> {
	const { sim, n8n, key, table, folder } = ctx;
	const tag = `bench${ctx.rows}`;
	const rows = rowsFor(ctx.rows, ctx.taskMs, tag);
	await table.clear();
	for (const f of fs.readdirSync(folder)) fs.rmSync(path.join(folder, f), { force: true });
	await table.insert(rows);
	const dbFile = path.join(n8n.userFolder, '.n8n', 'database.sqlite');
	const lastId = Math.max(0, ...savedExecutions(dbFile, 0).map((e) => e.id));
	const before = new Set((await listExecutions(n8n, key, WF, undefined, false)).map((e) => e.id));

	const pid = n8n.serverPid!;
	fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
	const baseRss =
		Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) *
		1024;
	const idle = sampleMemory(pid, 250).stop().treePeak;
	const memory = sampleMemory(pid, 250);
	const answer = await fetch(`${n8n.baseUrl}/webhook/${HOOK}`, { method: 'POST', body: '{}' });
	await answer.text();
	if (answer.status !== 200) throw new Error(`the job's webhook answered HTTP ${answer.status}`);
	let job;
	for (;;) {
		const mine = (await listExecutions(n8n, key, WF, undefined, false)).find(
			(e) => !before.has(e.id),
		);
		if (mine && !['new', 'running', 'waiting'].includes(mine.status)) {
			job = mine;
			break;
		}
		await wait(1000);
	}
	memory.sample();
	const mem = memory.stop();
	const wallMs = Date.parse(job.stoppedAt!) - Date.parse(job.startedAt!);

	const after = await table.rows();
	const byPrompt = new Map<unknown, number>();
	for (const t of sim
		.tasks()
		.filter((t) => t.prompt.includes(`${tag}-`) && !t.prompt.endsWith(' floor')))
		byPrompt.set(t.prompt, (byPrompt.get(t.prompt) ?? 0) + 1);
	const saved = savedExecutions(dbFile, lastId);
	const batches = saved.filter((e) => e.workflowId === BATCH_ID);
	const floorMs = await floor(sim, rows, path.join(os.tmpdir(), `mgen-bench-floor-${process.pid}`));
	const run: TableJobRun = {
		rows: ctx.rows,
		taskMs: ctx.taskMs,
		wallMs,
		floorMs,
		ratio: round(wallMs / floorMs, 2),
		batchFloorMs: Math.ceil(ctx.rows / BATCH_ROWS) * ctx.taskMs,
		batchRatio: round(wallMs / (Math.ceil(ctx.rows / BATCH_ROWS) * ctx.taskMs), 2),
		status: job.status,
		submissions: [...byPrompt.values()].reduce((a, b) => a + b, 0),
		rowsPaidTwice: [...byPrompt.values()].filter((n) => n > 1).length,
		finished: after.filter((r) => r.status === 'finished').length,
		batchExecutions: batches.length,
		jobExecutionBytes: saved.find((e) => e.id === Number(job.id))?.bytes ?? 0,
		largestBatchExecutionBytes: Math.max(0, ...batches.map((e) => e.bytes)),
		allExecutionBytes: saved.reduce((a, e) => a + e.bytes, 0),
		treeIdleBytes: idle,
		treePeakBytes: mem.treePeak,
		mainPeakGrowthBytes: Math.max(0, mem.mainPeak - baseRss),
	};
	say(
		`${run.rows} rows × ${seconds(run.taskMs)}: ${seconds(run.wallMs)} (floor ${seconds(run.floorMs)}, ×${run.ratio}; batches × T ${seconds(run.batchFloorMs)}, ×${run.batchRatio}), ${run.status}; ${run.submissions} submissions, ${run.rowsPaidTwice} rows paid twice, ${run.finished} finished; ${run.batchExecutions} batch executions (largest ${kb(run.largestBatchExecutionBytes)}), the run's own ${kb(run.jobExecutionBytes)}; n8n tree ${mb(run.treeIdleBytes)} before, peak ${mb(run.treePeakBytes)}, main +${mb(run.mainPeakGrowthBytes)} (load ${os
			.loadavg()
			.map((l) => l.toFixed(2))
			.join(' ')})`,
	);
	return run;
}

export async function main(argv: string[]) {
	const arg = (name: string) => {
		const i = argv.findIndex((a) => a === name || a.startsWith(`${name}=`));
		if (i < 0) return undefined;
		return argv[i].includes('=') ? argv[i].slice(name.length + 1) : argv[i + 1];
	};
	const quick = argv.includes('--quick');
	const sizes = (arg('--rows') ?? (quick ? '60' : '500,5000')).split(',').map(Number);
	const taskMs = Number(arg('--task-ms') ?? 5000);
	const outFile = path.resolve(
		arg('--out') ??
			(quick
				? path.join(os.tmpdir(), `mgen-bench-table-${process.pid}.json`)
				: path.join(ROOT, 'bench', 'results', 'table-job.json')),
	);
	const sim = await startSimulator({ apiKey: `bench-table-${process.pid}-secret` });
	const n8n = await N8nInstance.create('bench-table');
	const folder = path.join(n8n.dir, 'files');
	fs.mkdirSync(folder);
	n8n.env.N8N_RESTRICT_FILE_ACCESS_TO = folder;
	const runs: TableJobRun[] = [];
	try {
		await n8n.importCredentials([credentialImport(sim.baseUrl, sim.apiKey)]);
		await n8n.importWorkflows(tableWorkflows(WF, folder, HOOK));
		await n8n.start();
		const key = await createOwnerApiKey(n8n);
		const table = await Table.create(n8n, key);
		await activateWorkflows(n8n, key, [BATCH_ID, WF]);
		say(
			`## Table job: ${sizes.join(' and ')} rows in one n8n ${n8n.install.version} (SQLite), video tasks of ${seconds(taskMs)}, against the floor of the same work`,
		);
		for (const rows of sizes)
			runs.push(await runSize({ sim, n8n, key, table, folder, rows, taskMs }));
	} finally {
		await n8n.dispose();
		await sim.close();
		removeEmptyRunFolder();
	}
	say(
		'',
		textTable([
			[
				'rows',
				'task',
				'wall time',
				'floor',
				'wall / floor',
				'batches × T',
				'wall / batches × T',
				'submissions',
				'rows paid twice',
				'finished',
				'batch executions',
				'largest batch execution',
				"the run's own execution",
				'all execution data',
				'n8n tree before',
				'n8n tree peak',
				'main process growth',
			],
			...runs.map((r) => [
				r.rows,
				seconds(r.taskMs),
				seconds(r.wallMs),
				seconds(r.floorMs),
				r.ratio,
				seconds(r.batchFloorMs),
				r.batchRatio,
				r.submissions,
				r.rowsPaidTwice,
				r.finished,
				r.batchExecutions,
				kb(r.largestBatchExecutionBytes),
				kb(r.jobExecutionBytes),
				mb(r.allExecutionBytes),
				mb(r.treeIdleBytes),
				mb(r.treePeakBytes),
				mb(r.mainPeakGrowthBytes),
			]),
		]),
		'',
		`floor: the same tasks submitted ${SUBMIT_CONCURRENCY} at a time, waited for, their files downloaded and written ${DOWNLOAD_CONCURRENCY} at a time by a plain Node loop against the same simulator, right after the job.`,
		`batches × T: the rows collected ${BATCH_ROWS} at a time, one task time each (the floor issue 49 measured the CSV job against), computed.`,
	);
	const results = {
		...provenance(npmRun('bench', ['--table', ...argv])),
		date: new Date().toISOString(),
		quick,
		machine: { cpus: os.cpus().length, memoryBytes: os.totalmem() },
		runs,
	};
	fs.mkdirSync(path.dirname(outFile), { recursive: true });
	fs.writeFileSync(outFile, `${JSON.stringify(results, null, '\t')}\n`);
	fs.writeFileSync(outFile.replace(/\.json$/, '.txt'), `${out.join('\n')}\n`);
	say(`results: ${path.relative(process.cwd(), outFile)}`);
	if (!quick) regenerateDocs(outFile);
}
