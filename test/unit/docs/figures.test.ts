// Figures in README.md and docs/ cannot drift (issue 43): every measured-looking figure is in a
// block generated from a results file, or in a paragraph, list item or table row that cites the
// results, test or source file holding it; and every results file a doc rests on names a commit
// that holds the code it measured. The machinery is tools/docs-figures.ts; this file runs it on the
// real docs, then shows on small docs of its own that each rule catches what it is for.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { npmRun, provenance } from '../../../bench/lib/provenance';
import {
	check,
	claims,
	constantValue,
	figures,
	gitView,
	provenanceProblem,
	regenerateDocs,
	report,
	type GitView,
} from '../../../tools/docs-figures';

describe('the docs of this repository', () => {
	it('every figure has its source, every generated block is current, every results file its commit', () => {
		const problems = check();
		expect(report(problems)).toBe('');
	});
});

describe('what counts as a measured figure, and finding it in a file', () => {
	it('ratios, percentages, sizes, reads, submissions, times with decimals or as ranges; not products, versions or code', () => {
		const text =
			'1.05x and 0.98 × the helpers, +88 %, 909 → 1,161 MB, 30 status reads, 4 submissions, 0 new submissions, 13.3 s, 49-84 s, 12 ms; ' +
			'not 10 × 1024, n8n 2.x, 30 s, `5.5 s` nor [a link](../bench/results/x-1.5.txt)';
		expect(figures(text).map((f) => f.text)).toEqual([
			'1.05x',
			'0.98 ×',
			'88 %',
			'909 → 1,161 MB',
			'30 status reads',
			'4 submissions',
			'0 new submissions',
			'12 ms',
			'13.3 s',
			'49-84 s',
		]);
	});

	it('reads a constant from source text: separators, arithmetic, object keys, other constants', () => {
		const code =
			'const MINUTE = 60_000;\nexport const LIMITS = { ttlMs: 10 * MINUTE, max: 3 } as const;\n';
		expect(constantValue(code, 'LIMITS.ttlMs')).toBe(600_000);
		expect(constantValue(code, 'LIMITS.max')).toBe(3);
		expect(() => constantValue(code, 'LIMITS.gone')).toThrow(/has no key gone/);
	});
});

// The six wrong edits of issue 52: each passed the old check (any number of the cited file). Each
// is applied to a copy of the docs; the check must fail, naming the figure.
describe("issue 52's wrong edits each fail the check", () => {
	const git = gitView();
	const edits: Array<{ doc: string; from: string; to: string; figure: string }> = [
		// README: the Sooner pace's reads (was "about 2× the reads" → 3×) and its lag (was "~2.5 s up to 1 min" → "~1 s up to 10 min")
		{ doc: 'README.md', from: 'at 0.70<!--', to: 'at 1.05<!--', figure: '"1.05"' },
		{ doc: 'README.md', from: 'up to 1.2×', to: 'up to 1.6×', figure: '"1.6×"' },
		{ doc: 'README.md', from: 'median 2.6 s<!--', to: 'median 1 s<!--', figure: '"1 s"' },
		// reliability.md's "3 of 6" (a one-off run, no results file) is said without numbers: the burst's memory instead
		{
			doc: 'docs/reliability.md',
			from: '771 → 1361 MB<!--',
			to: '771 → 1261 MB<!--',
			figure: '"771 → 1261 MB"',
		},
		// security.md's "503 after 3 ms" (one run's timing) is said without a number now: its flood's tree instead
		{
			doc: 'docs/security.md',
			from: '909 → 1161 MB<!--',
			to: '909 → 1061 MB<!--',
			figure: '"909 → 1061 MB"',
		},
		// CHANGELOG's "4.2x as the issue measured it" is a string of n8n-faults.json (no number to bind): said without it; the previous code's ratio instead
		{ doc: 'CHANGELOG.md', from: '2.79x<!--', to: '2.69x<!--', figure: '"2.69x"' },
		// a binding dropped: the flood's figures were the last ones of the retired list of unbound figures
		{
			doc: 'docs/performance.md',
			from: '20 of 20<!-- = bench/results/n8n-flood-quiet.json#runs.0.flood.runsPerGenuineTask.1, #runs.0.flood.genuine -->',
			to: '20 of 20',
			figure: '"20 of 20" names no value',
		},
	];
	let root: string;
	beforeAll(() => {
		root = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-figure-edits-'));
		for (const d of ['nodes', 'credentials', 'bench', 'test'])
			fs.symlinkSync(path.resolve(d), path.join(root, d));
		fs.cpSync('docs', path.join(root, 'docs'), { recursive: true });
		for (const f of ['README.md', 'CHANGELOG.md', 'package.json'])
			fs.copyFileSync(f, path.join(root, f));
	});
	afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

	it.each(edits)('$doc: "$from" → "$to" fails, naming $figure', ({ doc, from, to, figure }) => {
		const file = path.join(root, doc);
		const before = fs.readFileSync(file, 'utf8');
		expect(before).toContain(from);
		expect(report(check(root, git))).toBe('');
		try {
			fs.writeFileSync(file, before.replace(from, to));
			expect(report(check(root, git))).toContain(`${doc}:`);
			expect(report(check(root, git))).toContain(figure);
		} finally {
			fs.writeFileSync(file, before);
		}
	});
});

describe('the rules, on docs of their own', () => {
	let root: string;
	const write = (rel: string, text: string) => {
		fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
		fs.writeFileSync(path.join(root, rel), text);
	};
	// A history in which every results file's commit holds what it measured: the rules of the doc
	// text are shown here; provenance has its own tests below, on this repository's history.
	const goodGit: GitView = {
		available: () => undefined,
		isAncestorOfHead: () => true,
		grepBench: (_c, words) => new Set(words),
	};
	const results = {
		machine: { commit: 'abc1234', command: ['npm', 'run', 'bench'] },
		flood: { treeMb: [909, 1161], ran: 10, of: 20 },
	};
	const printed = [
		'# bench 2026 (abc1234)',
		'',
		'## 2b. Flood: forged callbacks',
		'case    ran  tree before → peak',
		'------  ---  ------------------',
		'loaded  10   909 → 1161 MB',
		'quiet   20   911 → 1111 MB',
		'targets: every genuine task runs once',
		'',
		'## 3. Other',
		'x  y',
		'-  -',
		'1  2',
	].join('\n');

	beforeEach(() => {
		root = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-figures-'));
		write('bench/results/flood.json', JSON.stringify(results));
		write('bench/results/flood.txt', printed);
		write('README.md', '# Readme\n\nNo figures here.\n');
	});
	afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

	it('a generated block: regenerated from its section, and reported when stale', () => {
		write(
			'docs/a.md',
			'# A\n\n<!-- figures: bench/results/flood.txt#2b -->\n\n| typed | by hand |\n<!-- /figures -->\n',
		);
		expect(report(check(root, goodGit))).toMatch(
			/docs\/a\.md:3: the block of bench\/results\/flood\.txt#2b is stale/,
		);
		expect(regenerateDocs(undefined, root)).toEqual(['docs/a.md']);
		const doc = fs.readFileSync(path.join(root, 'docs/a.md'), 'utf8');
		expect(doc).toMatch(/\| loaded +\| 10 +\| 909 → 1161 MB +\|/);
		expect(doc).toMatch(/targets: every genuine task runs once/);
		expect(doc).not.toMatch(/Other/);
		expect(check(root, goodGit)).toEqual([]);
		// a new run of the benchmark: the block is stale again
		write('bench/results/flood.txt', printed.replace('909 → 1161', '905 → 1170'));
		expect(report(check(root, goodGit))).toMatch(/flood\.txt#2b is stale/);
	});

	it('a figure that names no value is reported, with what to write; settings written as code are not', () => {
		write('docs/a.md', '# A\n\nThe node took 1.05x the helpers.\n\nIt reads at `5.5 s`.\n');
		expect(report(check(root, goodGit))).toMatch(
			/^docs\/a\.md:3: "1\.05x" names no value: bind it: write the figure followed by <!-- = FILE#KEY -->/,
		);
	});

	it('a sentence that names the block marker opens no block: the figures after it are still checked', () => {
		// docs/performance.md said "(`<!-- figures: bench/results/... -->`)" in a sentence, and the
		// check skipped everything from there to the next block's end.
		write(
			'docs/a.md',
			'# A\n\nBlocks are marked (`<!-- figures: bench/results/... -->`).\n\nThe node took 1.05x the helpers.\n',
		);
		expect(report(check(root, goodGit))).toMatch(/^docs\/a\.md:5: "1\.05x" names no value/);
	});

	it('a bound figure is its value, rendered at the decimals written, in the unit declared', () => {
		write('nodes/limits.ts', 'export const LIMITS = { ttlMs: 10 * 60_000, burst: 3 };\n');
		const doc = (text: string) => write('docs/a.md', `# A\n\n${text}\n`);
		doc(
			'Ran 10 of 20<!-- = bench/results/flood.json#flood.ran, #flood.of -->, 909 → 1161 MB<!-- = bench/results/flood.json#flood.treeMb.0, #flood.treeMb.1 -->, for 10 minutes<!-- = nodes/limits.ts#LIMITS.ttlMs ms -->, at most three reads<!-- = nodes/limits.ts#LIMITS.burst -->.',
		);
		expect(report(check(root, goodGit))).toBe('');
		doc('Remembered for a minute<!-- = nodes/limits.ts#LIMITS.ttlMs ms -->.');
		expect(report(check(root, goodGit))).toBe(
			'docs/a.md:3: "a minute": nodes/limits.ts#LIMITS.ttlMs is 600000 ms, which renders as 10 min at the precision written, not a',
		);
		doc('A Retry made 3 submissions<!-- = nodes/limits.ts#LIMITS.burst -->.');
		expect(report(check(root, goodGit))).toBe('');
		doc('A Retry made 4 submissions<!-- = nodes/limits.ts#LIMITS.burst -->.');
		expect(report(check(root, goodGit))).toMatch(/"4 submissions": .*LIMITS\.burst is 3/);
		doc('Ran 11 of 20<!-- = bench/results/flood.json#flood.ran, #flood.of -->.');
		expect(report(check(root, goodGit))).toMatch(
			/"11 of 20": .*flood\.ran is 10, which renders as 10/,
		);
		doc('Ran 10 of 20<!-- = bench/results/flood.json#flood.ran -->.');
		expect(report(check(root, goodGit))).toMatch(/has 2 number\(s\) and .* names 1/);
		doc('Ran<!-- = bench/results/flood.json#flood.ran --> quickly.');
		expect(report(check(root, goodGit))).toMatch(/follows no figure/);
	});

	it("a test's constant binds a figure only when an assertion uses it", () => {
		write(
			'test/a.test.ts',
			'const MAX_MS = 50;\nconst PRINTED = 7;\nexpect(t).toBeLessThan(MAX_MS);\n',
		);
		write('docs/a.md', '# A\n\nUnder 50 ms<!-- = test/a.test.ts#MAX_MS -->.\n');
		expect(report(check(root, goodGit))).toBe('');
		write('docs/a.md', '# A\n\nIn 7 ms<!-- = test/a.test.ts#PRINTED -->.\n');
		expect(report(check(root, goodGit))).toMatch(/PRINTED is in no assertion/);
	});

	it('a results file that records no commit is refused unless the doc says which commit it measured', () => {
		write('bench/results/flood.json', JSON.stringify({ flood: results.flood }));
		write(
			'docs/a.md',
			'# A\n\nRan: 10 of 20<!-- = bench/results/flood.json#flood.ran, #flood.of -->.\n',
		);
		expect(report(check(root, goodGit))).toMatch(
			/flood\.json records no commit: say "measured at <commit>"/,
		);
		write(
			'docs/a.md',
			'# A\n\nRan: 10 of 20<!-- = bench/results/flood.json#flood.ran, #flood.of --> (measured at abc1234).\n',
		);
		expect(check(root, goodGit)).toEqual([]);
	});

	it('without git history the check says so, and does not pass', () => {
		write(
			'docs/a.md',
			'# A\n\nRan: 10 of 20<!-- = bench/results/flood.json#flood.ran, #flood.of -->.\n',
		);
		const noGit: GitView = {
			...goodGit,
			available: () => 'this is a shallow clone (fetch the history: git fetch --unshallow)',
		};
		expect(report(check(root, noGit))).toMatch(
			/cannot check that abc1234 holds the code it measured: this is a shallow clone/,
		);
	});
});

describe("a results file's commit must hold the code it measured (this repository's history)", () => {
	const git = gitView();
	const why = git.available();

	it('git history is available to check it', () => {
		// CI checks out the whole history (ci.yml: fetch-depth 0); a shallow clone fails here, by name
		expect(why).toBeUndefined();
	});

	it('the memory-fair files name 51f3fe7, which has no node-finished mode in bench/: refused', () => {
		expect(claims(JSON.parse(fs.readFileSync('bench/results/memory-fair-1.json', 'utf8')))).toEqual(
			expect.arrayContaining(['memory', 'node-finished', 'n8n-helpers-after-wait']),
		);
		expect(provenanceProblem('bench/results/memory-fair-1.txt', '', git)).toMatch(
			/commit 51f3fe7 has no .*node-finished.* in bench\//,
		);
		// the commit that holds the modes, stated where the file is cited: accepted
		expect(
			provenanceProblem('bench/results/memory-fair-1.txt', 'measured at 8be6258', git),
		).toBeUndefined();
	});

	it('a commit that is not in the history is refused', () => {
		expect(
			provenanceProblem('bench/results/memory-fair-1.txt', 'measured at deadbee', git),
		).toMatch(/deadbee is not in this branch's history/);
	});

	it('the benchmarks record the commit, whether the code differed from it, and the command', () => {
		const p = provenance(npmRun('bench', ['--only', 'polling']));
		expect(p.commit).toMatch(/^[0-9a-f]{7,}$/);
		expect(typeof p.dirty).toBe('boolean');
		expect(p.command).toEqual(['npm', 'run', 'bench', '--', '--only', 'polling']);
	});
});
