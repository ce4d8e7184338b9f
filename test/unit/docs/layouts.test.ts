/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply; it reads README.md and docs/ from disk */
// README.md's promise and docs/reliability.md's layout table say what each layout keeps when n8n
// stops, from one source (layouts.ts), and every claim names a test that shows it.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { LAYOUTS, README_PROMISE, tableRows } from './layouts';

const ROOT = path.join(__dirname, '..', '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const words = (text: string) => text.replace(/\s+/g, ' ').trim();

const START = '<!-- layouts: written from test/unit/docs/layouts.ts -->';
const END = '<!-- /layouts -->';

/** The cells of a markdown table (prettier may pad them), without the separator row. */
function cellsOf(table: string): string[][] {
	return table
		.split('\n')
		.map((l) => l.trim())
		.filter((l) => l.startsWith('|') && !/^\|[\s|:-]+\|$/.test(l))
		.map((l) =>
			l
				.slice(1, -1)
				.split(/(?<!\\)\|/)
				.map((c) => c.trim()),
		);
}

/** The index just past the call whose opening parenthesis is at \`open\` (string literals skipped). */
function callEnd(src: string, open: number): number {
	let depth = 0;
	for (let i = open; i < src.length; i++) {
		const ch = src[i];
		if (ch === "'" || ch === '"' || ch === '`') {
			for (i++; i < src.length && src[i] !== ch; i++) if (src[i] === '\\') i++;
		} else if (ch === '(') depth++;
		else if (ch === ')' && --depth === 0) return i + 1;
	}
	return src.length;
}

/** The source without the blocks jest skips whole: \`describe.skip(…)\`, \`xdescribe(…)\`. */
function withoutSkippedBlocks(src: string): string {
	const skipped = /(?<![.\w$])(?:describe\.skip|xdescribe)(?:\.each\([\s\S]*?\)\s*)?\(/g;
	let out = src;
	for (let m = skipped.exec(out); m; m = skipped.exec(out)) {
		const end = callEnd(out, m.index + m[0].length - 1);
		out = `${out.slice(0, m.index)}${' '.repeat(end - m.index)}${out.slice(end)}`;
	}
	return out;
}

/**
 * The titles of the tests a file runs: an \`it(\` or \`test(\` call (or \`.only\`, \`.each(…)\`)
 * outside comments and skipped blocks, whose title is a string literal; \`it.skip\`, \`xit\`,
 * \`test.todo\`, a test inside \`describe.skip\`/\`xdescribe\` and a title in a comment are not
 * tests that run.
 */
export function runningTitles(code: string): string[] {
	const src = withoutSkippedBlocks(
		code.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:'"`])\/\/.*$/gm, '$1'),
	);
	const call =
		/(?<![.\w$])(?:it|test)(?:\.only)?(?:\.each\([\s\S]*?\)\s*)?\(\s*(['"`])((?:\\.|(?!\1)[\s\S])*)\1/g;
	return [...src.matchAll(call)].map((m) => words(m[2].replace(/\\(.)/g, '$1')));
}

describe('what each layout keeps when n8n stops: one source for README.md and docs/reliability.md', () => {
	it("README.md's promise is the source's, word for word", () => {
		expect(words(read('README.md'))).toContain(words(README_PROMISE));
	});

	it("docs/reliability.md's layout table is the source's, cell for cell", () => {
		const doc = read('docs/reliability.md');
		const from = doc.indexOf(START);
		const to = doc.indexOf(END);
		expect(from).toBeGreaterThan(0);
		expect(to).toBeGreaterThan(from);
		expect(doc.slice(0, from)).toMatch(/## What each layout keeps\n/);
		expect(cellsOf(doc.slice(from, to))).toEqual(tableRows());
	});

	it('every claim names a test that shows it, and that test exists; the others say "not tested"', () => {
		for (const layout of LAYOUTS) {
			for (const cell of layout.cells) {
				if (!cell.shownBy) {
					expect(cell.text).toBe('not tested');
					continue;
				}
				for (const shown of [cell.shownBy].flat()) {
					const found = runningTitles(read(shown.file)).some((t) => t.includes(words(shown.title)));
					expect(`${shown.file}: ${shown.title}: ${found}`).toBe(
						`${shown.file}: ${shown.title}: true`,
					);
				}
			}
		}
	});
});

describe('a layout cell names a test that runs', () => {
	it('finds it(…) and test(…) titles, not skipped ones nor titles in comments', () => {
		const code = [
			"it('runs this', () => {});",
			'test("and this", async () => {});',
			"it.skip('not this skipped one', () => {});",
			"xit('nor this', () => {});",
			"// it('nor one in a comment', () => {});",
			"/* test('nor a block comment', () => {}); */",
			"describe.skip('a skipped block (with a paren in its title', () => {",
			"\tit('nor one in a skipped describe', () => { expect(f(')')).toBe(1); });",
			'});',
			"xdescribe('another', () => { test('nor one in an xdescribe', () => {}); });",
			"describe('a running block', () => { it('but this one', () => {}); });",
		].join('\n');
		expect(runningTitles(code)).toEqual(['runs this', 'and this', 'but this one']);
	});
});
