/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- a contributor tool: runs under plain Node, never inside n8n (the package ships dist/ only) */
// Figures in README.md and docs/ that cannot drift from the results files they come from.
//
//   node tools/run.js figures          regenerate every generated block, then check every doc
//   node tools/run.js figures --check  check only (what test/unit/docs/figures.test.ts runs)
//
// Two ways a measured figure may stand in a doc (CONTRIBUTING.md, "Figures in the docs"):
//
// 1. A generated block, regenerated from a results file by this script (the benchmarks call it
//    when they write into bench/results/):
//        <!-- figures: bench/results/latest.txt#2b -->
//        ...generated, never edited by hand...
//        <!-- /figures -->
//    `file.txt#id` is the section of the bench's printed output whose `## ` heading starts with
//    `id.` (`#2b` → `## 2b. Polling ...`) or whose heading, as a slug, starts with `id`
//    (`#polling` → `## Polling: status reads ...`); without `#id`, the whole file. Its tables
//    become markdown tables, the other lines a text block.
// 2. A citing unit: a paragraph, list item or table row that names a results file
//    (`bench/results/x.txt` or `.json`, linked or in backticks), or the test or source file that
//    asserts or defines the figure. Every figure in it must be found in those files (in either of
//    a results file's .txt and .json).
//
// Anything else that looks measured (a ratio, a percentage, a size in kB/MB/GB, a number of
// reads, a time with decimals, in ms or given as a range) fails the check, unless it is written
// as code (`30 s`) or ALLOWED below names it with the file that holds it.
//
// A results file must say which commit's code it measured: `machine.commit` (bench/run.ts) or
// `commit` (bench/n8n.ts), and the command. The commit must be an ancestor of HEAD whose bench/
// holds every section the file has (its top-level keys and the `mode` values of its rows). A file
// that records none (written before the benchmarks recorded it) is accepted only where the doc
// says "measured at <commit>" (in the citing unit, or on the block's marker), checked the same way.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.join(__dirname, '..');

/** The docs whose figures are checked. */
export function docFiles(root = ROOT): string[] {
	const docs = fs
		.readdirSync(path.join(root, 'docs'))
		.filter((f) => f.endsWith('.md'))
		.sort()
		.map((f) => `docs/${f}`);
	return ['README.md', 'CHANGELOG.md', ...docs].filter((f) => fs.existsSync(path.join(root, f)));
}

/**
 * The part of a doc whose figures are checked: all of it, except CHANGELOG.md, where only the
 * Unreleased section speaks for this code (a released entry says what that release did). The rest
 * is blanked, so line numbers stay.
 */
export function scanned(doc: string, text: string): string {
	if (doc !== 'CHANGELOG.md') return text;
	const start = text.indexOf('\n## [Unreleased]');
	const end = text.indexOf('\n## [', start + 1);
	if (start < 0) return '';
	if (end < 0) return text;
	return text.slice(0, end) + text.slice(end).replace(/[^\n]/g, '');
}

/**
 * Figures that stand without a citing link, each with the file that holds it (the check finds it
 * there): settings and limits of the code in the README, where a link to source would not help a
 * user. Keep this list short; a measured figure never belongs here.
 */
export const ALLOWED: Array<{ doc: string; text: string; source: string; why: string }> = [
	{
		doc: 'README.md',
		text: 'Max File Size defaults to 256 MB',
		source: 'nodes/shared/transport/fileSizeLimit.ts',
		why: "Max File Size's default in database mode",
	},
	{
		doc: 'README.md',
		text: '4 GB per task',
		source: 'nodes/shared/transport/downloads.ts',
		why: "a task's files while Max File Size is automatic (MAX_TASK_BYTES)",
	},
	{
		doc: 'README.md',
		text: 'backoff from 0.5 s',
		source: 'nodes/shared/transport/faults.ts',
		why: 'the first backoff of status reads (DEFAULT_BACKOFF)',
	},
	{
		doc: 'README.md',
		text: '6 reads',
		source: 'nodes/MediaGenerationTrigger/verify.ts',
		why: "the trigger's confirmation reads (CONFIRM_READS)",
	},
	{
		doc: 'README.md',
		text: 'at most 3 status reads',
		source: 'nodes/MediaGenerationTrigger/statusReads.ts',
		why: "a callback URL's own allowance (URL_READ_LIMITS.own)",
	},
	{
		doc: 'README.md',
		text: '200 reads',
		source: 'nodes/MediaGenerationTrigger/statusReads.ts',
		why: "the trigger's budget (TRIGGER_STATUS_READ_LIMITS)",
	},
	...['docs/models.md', 'docs/form-photos-to-videos.md'].map((doc) => ({
		doc,
		text: '10 MB',
		source: 'nodes/MediaGeneration/models/referenceImages.ts',
		why: 'the reference-image limit (MAX_IMAGE_BYTES), wherever the page states it',
	})),
	...['256 MB', '1024 MB', '2048 MB'].map((text) => ({
		doc: 'docs/queue-mode.md',
		text,
		source: 'nodes/shared/transport/fileSizeLimit.ts',
		why: "Max File Size's default per binary data mode",
	})),
];

// ---------------------------------------------------------------------------------------------
// Parsing a doc into units

export interface Unit {
	doc: string;
	line: number; // 1-based, first line
	kind: 'paragraph' | 'list item' | 'table row' | 'heading';
	text: string;
}

export interface Block {
	doc: string;
	line: number; // the marker's line
	spec: string; // bench/results/x.txt#id
	marker: string;
	body: string; // between the markers
	start: number; // offsets of body in the doc text
	end: number;
}

const OPEN = /<!-- figures: (\S+)(.*?)-->/;
const CLOSE = '<!-- /figures -->';

export function findBlocks(doc: string, text: string): Block[] {
	const blocks: Block[] = [];
	const re = /<!-- figures: (\S+)(.*?)-->\n/g;
	let m: RegExpExecArray | null;
	while ((m = re.exec(text))) {
		const start = m.index + m[0].length;
		const end = text.indexOf(CLOSE, start);
		if (end < 0) throw new Error(`${doc}: "${m[0].trim()}" has no ${CLOSE}`);
		blocks.push({
			doc,
			line: text.slice(0, m.index).split('\n').length,
			spec: m[1],
			marker: m[0].trim(),
			body: text.slice(start, end),
			start,
			end,
		});
		re.lastIndex = end;
	}
	return blocks;
}

/** Paragraphs, list items, table rows and headings outside code fences and generated blocks. */
export function units(doc: string, text: string): Unit[] {
	const out: Unit[] = [];
	const lines = text.split('\n');
	let fence = false;
	let inBlock = false;
	let cur: Unit | undefined;
	const flush = () => {
		if (cur) out.push(cur);
		cur = undefined;
	};
	lines.forEach((raw, i) => {
		const line = raw.trimEnd();
		if (OPEN.test(line)) {
			flush();
			inBlock = true;
			return;
		}
		if (line.includes(CLOSE)) {
			inBlock = false;
			return;
		}
		if (inBlock) return;
		if (/^\s*(```|~~~)/.test(line)) {
			flush();
			fence = !fence;
			return;
		}
		if (fence) return;
		if (line.trim() === '' || /^<!--.*-->$/.test(line.trim())) return flush();
		if (/^#{1,6}\s/.test(line)) {
			flush();
			out.push({ doc, line: i + 1, kind: 'heading', text: line });
			return;
		}
		if (/^\s*\|/.test(line)) {
			flush();
			if (!/^\s*\|[\s:|-]+\|\s*$/.test(line))
				out.push({ doc, line: i + 1, kind: 'table row', text: line });
			return;
		}
		if (/^\s*([-*+]|\d+\.)\s/.test(line)) {
			flush();
			cur = { doc, line: i + 1, kind: 'list item', text: line };
			return;
		}
		if (cur) cur.text += `\n${line}`;
		else cur = { doc, line: i + 1, kind: 'paragraph', text: line };
	});
	flush();
	return out;
}

// ---------------------------------------------------------------------------------------------
// Figures

export interface Figure {
	text: string; // as written, e.g. "1,183 MB"
	values: number[]; // 1183 (a range gives two)
	decimals: number[];
	unit: string; // 'x' | '%' | 'MB' | 'GB' | 'kB' | 's' | 'ms' | 'min' | 'reads' | 'of'
}

const NUM = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
const RANGE = String.raw`(${NUM})(?:(?:\s?[-–]\s?|\s*→\s*)(${NUM}))?`;
const PATTERNS: Array<{ unit: string; re: RegExp; rangeOnly?: boolean; decimalOnly?: boolean }> = [
	// a ratio: 1.05x, 0.98 ×, 45× (not "10 × 1024", a product, nor "2.x", a version)
	{ unit: 'x', re: new RegExp(String.raw`(?<![\w.])${RANGE}\s?[x×](?![\w(]|\s*[\d(])`, 'g') },
	{ unit: '%', re: new RegExp(String.raw`(?<![\w.])${RANGE}\s?%`, 'g') },
	{ unit: 'MB', re: new RegExp(String.raw`(?<![\w.])${RANGE}\s?(?:MB|GB|kB|KB|TB)\b`, 'g') },
	{
		unit: 'reads',
		re: new RegExp(String.raw`(?<![\w.])${RANGE}\s(?:status\s)?reads?\b`, 'g'),
	},
	{ unit: 'ms', re: new RegExp(String.raw`(?<![\w.])${RANGE}\s?ms\b`, 'g') },
	// seconds and minutes: measured-looking when written with decimals or as a range
	{
		unit: 's',
		re: new RegExp(String.raw`(?<![\w.])${RANGE}\s?(?:s|min|minutes?|seconds?)\b`, 'g'),
		decimalOnly: true,
	},
];

const toNumber = (s: string) => Number(s.replace(/,/g, ''));
const decimalsOf = (s: string) => (s.includes('.') ? s.split('.')[1].length : 0);

/** The text a reader sees: link targets, code spans, HTML comments and images left out. */
export function prose(text: string): string {
	return text
		.replace(/<!--[\s\S]*?-->/g, ' ')
		.replace(/`[^`]*`/g, ' ')
		.replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
		.replace(/\]\([^)]*\)/g, ']');
}

export function figures(text: string): Figure[] {
	const seen = prose(text);
	const found: Figure[] = [];
	const taken: Array<[number, number]> = [];
	for (const p of PATTERNS) {
		for (const m of seen.matchAll(p.re)) {
			const at = m.index ?? 0;
			if (taken.some(([a, b]) => at < b && a < at + m[0].length)) continue;
			const parts = [m[1], m[2]].filter((x): x is string => x !== undefined);
			if (p.decimalOnly && parts.length === 1 && !parts[0].includes('.')) continue;
			let unit = p.unit;
			if (unit === 'MB') unit = /GB/.test(m[0]) ? 'GB' : /[kK]B/.test(m[0]) ? 'kB' : 'MB';
			if (unit === 's') unit = /min/.test(m[0]) ? 'min' : 's';
			taken.push([at, at + m[0].length]);
			found.push({
				text: m[0].trim(),
				values: parts.map(toNumber),
				decimals: parts.map(decimalsOf),
				unit,
			});
		}
	}
	return found;
}

/** "10 of 20": counts, checked in citing units only (alone they are too often not measured). */
export function counts(text: string): Figure[] {
	return [...prose(text).matchAll(/(?<![\w.])(\d[\d,]*) of (\d[\d,]*)(?![\w.])/g)].map((m) => ({
		text: m[0],
		values: [toNumber(m[1]), toNumber(m[2])],
		decimals: [0, 0],
		unit: 'of',
	}));
}

// The scales under which a figure may be recorded in a file (bytes for MB, ms for s...).
const SCALES: Record<string, number[]> = {
	x: [1],
	'%': [1, 100],
	MB: [1, 1e-6, 2 ** -20, 1000, 1024],
	GB: [1, 1e-9, 2 ** -30, 1e-3, 1 / 1024],
	kB: [1, 1e-3, 1 / 1024],
	s: [1, 1e-3],
	ms: [1, 1000],
	min: [1, 1 / 60, 1 / 60000],
	reads: [1],
	of: [1],
};

export function numbersIn(text: string): number[] {
	// numeric separators of source code: 5_500 is 5500
	return [
		...text
			.replace(/(\d)_(?=\d)/g, '$1')
			.matchAll(/-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[+-]?\d+)?/g),
	].map((m) => toNumber(m[0]));
}

/** Every value of the figure is some number of the file, at the figure's precision. */
export function foundIn(figure: Figure, numbers: number[]): string[] {
	const missing: string[] = [];
	figure.values.forEach((value, i) => {
		const step = 10 ** -figure.decimals[i];
		const ok = numbers.some((n) =>
			(SCALES[figure.unit] ?? [1]).some(
				(scale) => Math.abs(n * scale - value) <= step / 2 + 1e-9 * Math.max(1, value),
			),
		);
		if (!ok) missing.push(String(value));
	});
	return missing;
}

// ---------------------------------------------------------------------------------------------
// Sources a unit cites

const SOURCE_PATH =
	/(?:\.\.\/)*((?:bench\/results|test|nodes|credentials|bench)\/[\w./-]+\.(?:json|txt|ts|js))/g;

export function citedFiles(text: string, root = ROOT): string[] {
	const found = new Set<string>();
	for (const m of text.matchAll(SOURCE_PATH)) {
		const rel = m[1];
		if (fs.existsSync(path.join(root, rel))) found.add(rel);
	}
	return [...found];
}

export const isResults = (rel: string) => rel.startsWith('bench/results/');

/** A results file's .txt and .json together (either may be cited). */
function resultsText(rel: string, root: string): string {
	const base = rel.replace(/\.(json|txt)$/, '');
	return ['.txt', '.json']
		.map((ext) => path.join(root, base + ext))
		.filter((f) => fs.existsSync(f))
		.map((f) => fs.readFileSync(f, 'utf8'))
		.join('\n');
}

/** The numbers of a cited file; `cache` lives as long as one check (files change between runs). */
function numbersOf(rel: string, root: string, cache: Map<string, number[]>): number[] {
	let n = cache.get(rel);
	if (!n) {
		n = numbersIn(
			isResults(rel) ? resultsText(rel, root) : fs.readFileSync(path.join(root, rel), 'utf8'),
		);
		cache.set(rel, n);
	}
	return n;
}

// ---------------------------------------------------------------------------------------------
// Generated blocks

function slug(s: string): string {
	return s
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, '-')
		.replace(/^-|-$/g, '');
}

/** The lines of a results .txt that a block names. */
export function section(rel: string, id: string | undefined, root = ROOT): string[] {
	const lines = fs.readFileSync(path.join(root, rel), 'utf8').replace(/\n+$/, '').split('\n');
	if (!id) return lines.filter((l) => !/^# /.test(l));
	const start = lines.findIndex((l) => {
		const h = /^## (.*)$/.exec(l);
		return h !== null && (h[1].startsWith(`${id}.`) || slug(h[1]).startsWith(slug(id)));
	});
	if (start < 0) throw new Error(`${rel} has no section "## ${id}"`);
	let end = lines.findIndex((l, i) => i > start && /^##? /.test(l));
	if (end < 0) end = lines.length;
	return lines.slice(start + 1, end);
}

function columns(dashes: string): Array<[number, number]> {
	return [...dashes.matchAll(/-+/g)].map((m) => [m.index ?? 0, (m.index ?? 0) + m[0].length]);
}

function fitsColumns(line: string, cols: Array<[number, number]>): boolean {
	if (line.trim() === '') return false;
	// between two columns (two spaces in the dash line) a row has spaces
	for (let i = 1; i < cols.length; i++) {
		const gap = line.slice(cols[i - 1][1], cols[i][0]);
		if (/\S/.test(gap)) return false;
	}
	return true;
}

const cell = (s: string) => s.trim().replace(/\|/g, '\\|') || ' ';

/** The printed output as markdown: its tables as tables, the lines around them as text. */
export function toMarkdown(lines: string[]): string {
	const out: string[] = [];
	let text: string[] = [];
	const flushText = () => {
		while (text.length && text[0].trim() === '') text.shift();
		while (text.length && text[text.length - 1].trim() === '') text.pop();
		if (text.length) out.push('```text', ...text, '```', '');
		text = [];
	};
	for (let i = 0; i < lines.length; i++) {
		const next = lines[i + 1] ?? '';
		if (/^-+( {2,}-+)*\s*$/.test(next) && lines[i].trim() !== '') {
			flushText();
			const cols = columns(next);
			const cut = (l: string) =>
				cols.map(([a], c) => cell(l.slice(a, c + 1 < cols.length ? cols[c + 1][0] : undefined)));
			out.push(`| ${cut(lines[i]).join(' | ')} |`, `| ${cols.map(() => '---').join(' | ')} |`);
			i += 2;
			while (i < lines.length && fitsColumns(lines[i], cols)) {
				out.push(`| ${cut(lines[i]).join(' | ')} |`);
				i++;
			}
			out.push('');
			i--;
			continue;
		}
		text.push(lines[i]);
	}
	flushText();
	while (out.length && out[out.length - 1] === '') out.pop();
	return out.join('\n');
}

export function render(spec: string, root = ROOT): string {
	const [rel, id] = spec.split('#');
	if (!isResults(rel) || !rel.endsWith('.txt'))
		throw new Error(`"${spec}": a block names a bench/results/*.txt file`);
	return toMarkdown(section(rel, id, root));
}

/** Whitespace and table padding as prettier may leave them. */
export function normalise(markdown: string): string {
	return markdown
		.split('\n')
		.map((l) => l.trim())
		.filter((l) => l !== '')
		.map((l) =>
			l.startsWith('|')
				? l
						.replace(/^\||\|$/g, '')
						.split(/(?<!\\)\|/)
						.map((c) => (/^\s*:?-+:?\s*$/.test(c) ? '---' : c.trim()))
						.join('|')
				: l,
		)
		.join('\n');
}

/** Rewrites the generated blocks of every doc; returns the docs it changed. */
export function regenerateDocs(out?: string, root = ROOT): string[] {
	if (out && !path.resolve(out).startsWith(path.join(root, 'bench', 'results') + path.sep))
		return [];
	const changed: string[] = [];
	for (const doc of docFiles(root)) {
		const file = path.join(root, doc);
		const text = fs.readFileSync(file, 'utf8');
		let next = text;
		for (const b of findBlocks(doc, text).reverse()) {
			const body = `\n${render(b.spec, root)}\n\n`;
			if (normalise(b.body) !== normalise(body))
				next = next.slice(0, b.start) + body + next.slice(b.end);
		}
		if (next !== text) {
			fs.writeFileSync(file, next);
			changed.push(doc);
		}
	}
	if (changed.length) {
		try {
			execFileSync(
				process.execPath,
				[path.join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), '--write', ...changed],
				{ cwd: root, stdio: 'ignore' },
			);
		} catch {
			// prettier missing: the blocks are right, `npx prettier --write` formats them
		}
	}
	return changed;
}

// ---------------------------------------------------------------------------------------------
// Provenance of results files

export interface GitView {
	available(): string | undefined; // why not, or undefined
	isAncestorOfHead(commit: string): boolean;
	/** the words of `words` found in bench/ at commit */
	grepBench(commit: string, words: string[]): Set<string>;
}

export function gitView(root = ROOT): GitView {
	const run = (args: string[]) =>
		execFileSync('git', args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
	return {
		available() {
			try {
				if (run(['rev-parse', '--is-shallow-repository']).trim() === 'true')
					return 'this is a shallow clone (fetch the history: git fetch --unshallow, or actions/checkout with fetch-depth: 0)';
				run(['rev-parse', 'HEAD']);
				return undefined;
			} catch (e) {
				return `git cannot read this folder's history (${(e as Error).message.split('\n')[0]})`;
			}
		},
		isAncestorOfHead(commit) {
			try {
				run(['merge-base', '--is-ancestor', commit, 'HEAD']);
				return true;
			} catch {
				return false;
			}
		},
		grepBench(commit, words) {
			if (!words.length) return new Set();
			let hits = '';
			try {
				hits = run([
					'grep',
					'-h',
					'-o',
					'-w',
					'-F',
					...words.flatMap((w) => ['-e', w]),
					commit,
					'--',
					'bench/',
				]);
			} catch {
				// exit 1: nothing found
			}
			return new Set(hits.split('\n').filter(Boolean));
		},
	};
}

const GENERIC_KEYS = new Set([
	'machine',
	'quick',
	'date',
	'commit',
	'dirty',
	'command',
	'cores',
	'loadBefore',
	'loadAfter',
	'runs',
]);

/** The code paths a results file claims to measure: its sections and the modes of its rows. */
export function claims(json: unknown): string[] {
	const words = new Set<string>();
	if (json && typeof json === 'object' && !Array.isArray(json))
		for (const k of Object.keys(json)) if (!GENERIC_KEYS.has(k)) words.add(k);
	const walk = (v: unknown) => {
		if (Array.isArray(v)) v.forEach(walk);
		else if (v && typeof v === 'object')
			for (const [k, x] of Object.entries(v)) {
				if (k === 'mode' && typeof x === 'string') words.add(x);
				else walk(x);
			}
	};
	walk(json);
	return [...words];
}

export function recorded(json: unknown): { commit?: string; command?: unknown; dirty?: boolean } {
	const j = (json ?? {}) as Record<string, unknown>;
	const m = (j.machine ?? {}) as Record<string, unknown>;
	const commit = (m.commit ?? j.commit) as string | undefined;
	return {
		commit: commit && /^[0-9a-f]{7,40}$/.test(commit) ? commit : undefined,
		command: m.command ?? j.command,
		dirty: (m.dirty ?? j.dirty) as boolean | undefined,
	};
}

const MEASURED_AT = /measured\s+at\s+(?:or\s+just\s+before\s+)?`?([0-9a-f]{7,40})\b/;

/** Why the results file cannot back a figure, or undefined. */
export function provenanceProblem(
	rel: string,
	context: string,
	git: GitView,
	root = ROOT,
): string | undefined {
	const jsonPath = path.join(root, rel.replace(/\.(json|txt)$/, '.json'));
	if (!fs.existsSync(jsonPath)) return `${rel}: no .json beside it records its commit`;
	const json = JSON.parse(fs.readFileSync(jsonPath, 'utf8')) as unknown;
	const stated = MEASURED_AT.exec(context)?.[1];
	const rec = recorded(json);
	const commit = stated ?? rec.commit;
	if (!commit)
		return `${rel} records no commit: say "measured at <commit>" where it is cited, or measure again (the benchmarks now record it)`;
	if (!stated && rec.dirty)
		return `${rel} was measured with uncommitted changes to ${rec.commit}: say "measured at <commit>" for the commit that holds them`;
	const why = git.available();
	if (why) return `${rel}: cannot check that ${commit} holds the code it measured: ${why}`;
	if (!git.isAncestorOfHead(commit))
		return `${rel}: commit ${commit} is not in this branch's history`;
	const want = claims(json);
	const have = git.grepBench(commit, want);
	const absent = want.filter((w) => !have.has(w));
	if (absent.length)
		return `${rel}: its commit ${commit}${stated ? ' (as the doc states)' : ''} has no ${absent.join(', ')} in bench/: the file measured code that commit does not hold`;
	return undefined;
}

// ---------------------------------------------------------------------------------------------
// The check

export interface Problem {
	doc: string;
	line: number;
	message: string;
}

export function check(root = ROOT, git: GitView = gitView(root), allowedList = ALLOWED): Problem[] {
	const problems: Problem[] = [];
	const provenance = new Map<string, string | undefined>();
	const cache = new Map<string, number[]>();
	const results = (rel: string, context: string, doc: string, line: number) => {
		const key = `${rel}\n${MEASURED_AT.exec(context)?.[1] ?? ''}`;
		if (!provenance.has(key)) provenance.set(key, provenanceProblem(rel, context, git, root));
		const p = provenance.get(key);
		if (p) problems.push({ doc, line, message: p });
	};
	for (const doc of docFiles(root)) {
		const text = scanned(doc, fs.readFileSync(path.join(root, doc), 'utf8'));
		for (const b of findBlocks(doc, text)) {
			const rel = b.spec.split('#')[0];
			let want: string;
			try {
				want = render(b.spec, root);
			} catch (e) {
				problems.push({ doc, line: b.line, message: (e as Error).message });
				continue;
			}
			if (normalise(b.body) !== normalise(want))
				problems.push({
					doc,
					line: b.line,
					message: `the block of ${b.spec} is stale: run node tools/run.js figures`,
				});
			results(rel, b.marker, doc, b.line);
		}
		for (const u of units(doc, text)) {
			const cited = citedFiles(u.text, root);
			const figs = figures(u.text);
			const allowed = allowedList.filter((a) => a.doc === doc && u.text.includes(a.text));
			if (cited.length === 0) {
				const loose = figs.filter((f) => !allowed.some((a) => a.text.includes(f.text)));
				for (const a of allowed) {
					const n = numbersOf(a.source, root, cache);
					for (const f of figures(a.text))
						if (foundIn(f, n).length)
							problems.push({
								doc,
								line: u.line,
								message: `"${f.text}" (allowed as ${a.why}) is not in ${a.source}`,
							});
				}
				if (loose.length)
					problems.push({
						doc,
						line: u.line,
						message: `${u.kind} with figures and no source: ${loose.map((f) => `"${f.text}"`).join(', ')} (generate it from a results file, or cite the results, test or source file that has it)`,
					});
				continue;
			}
			const numbers = cited.flatMap((rel) => numbersOf(rel, root, cache));
			for (const f of [...figs, ...(cited.some(isResults) ? counts(u.text) : [])]) {
				const missing = foundIn(f, numbers);
				if (missing.length)
					problems.push({
						doc,
						line: u.line,
						message: `"${f.text}": ${missing.join(', ')} is in none of ${cited.join(', ')}`,
					});
			}
			for (const rel of cited.filter(isResults)) results(rel, u.text, doc, u.line);
		}
	}
	return problems;
}

export function report(problems: Problem[]): string {
	return problems.map((p) => `${p.doc}:${p.line}: ${p.message}`).join('\n');
}

if (require.main === module) {
	const checkOnly = process.argv.includes('--check');
	if (!checkOnly) {
		const changed = regenerateDocs();
		process.stdout.write(
			`${changed.length ? `regenerated: ${changed.join(', ')}` : 'every block is current'}\n`,
		);
	}
	const problems = check();
	if (problems.length) {
		process.stderr.write(`${report(problems)}\n\n${problems.length} figure problem(s)\n`);
		process.exitCode = 1;
	} else process.stdout.write('every figure in README.md, CHANGELOG.md and docs/ has its source\n');
}
