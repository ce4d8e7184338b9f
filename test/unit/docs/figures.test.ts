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
	figures,
	foundIn,
	gitView,
	numbersIn,
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
	it('ratios, percentages, sizes, reads, times with decimals or as ranges; not products, versions or code', () => {
		const text =
			'1.05x and 0.98 × the helpers, +88 %, 909 → 1,161 MB, 30 status reads, 13.3 s, 49-84 s, 12 ms; ' +
			'not 10 × 1024, n8n 2.x, 30 s, `5.5 s` nor [a link](../bench/results/x-1.5.txt)';
		expect(figures(text).map((f) => f.text)).toEqual([
			'1.05x',
			'0.98 ×',
			'88 %',
			'909 → 1,161 MB',
			'30 status reads',
			'12 ms',
			'13.3 s',
			'49-84 s',
		]);
	});

	it('normalises 1.05x / 1.05 ×, thousands separators, bytes and milliseconds, and reads ranges as two figures', () => {
		const file = numbersIn('ratio 1.0512 tree 1160.6 MB bytes 10485760 wall 62400 ms range 909');
		const [ratio, ratio2, tree, mib, secs, range] = figures(
			'1.05x, 1.05 ×, 1,161 MB, 10.5 MB, 62.4 s, 909-1,161 MB',
		);
		for (const f of [ratio, ratio2, tree, mib, secs, range]) expect(foundIn(f, file)).toEqual([]);
		expect(foundIn(figures('914 MB')[0], file)).toEqual(['914']);
		expect(foundIn(figures('1.07x')[0], file)).toEqual(['1.07']);
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

	it('a figure in no block and citing nothing is reported; settings written as code are not', () => {
		write(
			'docs/a.md',
			'# A\n\nThe node took 1.05x the helpers.\n\nIt reads at `5.5 s`, then every 5 s.\n',
		);
		expect(report(check(root, goodGit))).toBe(
			'docs/a.md:3: paragraph with figures and no source: "1.05x" (generate it from a results file, or cite the results, test or source file that has it)',
		);
	});

	it('a citing paragraph: each figure, and each "n of m", must be in the file it cites', () => {
		write(
			'docs/a.md',
			[
				'# A',
				'',
				'Every genuine task ran once, 19 of 20 ([flood](../bench/results/flood.txt)):',
				'914 → 1,183 MB.',
				'',
				'- Loaded: 10 of 20 ran, 909 → 1,161 MB (`bench/results/flood.json`).',
				'',
			].join('\n'),
		);
		expect(report(check(root, goodGit)).split('\n')).toEqual([
			'docs/a.md:3: "914 → 1,183 MB": 914, 1183 is in none of bench/results/flood.txt',
			'docs/a.md:3: "19 of 20": 19 is in none of bench/results/flood.txt',
		]);
	});

	it('an allowed setting must be in the source file named for it', () => {
		write('nodes/limits.ts', 'export const LIMITS = { burst: 3, perMinute: 1 };\n');
		write('docs/a.md', '# A\n\nA URL costs at most 3 status reads, then 1 a minute.\n');
		const allow = (text: string) => [
			{ doc: 'docs/a.md', text, source: 'nodes/limits.ts', why: 'the allowance' },
		];
		expect(check(root, goodGit, allow('at most 3 status reads'))).toEqual([]);
		write('nodes/limits.ts', 'export const LIMITS = { burst: 5, perMinute: 1 };\n');
		expect(report(check(root, goodGit, allow('at most 3 status reads')))).toBe(
			'docs/a.md:3: "3 status reads" (allowed as the allowance) is not in nodes/limits.ts',
		);
	});

	it('a results file that records no commit is refused unless the doc says which commit it measured', () => {
		write('bench/results/flood.json', JSON.stringify({ flood: results.flood }));
		write('docs/a.md', '# A\n\nRan: 10 of 20 (`bench/results/flood.txt`).\n');
		expect(report(check(root, goodGit))).toMatch(
			/flood\.txt records no commit: say "measured at <commit>"/,
		);
		write('docs/a.md', '# A\n\nRan: 10 of 20 (`bench/results/flood.txt`, measured at abc1234).\n');
		expect(check(root, goodGit)).toEqual([]);
	});

	it('without git history the check says so, and does not pass', () => {
		write('docs/a.md', '# A\n\nRan: 10 of 20 (`bench/results/flood.txt`).\n');
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
