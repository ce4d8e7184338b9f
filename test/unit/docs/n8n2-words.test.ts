/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it reads README.md and docs/ from disk */
// The README and the guides speak of n8n 2.x as users see it (issue 50): a workflow is
// Published (the button; edits stay in draft until published again), not activated with a
// switch; a guide that means "run the workflow" says Execute workflow, since Execute step runs
// one node only (on a Form Trigger: the form, and no video ever comes).
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The README and every guide its "Three jobs" table links. */
function userPages(): string[] {
	const readme = read('README.md');
	const table = readme.slice(readme.indexOf('## Three jobs'), readme.indexOf('## Operations'));
	const guides = [...table.matchAll(/\]\((docs\/[a-z-]+\.md)\)/g)].map((m) => m[1]);
	return ['README.md', ...new Set(guides)];
}

/** Sentences of n8n 1.x: what each found line should say instead. */
const OLD_WORDS: Array<{ pattern: RegExp; instead: string }> = [
	{ pattern: /\bactivat(e|es|ed|ing)\b/i, instead: 'Publish (n8n 2.x)' },
	{ pattern: /\bdeactivat(e|es|ed|ing)\b/i, instead: 'unpublish / no longer published' },
	{ pattern: /switch at the top/i, instead: 'the Publish button' },
	{ pattern: /\bactive workflows?\b/i, instead: 'published workflow' },
];

/** "Execute step" is allowed only where the text says it is not the button to press. */
const EXECUTE_STEP = /execute step/i;
const EXECUTE_STEP_WARNED = /not _?\*?\*?execute step/i;

function findings(text: string): string[] {
	const found: string[] = [];
	text.split('\n').forEach((line, i) => {
		for (const { pattern, instead } of OLD_WORDS) {
			if (pattern.test(line)) found.push(`line ${i + 1}: "${line.trim()}" (say: ${instead})`);
		}
		if (EXECUTE_STEP.test(line) && !EXECUTE_STEP_WARNED.test(line)) {
			found.push(`line ${i + 1}: "${line.trim()}" (say: Execute workflow)`);
		}
	});
	return found;
}

test('the README links its three guides', () => {
	expect(userPages()).toEqual([
		'README.md',
		'docs/spreadsheet-to-videos.md',
		'docs/form-photos-to-videos.md',
		'docs/agent-videos.md',
	]);
});

test.each(userPages())('%s says Publish and Execute workflow, as n8n 2.x does', (file) => {
	expect(findings(read(file))).toEqual([]);
});

test('the check finds what n8n 1.x guides said', () => {
	expect(findings('**Activate** the workflow (the switch at the top).')).toHaveLength(2);
	expect(findings('Click **Execute step** and try the form.')).toHaveLength(1);
	expect(findings('Click **Execute workflow** (not _Execute step_, which runs one node).')).toEqual(
		[],
	);
	expect(findings('Duplicates are remembered only for active workflows.')).toHaveLength(1);
});
