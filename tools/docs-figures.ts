/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- a contributor tool: runs under plain Node, never inside n8n (the package ships dist/ only) */
// Figures in README.md and docs/ that cannot drift from the results files they come from.
//
//   node tools/run.js figures          regenerate every generated block, then check every doc
//   node tools/run.js figures --check  check only (what test/unit/docs/figures.test.ts runs)
//
// Two ways a figure may stand in a doc (CONTRIBUTING.md, "Figures in the docs"):
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
// 2. A bound figure: the figure, then with no space a comment naming the one value it shows:
//        about 2×<!-- = bench/results/polling-faults.json#faults.rows.mode=sooner.readsRatio -->
//        for 10 minutes<!-- = nodes/MediaGenerationTrigger/memory.ts#UNKNOWN_TASK_LIMITS.ttlMs ms -->
//    a key path in a results JSON, or a constant (by name) of a source file or of a test that
//    asserts it; one value per number of the figure (`#key` alone: the previous file's), then the
//    stored value's unit when it is not the figure's. The check reads the value, converts it to
//    the figure's unit, rounds it to the decimals written and compares it with the figure.
//
// Anything else that looks measured (a ratio, a percentage, a size in kB/MB/GB, a number of
// reads or submissions, a time in ms, with decimals or as a range) fails the check unless it is
// written as code (`30 s`). Figures in words and whole units ("a minute", "10 s", "3 of 6") fail too.
//
// A results file must say which commit's code it measured: `machine.commit` (bench/run.ts) or
// `commit` (bench/n8n.ts), and the command. The commit must be an ancestor of HEAD whose bench/
// holds every section the file has (its top-level keys and the `mode` values of its rows). A file
// that records none (written before the benchmarks recorded it) is accepted only where the doc
// says "measured at <commit>" (in the unit that binds it, or on the block's marker), checked the
// same way.
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
 * sections that speak for this code are: Unreleased, and the section of the version package.json
 * holds (released from this code: it stays checked until the next release). Older entries say
 * what their release did. The rest is blanked, so line numbers stay.
 */
export function scanned(doc: string, text: string, root = ROOT): string {
	if (doc !== 'CHANGELOG.md') return text;
	const start = text.indexOf('\n## [Unreleased]');
	if (start < 0) return '';
	let end = text.indexOf('\n## [', start + 1);
	const pkg = path.join(root, 'package.json');
	const version = fs.existsSync(pkg)
		? (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { version?: string }).version
		: undefined;
	if (end >= 0 && version && text.startsWith(`\n## [${version}]`, end))
		end = text.indexOf('\n## [', end + 1);
	if (end < 0) return text;
	return text.slice(0, end) + text.slice(end).replace(/[^\n]/g, '');
}

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

// A marker on a line of its own: a sentence that names the marker (`<!-- figures: … -->`) opens no block.
const OPEN = /^\s*<!-- figures: (\S+)(.*?)-->\s*$/;
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
	unit: string; // 'x' | '%' | 'MB' | 'GB' | 'kB' | 's' | 'ms' | 'min' | 'reads' | 'submissions' | 'of'
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
	// what a run paid: "4 submissions", "0 new submissions"
	{
		unit: 'submissions',
		re: new RegExp(String.raw`(?<![\w.])${RANGE}\s(?:new\s)?submissions?\b`, 'g'),
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

export const isResults = (rel: string) => rel.startsWith('bench/results/');

// ---------------------------------------------------------------------------------------------
// Bindings: a figure and the one value it shows
//
//   about 2×<!-- = bench/results/polling-faults.json#sooner.readsRatio -->
//   remembered for 10 minutes<!-- = nodes/MediaGenerationTrigger/memory.ts#UNKNOWN_TASK_LIMITS.ttlMs ms -->
//   3 of 6<!-- = test/engine/x.test.ts#STARTED, #TOTAL -->
//
// The comment follows the figure with no space between. It names one value per number of the
// figure (a range, "a → b" and "n of m" name two; `#key` alone is the previous file's), then,
// when the stored value is not in the figure's own unit, that unit. The check reads each value,
// converts it to the figure's unit, rounds it to the decimals written and compares the result
// with the figure as written.

export interface Ref {
	file: string;
	key: string;
}

export interface Binding {
	doc: string;
	line: number;
	figure: string; // as written before the comment, e.g. "~2.5 s" → "2.5 s"
	numbers: Array<{ written: string; value: number; decimals: number }>;
	unit: string; // the figure's unit, normalised ('' for a plain count)
	refs: Ref[];
	stored?: string; // the stored value's unit, when declared
	comment: string;
	start: number; // offsets of figure + comment in the unit's text
	end: number;
}

const WORD_NUMBERS: Record<string, number> = {
	a: 1,
	an: 1,
	one: 1,
	two: 2,
	three: 3,
	four: 4,
	five: 5,
	six: 6,
	seven: 7,
	eight: 8,
	nine: 9,
	ten: 10,
	twelve: 12,
	twenty: 20,
	once: 1,
	twice: 2,
	thrice: 3,
	half: 0.5,
};

/** Units a figure may be written in: what each is called in a doc, its family and its size. */
const UNITS: Array<{ re: string; unit: string; family: string; size: number }> = [
	{ re: 'ms|milliseconds?', unit: 'ms', family: 'time', size: 1 },
	{ re: 's|sec|seconds?', unit: 's', family: 'time', size: 1000 },
	{ re: 'min|minutes?', unit: 'min', family: 'time', size: 60_000 },
	{ re: 'h|hours?', unit: 'h', family: 'time', size: 3_600_000 },
	{ re: 'days?', unit: 'day', family: 'time', size: 86_400_000 },
	{ re: 'B|bytes?', unit: 'B', family: 'size', size: 1 },
	{ re: 'kB|KB|KiB', unit: 'kB', family: 'size', size: 1024 },
	{ re: 'MB|MiB', unit: 'MB', family: 'size', size: 1024 ** 2 },
	{ re: 'GB|GiB', unit: 'GB', family: 'size', size: 1024 ** 3 },
	{ re: 'TB', unit: 'TB', family: 'size', size: 1024 ** 4 },
	{ re: '[x×]|times', unit: 'x', family: 'ratio', size: 1 },
	{ re: '%', unit: '%', family: 'ratio', size: 0.01 },
	{ re: '(?:status )?reads?', unit: 'reads', family: 'count', size: 1 },
	{ re: '(?:new )?submissions?', unit: 'submissions', family: 'count', size: 1 },
];

/** Units a binding may declare for the stored value (beside the figure's units). */
const STORED: Record<string, { family: string; size: number }> = {
	fraction: { family: 'ratio', size: 1 },
	...Object.fromEntries(UNITS.map((u) => [u.unit, { family: u.family, size: u.size }])),
};

const unitOf = (written: string) =>
	UNITS.find((u) => new RegExp(`^(?:${u.re})$`).test(written)) ?? {
		unit: '',
		family: 'count',
		size: 1,
	};

const NUMBER_OR_WORD = `${NUM}|${Object.keys(WORD_NUMBERS).join('|')}`;
const UNIT_WORDS = UNITS.map((u) => u.re).join('|');
/** A figure as it ends the text before its binding. */
const FIGURE_END = new RegExp(
	String.raw`(?<![\w.,])(${NUMBER_OR_WORD})(?:(\s?[-–]\s?|\s*→\s*|\s(?:to|of)\s)(${NUMBER_OR_WORD}))?(?:\s?(${UNIT_WORDS}))?[*_]*$`,
	'i',
);
const BINDING = /<!-- = ([^>]*?) -->/g;

/** Parses the figure before a binding comment; throws with what to write when there is none. */
export function parseBinding(doc: string, line: number, text: string, at: number, body: string) {
	const before = text.slice(Math.max(0, at - 80), at);
	const m = FIGURE_END.exec(before);
	if (!m)
		throw new Error(
			`"<!-- = ${body} -->" follows no figure: write it right after the figure, with no space (e.g. 2.5 s<!-- = ${body} -->)`,
		);
	const parts = [m[1], m[3]].filter((x): x is string => x !== undefined);
	const numbers = parts.map((w) => {
		const word = WORD_NUMBERS[w.toLowerCase()];
		return {
			written: w,
			value: word ?? toNumber(w),
			decimals: word === undefined ? decimalsOf(w) : 0,
		};
	});
	let unit = m[4] ? unitOf(m[4]).unit : '';
	if (!m[4] && /^(once|twice|thrice)$/i.test(m[1])) unit = 'x';
	const words = body.trim().split(/\s+/);
	let stored: string | undefined;
	if (words.length > 1 && STORED[words[words.length - 1]]) stored = words.pop();
	const refs: Ref[] = [];
	for (const r of words
		.join(' ')
		.split(',')
		.map((x) => x.trim())) {
		const hash = r.indexOf('#');
		const file = hash > 0 ? r.slice(0, hash) : (refs[refs.length - 1]?.file ?? '');
		const key = hash >= 0 ? r.slice(hash + 1) : '';
		if (!file || !key)
			throw new Error(
				`"<!-- = ${body} -->": name each value as file#key (bench/results/x.json#a.b, nodes/x.ts#CONSTANT, test/x.test.ts#CONSTANT), or #key for the previous file's`,
			);
		refs.push({ file, key });
	}
	return {
		doc,
		line,
		figure: m[0].replace(/[*_]+$/, ''),
		numbers,
		unit,
		refs,
		stored,
		comment: `<!-- = ${body} -->`,
		start: at - m[0].length,
		end: at,
	} satisfies Omit<Binding, 'end'> & { end: number };
}

/** Every binding of a unit's text (its own line numbers are the unit's). */
export function bindings(doc: string, line: number, text: string): Array<Binding | Error> {
	const out: Array<Binding | Error> = [];
	for (const m of text.matchAll(BINDING)) {
		const at = m.index ?? 0;
		const l = line + text.slice(0, at).split('\n').length - 1;
		try {
			const b = parseBinding(doc, l, text, at, m[1]);
			out.push({ ...b, end: at + m[0].length });
		} catch (e) {
			out.push(Object.assign(e as Error, { line: l }));
		}
	}
	return out;
}

// --- reading the value a binding names

/** A value in a results file: `a.b.0.c`; a segment `k=v` picks the element whose `k` is `v`. */
export function jsonValue(json: unknown, key: string): unknown {
	let cur: unknown = json;
	for (const seg of key.split('.')) {
		if (cur === null || typeof cur !== 'object') return undefined;
		const eq = seg.indexOf('=');
		if (eq > 0) {
			const [k, v] = [seg.slice(0, eq), seg.slice(eq + 1)];
			const items = Array.isArray(cur) ? cur : Object.values(cur);
			const hits = items.filter(
				(x) => x && typeof x === 'object' && String((x as Record<string, unknown>)[k]) === v,
			);
			if (hits.length !== 1) return undefined;
			cur = hits[0];
		} else cur = (cur as Record<string, unknown>)[seg];
	}
	return cur;
}

/** The text of an expression that starts at `from`, up to the `,` `;` or line end at its depth. */
function expressionAt(text: string, from: number): string {
	let depth = 0;
	let i = from;
	for (; i < text.length; i++) {
		const c = text[i];
		if ('([{'.includes(c)) depth++;
		else if (')]}'.includes(c)) {
			if (depth === 0) break;
			depth--;
		} else if (depth === 0 && (c === ',' || c === ';' || c === '\n')) break;
	}
	return text.slice(from, i).trim();
}

const withoutComments = (code: string) =>
	code
		.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
		.replace(/(^|[^:])\/\/.*$/gm, '$1');

/**
 * A constant of a source or test file, by name (`NAME`, or `NAME.key.key` inside an object
 * literal), read from the text and evaluated: numbers, `_` separators, + - * / ( ) and other
 * constants of the same file. Throws naming what it could not read.
 */
export function constantValue(code: string, name: string, depth = 0, file?: string): number {
	const src = withoutComments(code);
	const [head, ...keys] = name.split('.');
	const decl = new RegExp(String.raw`\b(?:const|let|var)\s+${head}\b\s*(?::[^=;]+)?=\s*`).exec(src);
	if (!decl) {
		// imported from a file beside it: `import { NAME } from './x'`
		const imp = new RegExp(
			String.raw`import\s*(?:type\s+)?\{[^}]*\b(?:(\w+)\s+as\s+)?${head}\b[^}]*\}\s*from\s*'(\.{1,2}/[^']+)'`,
		).exec(src);
		if (imp && file && depth < 6) {
			const target = path.join(path.dirname(file), `${imp[2]}.ts`);
			if (fs.existsSync(target))
				return constantValue(
					fs.readFileSync(target, 'utf8'),
					[imp[1] ?? head, ...keys].join('.'),
					depth + 1,
					target,
				);
		}
		throw new Error(`no constant ${head} is declared`);
	}
	let expr = expressionAt(src, decl.index + decl[0].length);
	for (const k of keys) {
		const obj = /^(?:Object\.freeze\()?\s*\{([\s\S]*)\}/.exec(expr);
		if (!obj) throw new Error(`${name}: ${head} is not an object literal`);
		// a key at the object's top level
		const inner = obj[1];
		let found: string | undefined;
		let d = 0;
		for (let i = 0; i < inner.length; i++) {
			const c = inner[i];
			if ('([{'.includes(c)) d++;
			else if (')]}'.includes(c)) d--;
			else if (d === 0) {
				const km = new RegExp(String.raw`^['"]?${k}['"]?\s*:\s*`).exec(inner.slice(i));
				if (km && (i === 0 || /[\s,{]/.test(inner[i - 1]))) {
					found = expressionAt(inner, i + km[0].length);
					break;
				}
			}
		}
		if (found === undefined) throw new Error(`${name}: ${head} has no key ${k}`);
		expr = found;
	}
	expr = expr.replace(/\s+as\s+const\b|\s+satisfies\s+[\w.<>]+/g, '').replace(/(\d)_(?=\d)/g, '$1');
	const resolved = expr.replace(/\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\b/g, (id) => {
		if (depth > 5) throw new Error(`${name}: constants nested too deep`);
		return String(constantValue(code, id, depth + 1, file));
	});
	if (!/^[\d\s.+\-*/()e]+$/.test(resolved))
		throw new Error(`${name} is not a number: ${expr.slice(0, 60)}`);
	// Digits and operators only (checked above): evaluating them runs no other code.
	const v = Function(`return (${resolved});`)() as unknown;
	if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${name} is not a number`);
	return v;
}

/** A test's constant counts only if an assertion uses it after its declaration. */
export function asserted(code: string, name: string): boolean {
	const head = name.split('.')[0];
	const src = withoutComments(code);
	const decl = new RegExp(String.raw`\b(?:const|let|var)\s+${head}\b`).exec(src);
	if (!decl) return false;
	const rest = src.slice(decl.index + decl[0].length);
	return new RegExp(
		String.raw`expect\([^;]*\b${head}\b|\.(?:to\w+|rejects\.\w+|resolves\.\w+)\([^;]*\b${head}\b`,
	).test(rest);
}

/** The value a ref names, or why it cannot be read. */
export function refValue(ref: Ref, root = ROOT): number | string {
	const file = path.join(root, ref.file);
	if (!fs.existsSync(file)) return `${ref.file} does not exist`;
	if (ref.file.endsWith('.json')) {
		if (!isResults(ref.file))
			return `${ref.file}: a value comes from a results file in bench/results/`;
		const v = jsonValue(JSON.parse(fs.readFileSync(file, 'utf8')), ref.key);
		return typeof v === 'number' ? v : `${ref.file} has no number at ${ref.key}`;
	}
	if (!/^(nodes|credentials|bench|test)\/.+\.ts$/.test(ref.file))
		return `${ref.file}: name a bench/results/*.json key, or a constant of nodes/, credentials/, bench/ or test/`;
	const code = fs.readFileSync(file, 'utf8');
	try {
		const v = constantValue(code, ref.key, 0, file);
		if (ref.file.startsWith('test/') && !asserted(code, ref.key))
			return `${ref.file}: ${ref.key} is in no assertion (expect(…) or .toBe…(…) after its declaration): a test's figure is a value it asserts`;
		return v;
	} catch (e) {
		return `${ref.file}: ${(e as Error).message}`;
	}
}

/** The figure's numbers as the bound values render them, or the problem. */
export function checkBinding(b: Binding, root = ROOT): string | undefined {
	if (b.refs.length !== b.numbers.length)
		return `"${b.figure}" has ${b.numbers.length} number(s) and ${b.comment} names ${b.refs.length}: name one value per number`;
	const figureUnit = UNITS.find((u) => u.unit === b.unit) ?? { family: 'count', size: 1 };
	let factor = 1;
	if (b.stored) {
		const s = STORED[b.stored];
		if (s.family !== figureUnit.family)
			return `"${b.figure}": the stored unit ${b.stored} is not a unit of ${b.unit || 'a count'}`;
		factor = s.size / figureUnit.size;
	}
	const wrong: string[] = [];
	b.refs.forEach((ref, i) => {
		const v = refValue(ref, root);
		if (typeof v === 'string') {
			wrong.push(v);
			return;
		}
		const n = b.numbers[i];
		const shown = (v * factor).toFixed(n.decimals);
		const written = n.value.toFixed(n.decimals);
		if (shown !== written)
			wrong.push(
				`${ref.file}#${ref.key} is ${v}${b.stored ? ` ${b.stored}` : ''}, which renders as ${shown}${b.unit ? ` ${b.unit}` : ''} at the precision written, not ${n.written}`,
			);
	});
	return wrong.length ? `"${b.figure}": ${wrong.join('; ')}` : undefined;
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

/** Figures in words and whole units ("a minute", "10 minutes", "60 s", "twice the reads", "3 of 6"). */
export function wholeFigures(text: string): Figure[] {
	const seen = prose(text);
	const out: Figure[] = [];
	const words = Object.keys(WORD_NUMBERS)
		.filter((w) => !['once', 'twice', 'thrice', 'half'].includes(w))
		.join('|');
	const time = new RegExp(
		String.raw`(?<![\w.,])(?:\d+(?:\s?[-–]\s?\d+)?\s?(?:s|sec|seconds?|min|minutes?|h|hours?|days?)|(?:${words})\s(?:seconds?|minutes?|hours?|days?)|\d+\s(?:a|per)\s(?:second|minute|hour))\b`,
		'gi',
	);
	for (const m of seen.matchAll(time)) {
		// "a second workflow" is an ordinal, not a time
		if (/^a second$/i.test(m[0])) continue;
		out.push({ text: m[0], values: [], decimals: [], unit: 'time' });
	}
	for (const m of seen.matchAll(/(?<![\w.])(twice|half|three times|ten times)\s(the|as)\b/gi))
		out.push({ text: m[0], values: [], decimals: [], unit: 'x' });
	for (const f of counts(text)) out.push(f);
	return out;
}

const HOW =
	"bind it: write the figure followed by <!-- = FILE#KEY --> with no space, where FILE#KEY is a bench/results/*.json key path (a.b.0.c; k=v picks the row whose k is v), a nodes/, credentials/ or bench/ constant (NAME or NAME.key), or a test/ constant that an assertion uses; add the stored unit when it is not the figure's (ms, s, min, h, B, kB, MB, GB, fraction), e.g. 2.5 s<!-- = bench/results/polling-faults.json#polling.rows.1.adaptive.lagMedianMs ms -->";

export function check(root = ROOT, git: GitView = gitView(root)): Problem[] {
	const problems: Problem[] = [];
	const provenance = new Map<string, string | undefined>();
	const results = (rel: string, context: string, doc: string, line: number) => {
		const key = `${rel}\n${MEASURED_AT.exec(context)?.[1] ?? ''}`;
		if (!provenance.has(key)) provenance.set(key, provenanceProblem(rel, context, git, root));
		const p = provenance.get(key);
		if (p) problems.push({ doc, line, message: p });
	};
	for (const doc of docFiles(root)) {
		const text = scanned(doc, fs.readFileSync(path.join(root, doc), 'utf8'), root);
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
			let rest = u.text;
			for (const b of bindings(doc, u.line, u.text).reverse()) {
				if (b instanceof Error) {
					problems.push({ doc, line: (b as Error & { line: number }).line, message: b.message });
					continue;
				}
				const wrong = checkBinding(b, root);
				if (wrong) problems.push({ doc, line: b.line, message: wrong });
				for (const ref of b.refs) if (isResults(ref.file)) results(ref.file, u.text, doc, b.line);
				rest = rest.slice(0, b.start) + ' '.repeat(b.end - b.start) + rest.slice(b.end);
			}
			for (const f of [...figures(rest), ...wholeFigures(rest)])
				problems.push({ doc, line: u.line, message: `"${f.text}" names no value: ${HOW}` });
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
	} else
		process.stdout.write('every figure in README.md, CHANGELOG.md and docs/ names its value\n');
}
