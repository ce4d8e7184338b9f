/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// `npm run bench` (docs/performance.md) must keep running: its entry runs here in quick mode
// (tiny sizes and counts), as tools/run.js starts it (tsx, the build in dist/), and every
// benchmark must print its table with figures. Nothing here checks a time: speed targets are
// the benchmark's figures, read by people.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { benchPlan, plannedExecutions } from '../../bench/lib/plan';
import { maxFileSizeMbFor } from '../../bench/lib/workflow';
import {
	DEFAULT_MAX_SUBMISSIONS,
	DEFAULT_TIMEOUT_MINUTES,
} from '../../nodes/MediaGeneration/actions/runOptions';
import { MAX_FILES_PER_TASK, taskLimitsFor } from '../../nodes/shared/transport/downloads';
import { sizeLimitOf } from '../../nodes/shared/transport/fileSizeLimit';
import { FILE_DEADLINE_MS, announcedRefusal } from '../../nodes/shared/transport/fileTransfer';

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '..', '..');

function runBench(
	args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(
			process.execPath,
			[
				path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
				path.join(ROOT, 'bench', 'run.ts'),
				...args,
			],
			{
				cwd: ROOT,
				env: { ...process.env, MGEN_HARNESS_SOURCE: 'dist' },
				stdio: ['ignore', 'pipe', 'pipe'],
			},
		);
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
		child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
		child.on('error', reject);
		child.on('close', (code) => resolve({ code, stdout, stderr }));
	});
}

/** The first data row of the table printed under `heading` (the line after its dashes). */
function firstRow(stdout: string, heading: string): string | undefined {
	const lines = stdout.split('\n');
	const start = lines.findIndex((l) => l.startsWith(heading));
	if (start < 0) return undefined;
	const dashes = lines.findIndex((l, i) => i > start && /^-+( +-+)*$/.test(l));
	return dashes < 0 ? undefined : lines[dashes + 1];
}

describe('npm run bench -- --quick', () => {
	const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-bench-quick-'));
	afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

	it('runs every benchmark and prints its figures', async () => {
		const out = path.join(outDir, 'quick.json');
		const { code, stdout, stderr } = await runBench(['--quick', '--out', out]);
		expect({ code, stderr: code === 0 ? '' : stderr.slice(-4000) }).toEqual({
			code: 0,
			stderr: '',
		});

		const figure = /\d+(\.\d+)? (s|ms|MB|kB|x T|x)\b/;
		const headings = [
			'## 1. Batch',
			'## 1b. Large batches',
			'## 2. Polling',
			'## 2b. Polling',
			'## 2d. Under the service',
			'## 3. Downloads',
			'## 4. Overhead',
		];
		const rows = headings.map((heading) => {
			const row = firstRow(stdout, heading) ?? '(no table)';
			return { heading, row, hasFigure: figure.test(row) };
		});
		expect(rows).toEqual(
			headings.map((heading) => expect.objectContaining({ heading, hasFigure: true })),
		);
		expect(stdout).not.toMatch(/NaN/);
		const results = JSON.parse(fs.readFileSync(out, 'utf8')) as Record<string, unknown>;
		expect(Object.keys(results)).toEqual(
			expect.arrayContaining([
				'machine',
				'batch',
				'largeBatch',
				'polling',
				'pollingLearning',
				'pollingFaults',
				'memory',
				'overhead',
			]),
		);
		expect(fs.readFileSync(out.replace(/\.json$/, '.txt'), 'utf8')).toContain('## 4. Overhead');
	});

	// Issue 37: the full run failed on a per-task limit that the quick run's tiny files never
	// reach. Every execution of the full plan, with the options its workflow gives the node, is
	// held here to the limits the node applies before it reads or submits anything.
	it('every execution of the full `npm run bench` fits every limit the node applies (per file, per task, per execution)', () => {
		const executions = plannedExecutions(benchPlan(false));
		expect(Math.max(...executions.map((e) => e.fileBytes))).toBeGreaterThan(4 * 1024 ** 3);
		const problems: string[] = [];
		for (const e of executions) {
			const say = (what: string) =>
				problems.push(`${e.bench} (${e.items} × ${e.fileBytes} B): ${what}`);
			const mb = typeof e.options.maxFileSizeMb === 'number' ? e.options.maxFileSizeMb : undefined;
			// Per file and per task: what the node decides on each Content-Length (the bench's n8n
			// stores in filesystem mode), the task's files in turn.
			if (e.filesPerTask > MAX_FILES_PER_TASK) say(`${e.filesPerTask} files per task`);
			const task = taskLimitsFor({ maxFileSizeMb: mb }, e.filesPerTask);
			for (let f = 0; f < e.filesPerTask; f++) {
				const refused = announcedRefusal(e.fileBytes, sizeLimitOf(mb, 'filesystem'), task);
				if (refused) say(refused.message);
				task.received += e.fileBytes;
			}
			// Per execution: the spend guard, and the Timeout (and each file's deadline) at a
			// throughput far below any loopback download (20 MB/s).
			const cap = Number(e.options.maxSubmissions ?? DEFAULT_MAX_SUBMISSIONS);
			if (e.items > cap) say(`${e.items} submissions, over Max Submissions per Execution (${cap})`);
			const timeoutMs = Number(e.options.timeoutMinutes ?? DEFAULT_TIMEOUT_MINUTES) * 60_000;
			const transferMs = (e.filesPerTask * e.fileBytes) / 20_000;
			if (e.taskMs + transferMs > timeoutMs) say(`over the node's Timeout (${timeoutMs} ms)`);
			if (e.fileBytes / 20_000 > FILE_DEADLINE_MS) say(`over the per-file deadline`);
		}
		expect(problems).toEqual([]);
	});

	it('the check above fails on a limit the full plan would hit', () => {
		// The per-task total of before issue 37 (4 GiB, whatever Max File Size said) refuses the
		// 5 GB file the memory benchmark downloads.
		const size = Math.max(...plannedExecutions(benchPlan(false)).map((e) => e.fileBytes));
		const fixed = { maxBytes: 4 * 1024 ** 3, received: 0 };
		expect(
			announcedRefusal(size, sizeLimitOf(maxFileSizeMbFor(size), 'filesystem'), fixed)?.message,
		).toMatch(/the task's files together exceed 4\.0 GB/);
	});
});
