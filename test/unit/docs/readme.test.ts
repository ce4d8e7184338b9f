/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply; it reads README.md and docs/ from disk */
// README.md is written for a no-code n8n user first (issue 38): what the nodes do in their words,
// then Installation, with no developer terms before it; the two commands a clone needs stay in
// it; every file it links exists. And the answers the README, the docs and the panel give about
// the same setting stay the same (Timeout, Max Tasks in Flight, Retry On Fail).
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INodeProperties } from 'n8n-workflow';

import { MediaGeneration } from '../../../nodes/MediaGeneration/MediaGeneration.node';

const ROOT = path.join(__dirname, '..', '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const readme = read('README.md');
const lines = readme.split('\n');

/** Words a user who has never opened a terminal would not know (checked case-insensitively). */
const DEVELOPER_TERMS = [
	'npm',
	'node.js',
	'verdaccio',
	'redis',
	'postgres',
	'soak',
	'environment variable',
	'sha512',
	'checksum',
	'hmac',
	'git',
	'clone',
	'repository',
	'simulator',
	'typescript',
	'json',
	'cli',
	'docker',
	'webhook',
	'task_id',
	'zod',
	'n8n-workflow',
];

describe('README.md for an n8n user', () => {
	const installationAt = lines.indexOf('## Installation');
	const before = lines.slice(0, installationAt).join('\n');

	it('reaches Installation within its first 60 lines', () => {
		expect(installationAt).toBeGreaterThan(0);
		expect(installationAt).toBeLessThan(60);
	});

	it('uses no developer terms, code or settings names before Installation', () => {
		const found = DEVELOPER_TERMS.filter((term) =>
			new RegExp(`\\b${term.replace('.', '\\.')}\\b`, 'i').test(before),
		);
		expect(found).toEqual([]);
		// No code, no setting names in capitals (N8N_…), no commands.
		expect(before).not.toMatch(/`|```|\b[A-Z0-9]+_[A-Z0-9_]+\b/);
	});

	it('keeps the order the user needs: Installation, the three jobs, Operations, Credentials, then trying it without n8n', () => {
		const order = [
			'## Installation',
			'## Three jobs, step by step',
			'## Operations',
			'## Credentials',
			'## Try it without n8n',
		];
		const at = order.map((h) => lines.indexOf(h));
		expect(at.every((i) => i > 0)).toBe(true);
		expect([...at].sort((a, b) => a - b)).toEqual(at);
	});

	it('keeps the two commands a clone runs (the demo and every test), at most 300 lines', () => {
		const block =
			/```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Try it without n8n')))?.[1] ?? '';
		const commands = block
			.split('\n')
			.map((l) => l.replace(/#.*/, '').trim())
			.filter(Boolean);
		expect(commands).toEqual(['npm run demo', 'npm test']);
		expect(lines.length - (lines[lines.length - 1] === '' ? 1 : 0)).toBeLessThanOrEqual(300);
	});

	it('links only to files that exist', () => {
		const targets = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)|src="([^"]+)"/g)]
			.map((m) => m[1] ?? m[2])
			.filter((t) => !/^[a-z]+:/.test(t));
		expect(targets.length).toBeGreaterThan(10);
		expect(targets.filter((t) => !fs.existsSync(path.join(ROOT, t)))).toEqual([]);
	});
});

describe('one answer everywhere: the panel, README.md and docs/ say the same', () => {
	const options = new MediaGeneration().description.properties
		.filter((p) => p.name === 'options')
		.flatMap((p) => (p.options ?? []) as INodeProperties[]);
	const panel = (name: string) => {
		const found = [...new Set(options.filter((o) => o.name === name).map((o) => o.description))];
		expect(found).toHaveLength(1);
		return String(found[0]);
	};
	const waiting = read('docs/waiting.md');

	it('Timeout: per item, counted from its own start; with Park Until Callbacks one deadline for the whole batch', () => {
		const timeoutRow = (text: string) => text.split('\n').find((l) => /^\| Timeout/.test(l)) ?? '';
		for (const text of [panel('timeoutMinutes'), timeoutRow(readme), timeoutRow(waiting)]) {
			expect(text).toMatch(/per item/i);
			expect(text).toMatch(/counted from its own start/);
			expect(text).toMatch(/one deadline for the whole batch/i);
		}
	});

	it('Max Tasks in Flight: the others wait for a free slot, and a batch takes about (items ÷ Max Tasks in Flight) × one task', () => {
		expect(panel('maxConcurrentTasks')).toMatch(
			/wait for a free slot.*\(items ÷ this\) × one task/,
		);
		expect(readme).toMatch(/\(items ÷ Max\s+Tasks in Flight\) × one task's time/);
		expect(waiting).toMatch(/\(N ÷ Max Tasks in Flight\) × one task's time/);
		// Nowhere a batch of any size "in the time of one".
		for (const file of ['README.md', 'docs/waiting.md', 'docs/editor.md', 'docs/performance.md']) {
			expect(read(file)).not.toMatch(
				/N tasks take about as long as the slowest|in the time of one/i,
			);
		}
	});

	it('Retry On Fail: safe to turn on, never "leave it off"', () => {
		for (const file of [
			'README.md',
			'docs/editor.md',
			'docs/reliability.md',
			'docs/waiting.md',
			'docs/spreadsheet-to-videos.md',
		]) {
			expect(read(file)).not.toMatch(/leave[^.]*retry on fail[^.]*off/i);
		}
		expect(readme).toMatch(/Retry On Fail\*\* \(safe to turn on\)/);
		expect(read('docs/editor.md')).toMatch(/Retry On Fail[*_] is safe to turn on/);
	});
});
