// The table job's suite (examples/table-rows-to-videos.json and its batch sub-workflow) in a real
// n8n: one run, two runs at once, a row whose files expired. The e2e layer runs it on n8n 2.41.1
// with the crash cases beside it (table-job.test.ts), the compat layer on the oldest supported n8n
// (test/compat/table-job.test.ts). Guide: docs/spreadsheet-to-videos.md.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import { client } from '../simulator/client';
import { activateWorkflows } from './executions-api';
import { N8nInstance, createOwnerApiKey, listExecutions, removeEmptyRunFolder } from './n8n';
import {
	BATCH_ID,
	BATCH_ROWS,
	Table,
	expectRowVideo,
	expectSendingOverlapped,
	tableWorkflows,
	type TableRow,
} from './table';
import { timedSheet } from './sheet';
import { credentialImport } from './workflows';

export const WF = 'mgenTableJob0001';
/** Rows one batch execution takes (the batch workflow's Rows to Send limit). */
export const BATCH = BATCH_ROWS;

/** What the suite started, for the cases a test file adds beside it (read inside a test). */
export interface TableJobContext {
	readonly sim: Simulator;
	readonly n8n: N8nInstance;
	readonly key: string;
	readonly table: Table;
	readonly folder: string;
	readonly hook: string;
	until<T>(what: string, check: () => Promise<T | undefined | false>, ms?: number): Promise<T>;
	sampleRows(count: number, durationMs: number, tag: string): TableRow[];
	fresh(rows: TableRow[]): Promise<void>;
	runs(count: number): Promise<void>;
	ended(total: number, ms?: number): Promise<void>;
	submissionsOf(prompt: unknown): number;
	expectVideo(row: TableRow): void;
}

export function tableJobSuite(options: { name: string; n8nVersion?: string }): TableJobContext {
	const HOOK = `${options.name}-${process.pid}`;

	let sim: Simulator;
	let n8n: N8nInstance;
	let key: string;
	let table: Table;
	let folder: string;

	beforeAll(async () => {
		sim = await startSimulator({ apiKey: `e2e-table-${process.pid}-secret` });
		n8n = await N8nInstance.create(options.name, { n8nVersion: options.n8nVersion });
		folder = path.join(n8n.dir, 'files');
		fs.mkdirSync(folder);
		n8n.env.N8N_RESTRICT_FILE_ACCESS_TO = folder;
		await n8n.explain(async () => {
			await n8n.importCredentials([credentialImport(sim.baseUrl, sim.apiKey)]);
			await n8n.importWorkflows(tableWorkflows(WF, folder, HOOK));
			await n8n.start();
			key = await createOwnerApiKey(n8n);
			table = await Table.create(n8n, key);
			await activateWorkflows(n8n, key, [BATCH_ID, WF]);
		});
	});

	afterAll(async () => {
		await n8n?.dispose();
		await sim?.close();
		removeEmptyRunFolder();
	});

	async function until<T>(what: string, check: () => Promise<T | undefined | false>, ms = 180_000) {
		const deadline = Date.now() + ms;
		for (;;) {
			const v = await check();
			if (v !== undefined && v !== false) return v;
			if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
			await new Promise((r) => setTimeout(r, 250));
		}
	}

	/** Rows for the table: the shipped sample's products, `count` of them, each video `durationMs`. */
	function sampleRows(count: number, durationMs: number, tag: string): TableRow[] {
		const sample = timedSheet(durationMs);
		return Array.from({ length: count }, (_, i) => {
			const s = sample[i % sample.length];
			return { sku: `${s.sku}-${tag}-${i}`, product: s.product, prompt: `${s.prompt} ${tag}-${i}` };
		});
	}

	async function fresh(rows: TableRow[]) {
		await table.clear();
		for (const f of fs.readdirSync(folder)) fs.rmSync(path.join(folder, f), { force: true });
		await table.insert(rows);
	}

	/** Starts `count` production runs at the same moment; resolves when every one has ended. */
	async function runs(count: number) {
		const before = (await listExecutions(n8n, key, WF, undefined, false)).length;
		const answers = await Promise.all(
			Array.from({ length: count }, () =>
				fetch(`${n8n.baseUrl}/webhook/${HOOK}`, { method: 'POST', body: '{}' }),
			),
		);
		for (const a of answers) expect(a.status).toBe(200);
		await ended(before + count);
	}

	/** Waits until `total` executions of the main workflow exist and none is running. */
	async function ended(total: number, ms?: number) {
		await until(
			`${total} runs of the job to end`,
			async () => {
				const all = await listExecutions(n8n, key, WF, undefined, false);
				return (
					all.length >= total && all.every((e) => e.status !== 'running' && e.status !== 'new')
				);
			},
			ms,
		);
	}

	const submissionsOf = (prompt: unknown) => sim.tasks().filter((t) => t.prompt === prompt).length;

	const expectVideo = (row: TableRow) => expectRowVideo(row, folder, sim);

	test('one run: every row ends with its video in the folder and "finished"; a row refused for free says "not sent", a failed video "failed", and the next run sends neither again', async () => {
		const rows = sampleRows(12, 1_500, 'one');
		rows[1].prompt = '';
		rows[2].prompt = `${rows[2].prompt} [sim:fail=The prompt was flagged]`;
		await fresh(rows);
		await runs(1);
		const after = await table.rows();
		expect(after).toHaveLength(rows.length);
		expect(after[1]).toMatchObject({ status: 'not sent', task_id: null, video_file: null });
		expect(String(after[1].error)).toMatch(/prompt/i);
		expect(after[2]).toMatchObject({ status: 'failed', video_file: null });
		expect(String(after[2].error)).toContain('The prompt was flagged');
		for (const row of after.filter((_, i) => i !== 1 && i !== 2)) expectVideo(row);
		for (const row of rows) expect(submissionsOf(row.prompt)).toBe(row.prompt ? 1 : 0);

		const tasks = sim.tasks().length;
		await runs(1);
		expect(sim.tasks().length).toBe(tasks);
		expect((await table.rows())[2].status).toBe('failed');
	});

	test(`two runs started at the same moment (a duplicate schedule fire, Execute workflow during the nightly run): each row is paid once and ends with its video`, async () => {
		const rows = sampleRows(2 * BATCH + 20, 1_000, 'twice');
		await fresh(rows);
		// Submissions answered after 150 ms: sending the table takes seconds, so the two runs'
		// sending overlaps however the machine schedules their starts.
		const slow = sim.faults.add({
			endpoint: 'submit',
			kind: 'slow',
			delayMs: 150,
			match: 'twice-',
		});
		try {
			await runs(2);
		} finally {
			sim.faults.remove(slow);
		}
		const after = await table.rows();
		for (const row of after) expectVideo(row);
		const twice = rows.filter((r) => submissionsOf(r.prompt) !== 1);
		expect(twice).toEqual([]);
		// Otherwise this shows nothing about two at once: the two runs were sending at the same time.
		const [a, b] = await listExecutions(n8n, key, WF, undefined, true);
		const seen = expectSendingOverlapped([a, b], rows.length);
		process.stdout.write(
			`[e2e] table job, 2 runs at once: ${rows.length} rows, ${sim.tasks().filter((t) => t.prompt.includes('twice-')).length} submissions; ${seen}\n`,
		);
	});

	test('a row whose task finished more than 24 hours ago gets "expired" and its reason; nothing is sent again', async () => {
		const hour = 3_600_000;
		sim.clock.advance(-25 * hour);
		let taskId = '';
		try {
			taskId = await client(sim).create('vidmodel-1.5-pro', {
				prompt: 'an old video [sim:duration=1000]',
				aspect_ratio: '16:9',
				duration: 4,
			});
		} finally {
			sim.clock.advance(25 * hour);
		}
		await fresh([
			{
				sku: 'OLD-1',
				product: 'old',
				prompt: 'an old video',
				status: 'submitted',
				task_id: taskId,
			},
		]);
		const tasks = sim.tasks().length;
		await runs(1);
		const [row] = await table.rows();
		expect(row).toMatchObject({ status: 'expired', task_id: taskId, video_file: null });
		expect(String(row.error)).toMatch(/24 hours/);
		expect(sim.tasks().length).toBe(tasks);
	});

	return {
		get sim() {
			return sim;
		},
		get n8n() {
			return n8n;
		},
		get key() {
			return key;
		},
		get table() {
			return table;
		},
		get folder() {
			return folder;
		},
		hook: HOOK,
		until,
		sampleRows,
		fresh,
		runs,
		ended,
		submissionsOf,
		expectVideo,
	};
}
