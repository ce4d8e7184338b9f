/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// `npm run bench` (docs/performance.md) must keep running: its entry runs here in quick mode
// (tiny sizes and counts), as tools/run.js starts it (tsx, the build in dist/), and every
// benchmark must print its table with figures. Nothing here checks a time: speed targets are
// the benchmark's figures, read by people.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { memoryPlan } from '../../bench/lib/memory';
import { maxFileSizeMbFor } from '../../bench/lib/workflow';
import { DEFAULT_MAX_FILE_SIZE_MB } from '../../nodes/shared/transport/fileSizeLimit';

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
				'memory',
				'overhead',
			]),
		);
		expect(fs.readFileSync(out.replace(/\.json$/, '.txt'), 'utf8')).toContain('## 4. Overhead');
	});

	it("sets Max File Size for every file the full memory benchmark downloads (5 GB is over filesystem mode's default)", () => {
		const sizes = memoryPlan(false).map((p) => p.size);
		expect(Math.max(...sizes)).toBeGreaterThan(DEFAULT_MAX_FILE_SIZE_MB.filesystem * 1024 * 1024);
		for (const size of sizes)
			expect(maxFileSizeMbFor(size) * 1024 * 1024).toBeGreaterThanOrEqual(size);
	});
});
