// examples/spreadsheet-rows-to-videos.json in a real n8n 2.41.1, stopped the hard way: the n8n
// process running the job is SIGKILLed (an out-of-memory kill, a host that dies) while it waits
// for the videos, or while it sends them. The sheet is the job's ledger: each batch's task IDs
// are in their rows before the next batch is sent, so the next run collects what was paid for
// and sends only rows that never got a task ID. Guide: docs/spreadsheet-to-videos.md.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import { N8nInstance, parseRunJson, removeEmptyRunFolder, tailOf } from './n8n';
import { credentialImport } from './workflows';
import { SHEET_FILE, readSheet, sheetWorkflow, toCsv, type Row } from './sheet';
import { expectEveryRowWithItsVideo, sheetNow, timedSheet } from './sheetChecks';

jest.setTimeout(400_000);

let sim: Simulator;
let n8n: N8nInstance;
let folder: string;
const WF = 'mgenSheetLedger1';
/** Rows sent per batch (the example's Batches of 10): what a stop while sending can pay twice. */
const BATCH = 10;

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-ledger-${process.pid}-secret` });
	n8n = await N8nInstance.create('sheet-ledger');
	folder = path.join(n8n.dir, 'files');
	fs.mkdirSync(folder);
	n8n.env.N8N_RESTRICT_FILE_ACCESS_TO = folder;
	await n8n.explain(async () => {
		await n8n.importCredentials([credentialImport(sim.baseUrl, sim.apiKey)]);
		await n8n.importWorkflows([sheetWorkflow(WF, folder)]);
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

function writeSheet(rows: Row[]) {
	fs.writeFileSync(path.join(folder, SHEET_FILE), toCsv(rows));
	for (const f of fs.readdirSync(folder)) if (f.endsWith('.mp4')) fs.rmSync(path.join(folder, f));
}

async function until(check: () => boolean, what: string, timeoutMs = 120_000) {
	const deadline = Date.now() + timeoutMs;
	while (!check()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 100));
	}
}

/**
 * `n8n execute` of the job, SIGKILLed once `killWhen` holds (as the kernel's OOM killer would:
 * nothing more is saved). Returns when the process is gone.
 */
async function runAndKill(killWhen: () => boolean, what: string): Promise<void> {
	let pid: number | undefined;
	const running = n8n.cli(['execute', `--id=${WF}`, '--rawOutput'], {
		label: 'execute-killed',
		allowFailure: true,
		timeoutMs: 300_000,
		onSpawn: (p) => {
			pid = p;
		},
	});
	let missed: unknown;
	try {
		await until(killWhen, what);
	} catch (error) {
		missed = error;
	}
	try {
		if (pid) process.kill(pid, 'SIGKILL');
	} catch {
		// Gone already: the run ended before the moment came (the wait's error says so).
	}
	if (missed) throw missed;
	const result = await running;
	expect(result.code).not.toBe(0);
}

/** The next run (the next night, or Execute workflow again), to its end. */
async function nextRun() {
	const result = await n8n.cli(['execute', `--id=${WF}`, '--rawOutput'], {
		label: 'execute-next',
		allowFailure: true,
		timeoutMs: 300_000,
	});
	const run = parseRunJson(result.stdout);
	if (result.code !== 0 || !run)
		throw new Error(`the next run failed (exit ${result.code})\n${tailOf(result.log)}`);
	expect(run.data.resultData.error).toBeUndefined();
	expect(result.stdout + result.stderr).not.toContain(sim.apiKey);
}

const promptsSent = (from: number) =>
	sim
		.tasks()
		.slice(from)
		.map((t) => t.prompt);

test('killed (SIGKILL) while it waits for the videos: the next run sends nothing again and every row ends with its file', () =>
	n8n.explain(async () => {
		const rows = timedSheet(25_000);
		writeSheet(rows);
		const before = sim.tasks().length;
		// Killed once every row has its task ID in the sheet, long before any video is done.
		await runAndKill(
			() =>
				sheetNow(folder).filter((r) => r.task_id && r.status === 'submitted').length ===
				rows.length,
			'every row submitted and written',
		);
		const sent = promptsSent(before);
		expect(sent.sort()).toEqual(rows.map((r) => r.prompt).sort());
		// No video was done yet when n8n was killed.
		const killedAt = Date.now();
		expect(sim.tasks().filter((t) => t.createdAt + t.durationMs <= killedAt)).toHaveLength(0);
		// The sheet says what was paid for: each row's task, "submitted".
		for (const row of readSheet(folder)) {
			expect(row.status).toBe('submitted');
			expect(sim.task(row.task_id)?.prompt).toBe(rows.find((r) => r.sku === row.sku)!.prompt);
		}

		await nextRun();
		expect(promptsSent(before + sent.length)).toEqual([]);
		expectEveryRowWithItsVideo(folder, rows, sim);
	}));

test(`killed (SIGKILL) while it sends the second batch: the next run pays again at most the ${BATCH} rows of that batch, and every row ends with its file`, () =>
	n8n.explain(async () => {
		// Rows 11-15 get their answer late (the service is slow to accept them); 16-20 at once.
		const late = (_row: Row, i: number) => (i >= BATCH && i < BATCH + 5 ? ' (late)' : '');
		const rows = timedSheet(3_000, late);
		writeSheet(rows);
		sim.faults.add({ endpoint: 'submit', kind: 'slow', delayMs: 30_000, match: '(late)' });
		const before = sim.tasks().length;
		const secondBatch = rows.slice(BATCH).map((r) => r.prompt);
		// Killed while the second batch is in flight: its quick rows accepted, nothing of it written.
		await runAndKill(
			() =>
				sim
					.tasks()
					.slice(before)
					.filter((t) => secondBatch.includes(t.prompt)).length >= 5,
			'the second batch partly accepted',
		);
		const written = readSheet(folder);
		expect(written.filter((r) => r.task_id).map((r) => r.sku)).toEqual(
			rows.slice(0, BATCH).map((r) => r.sku),
		);
		sim.faults.clear();
		const sentBefore = sim.tasks().length;

		await nextRun();
		expectEveryRowWithItsVideo(folder, rows, sim);
		const all = promptsSent(before);
		const twice = rows.filter((r) => all.filter((p) => p === r.prompt).length > 1);
		// Paid twice: only rows of the batch in flight, never more than a batch; the first batch once.
		expect(twice.length).toBeGreaterThan(0);
		expect(twice.length).toBeLessThanOrEqual(BATCH);
		for (const r of twice) expect(secondBatch).toContain(r.prompt);
		expect(all.filter((p) => p === rows[0].prompt)).toHaveLength(1);
		process.stdout.write(
			`[e2e] sheet job killed while sending batch 2: ${sentBefore - before} tasks before the kill, ${sim.tasks().length - sentBefore} sent by the next run, ${twice.length} rows paid twice (at most ${BATCH})\n`,
		);
	}));

test('the status column tells a row refused for free ("not sent", sent again next run) from one whose answer was lost ("may have been charged", left alone)', () =>
	n8n.explain(async () => {
		const rows = timedSheet(500, (_row, i) => (i === 1 ? ' (lost answer)' : ''));
		rows[2].prompt = '';
		writeSheet(rows);
		sim.faults.add({ endpoint: 'submit', kind: 'drop', when: 'after', match: '(lost answer)' });
		const before = sim.tasks().length;
		await nextRun();
		sim.faults.clear();
		const first = readSheet(folder);
		expect(first[1]).toMatchObject({
			status: 'may have been charged',
			task_id: '',
			video_file: '',
		});
		expect(first[1].error).toMatch(/may have been accepted/);
		expect(first[2]).toMatchObject({ status: 'not sent', task_id: '', video_file: '' });
		expect(first[2].error).toMatch(/prompt/i);
		// The service did create the lost row's task: it was charged.
		expect(promptsSent(before).filter((p) => p === rows[1].prompt)).toHaveLength(1);
		expect(first.filter((r) => r.status === 'finished')).toHaveLength(rows.length - 2);

		// The next run sends neither: the refused row is refused again before anything is sent.
		const second = sim.tasks().length;
		await nextRun();
		// (Only this sheet's prompts: the previous test's late submissions may still arrive.)
		expect(promptsSent(second).filter((p) => rows.some((r) => r.prompt === p))).toEqual([]);
		expect(readSheet(folder)[1].status).toBe('may have been charged');
	}));
