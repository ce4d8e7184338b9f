/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// `npm run bench:n8n` and its forms (docs/performance.md) must keep running: their entry runs
// here in quick mode, which starts one n8n and goes through every form (the comparison with the
// users' loops, the downloads, the Generate path phase by phase, the CPU profile) at tiny sizes.
// Nothing here checks a time: the figures are the benchmark's, read by people.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '..', '..');

test('npm run bench:n8n -- --quick runs every form of the benchmark and prints its figures', async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-bench-n8n-quick-'));
	try {
		const out = path.join(dir, 'n8n-quick.json');
		const { code, stdout, stderr } = await new Promise<{
			code: number | null;
			stdout: string;
			stderr: string;
		}>((resolve, reject) => {
			const child = spawn(
				process.execPath,
				[
					path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
					path.join(ROOT, 'bench', 'run.ts'),
					'--n8n',
					'--quick',
					'--out',
					out,
				],
				{ cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] },
			);
			let o = '';
			let e = '';
			child.stdout.on('data', (d: Buffer) => (o += d.toString()));
			child.stderr.on('data', (d: Buffer) => (e += d.toString()));
			child.on('error', reject);
			child.on('close', (c) => resolve({ code: c, stdout: o, stderr: e }));
		});
		expect({ code, stderr: code === 0 ? '' : stderr.slice(-4000) }).toEqual({
			code: 0,
			stderr: '',
		});

		// Each form printed a line or table with figures under its heading (some headings hold
		// figures of their own: only the lines after them count). A table row of the profile
		// ends in its self time in ms.
		const figure = /\d+(\.\d+)? (s|MB|kB)\b|\s\d+$/m;
		const lineAfter = (heading: string) => {
			const lines = stdout.split('\n');
			const i = lines.findIndex((l) => l.startsWith(heading));
			return i < 0 ? '(missing)' : lines.slice(i + 1, i + 5).join('\n');
		};
		for (const heading of [
			"## The node against the users' HTTP Request loops",
			'## Downloads in the same n8n',
			'## The Generate path',
			'## The crash-safe layout',
			'profile, ',
			"## Polling: status reads of the node against the users' all-items loop",
		]) {
			expect({ heading, figures: figure.test(lineAfter(heading)) }).toEqual({
				heading,
				figures: true,
			});
		}
		expect(stdout).not.toMatch(/NaN/);
		const results = JSON.parse(fs.readFileSync(out, 'utf8')) as Record<string, unknown[]>;
		expect(results.loops.length).toBe(3);
		expect(results.downloads.length).toBe(4);
		expect(results.generatePath.length).toBe(1);
		expect(results.crashSafe.length).toBe(3);
		expect(Object.keys(results.profiles)).toEqual(['node', 'HTTP Request (File)']);
		expect(results.polling.length).toBe(2);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});
