/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it reads docs/, examples/ and the package's sources from disk */
// Every word a guide sets in bold or italics has its place listed (guideControls.ts), and what
// can be checked without an editor is: the nodes are in the guide's examples, the workflow names
// are the examples', the package's names are the package's. The editor layer follows the rest.
import * as fs from 'node:fs';
import * as path from 'node:path';

import {
	COMMON,
	GUIDES,
	ROOT,
	guideWords,
	readExample,
	readGuide,
	type Guide,
} from './guideControls';

const byFile = (guide: Guide) => guide.file;

test.each(GUIDES.map((g) => [byFile(g), g] as const))(
	'%s: every word in bold or italics has its place listed, and no place is listed for a word the guide no longer uses',
	(_, guide) => {
		const used = guideWords(readGuide(guide));
		expect(used.filter((w) => !(w in guide.places))).toEqual([]);
		const common = new Set(Object.keys(COMMON));
		expect(Object.keys(guide.places).filter((w) => !used.includes(w) && !common.has(w))).toEqual(
			[],
		);
	},
);

test.each(GUIDES.map((g) => [byFile(g), g] as const))(
	"%s: its nodes and panels are the examples' own, its workflow names the examples' names",
	(_, guide) => {
		const examples = guide.examples.map(readExample);
		const nodes = new Set(examples.flatMap((e) => e.nodes.map((n) => n.name)));
		for (const [word, place] of Object.entries(guide.places)) {
			if (place.kind === 'node')
				expect([word, nodes.has(place.name ?? word)]).toEqual([word, true]);
			if (place.kind === 'field' || (place.kind === 'ui' && typeof place.from === 'object')) {
				const owner = place.kind === 'field' ? place.node : (place.from as { node: string }).node;
				expect([word, nodes.has(owner)]).toEqual([word, true]);
			}
			if (place.kind === 'workflow')
				expect([word, examples.some((e) => e.name === word)]).toEqual([word, true]);
		}
	},
);

test("the package's names the guides use are the package's", () => {
	const credential = fs.readFileSync(
		path.join(ROOT, 'credentials', 'MediaGenerationApi.credentials.ts'),
		'utf8',
	);
	for (const guide of GUIDES)
		for (const [word, place] of Object.entries(guide.places))
			if (place.kind === 'package') expect(credential).toContain(`displayName = '${word}'`);
});

test('the word list finds bold and italics, not code, links or HTML comments', () => {
	expect(
		guideWords(
			'Click **Publish** (the _Production URL_), not `**code**`, <!-- **hidden** --> a_b_c\n**two\nlines** and **`products`**',
		),
	).toEqual(['Publish', 'two lines', '`products`', 'Production URL']);
});

// docs/form-photos-to-videos.md states the example's settings as figures bound to these
// (CONTRIBUTING.md, "Figures in the docs"): the example must set them.
const FORM_EXAMPLE = { durationSeconds: 4, timeoutMinutes: 15 };

test("form-photos-to-videos.md's Duration and Timeout are the example's", () => {
	const example = readExample('form-photo-to-video.json');
	const params = (node: string) => example.nodes.find((n) => n.name === node)?.parameters ?? {};
	const animate = params('Animate Photo').vidmodel20FastOptions as { duration?: unknown };
	const wait = params('Wait for Video').options as { timeoutMinutes?: unknown };
	expect(animate.duration).toBe(FORM_EXAMPLE.durationSeconds);
	expect(wait.timeoutMinutes).toBe(FORM_EXAMPLE.timeoutMinutes);
});
