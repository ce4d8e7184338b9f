/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it reads README, docs/, CHANGELOG and package.json from disk */
// README and each guide open with what they need (issue 50, item 4): the package version that
// has what they describe, the oldest n8n the tests run, and that n8n must be self-hosted. The
// version named must be one CHANGELOG.md has released, and not later than package.json's.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { N8N_OLDEST_VERSION } from '../../../tools/ensure-n8n';
import { GUIDES, ROOT } from './guideControls';

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const flat = (text: string) => text.replace(/\s+/g, ' ');
const semver = (v: string) => v.split('.').map(Number);
const notAfter = (a: string, b: string) => {
	const [x, y] = [semver(a), semver(b)];
	for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] < y[i];
	return true;
};

const packageVersion = (JSON.parse(read('package.json')) as { version: string }).version;
const released = [
	...read('CHANGELOG.md').matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/gm),
].map((m) => m[1]);

/** The part of a doc that says what it needs: README's Installation, a guide's What you need. */
function needs(file: string): string {
	const text = read(file);
	const heading = file === 'README.md' ? '## Installation' : '## What you need';
	const start = text.indexOf(`\n${heading}\n`);
	expect(start).toBeGreaterThan(-1);
	const end = text.indexOf('\n## ', start + 1);
	return flat(text.slice(start, end < 0 ? undefined : end));
}

describe('README and each guide say what they need', () => {
	it("CHANGELOG's newest release is package.json's version", () => {
		expect(released[0]).toBe(packageVersion);
	});

	for (const file of ['README.md', ...GUIDES.map((g) => g.file)]) {
		it(`${file}: a self-hosted n8n ${N8N_OLDEST_VERSION} or later 2.x, and a released package version`, () => {
			const text = needs(file);
			expect(text).toMatch(/self-hosted/i);
			expect(text).toContain(`n8n ${N8N_OLDEST_VERSION} or later 2.x`);
			const named = /version (\d+\.\d+\.\d+) or later of (?:this|the) package/.exec(text)?.[1];
			expect(named).toBeDefined();
			expect(released).toContain(named);
			expect(notAfter(named!, packageVersion)).toBe(true);
		});
	}
});
