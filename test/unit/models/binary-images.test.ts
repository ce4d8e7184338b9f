// The panels' binary reference images (issue 34): which fields map to image_urls in which order,
// the names and counts refused before any file is read, saved URL workflows unchanged, the AI
// Agent tool kept to URLs, and the link's token masked wherever a text shows it.
import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { validateSubmission } from '../../../nodes/MediaGeneration/models';
import { MediaGeneration } from '../../../nodes/MediaGeneration/MediaGeneration.node';
import { pendingImageUrl } from '../../../nodes/shared/transport/binaryImageLinks';
import { scrubSecret } from '../../../nodes/shared/transport/faults';
import { accepted, rejected } from './helpers';

const FAST = 'vidmodel-2.0-fast/image-to-video';
const PRO = 'vidmodel-1.5-pro';
const fast = (more: Record<string, unknown> = {}) => ({
	prompt: 'p',
	frameSource: 'binary',
	...more,
});
const pro = (fields: unknown, more: Record<string, unknown> = {}) => ({
	prompt: 'p',
	aspectRatio: '1:1',
	duration: 4,
	vidmodel15ProOptions: { imageBinaryFields: fields, ...more },
});

function binaryImagesOf(model: string, params: Record<string, unknown>) {
	const result = validateSubmission(model, params);
	if (!result.ok) throw new Error(result.errors.join('\n'));
	return { refs: result.binaryImages, imageUrls: result.input.image_urls };
}

describe('Vidmodel 2.0 Fast: Frames From → Binary Files', () => {
	it('takes the start frame from "data" unless told otherwise, and the end frame second', () => {
		expect(binaryImagesOf(FAST, fast())).toEqual({
			refs: [{ property: 'data', label: 'Start Frame Binary Field' }],
			imageUrls: [pendingImageUrl(0)],
		});
		expect(
			binaryImagesOf(
				FAST,
				fast({
					startFrameBinaryField: ' first ',
					vidmodel20FastOptions: { endFrameBinaryField: 'last' },
				}),
			).refs,
		).toEqual([
			{ property: 'first', label: 'Start Frame Binary Field' },
			{ property: 'last', label: 'End Frame Binary Field' },
		]);
	});

	it('ignores the URL fields a user filled before switching to Binary Files', () => {
		const { refs, imageUrls } = binaryImagesOf(
			FAST,
			fast({
				startFrameUrl: 'https://f.example.com/a.png',
				vidmodel20FastOptions: { endFrameUrl: 'https://f.example.com/b.png' },
			}),
		);
		expect(refs).toHaveLength(1);
		expect(imageUrls).toEqual([pendingImageUrl(0)]);
	});

	it('refuses an empty field name, and image_urls in Additional Input Fields, naming both', () => {
		expect(rejected(FAST, fast({ startFrameBinaryField: '' }))).toEqual([
			`"startFrameBinaryField" (Start Frame Binary Field) is empty for model ${FAST}; allowed: the name of a binary field of the input item, such as "data"`,
		]);
		expect(
			rejected(
				FAST,
				fast({ additionalInputFields: '{"image_urls": ["https://f.example.com/a.png"]}' }),
			),
		).toEqual([
			`"image_urls" is set in "Additional Input Fields" while the images come from "Start Frame Binary Field and End Frame Binary Field" for model ${FAST}; allowed: one of them`,
		]);
	});

	it('sends the same body as before for a workflow saved without Frames From (URLs)', () => {
		const saved = { prompt: 'p', startFrameUrl: 'https://f.example.com/a.png' };
		const result = accepted(FAST, saved);
		expect(result.input).toEqual({ prompt: 'p', image_urls: ['https://f.example.com/a.png'] });
		expect((result as { binaryImages?: unknown }).binaryImages).toBeUndefined();
	});
});

describe('Vidmodel 1.5 Pro: Reference Image Binary Fields', () => {
	it('maps up to 2 fields in order; an expression may give them as one text', () => {
		expect(binaryImagesOf(PRO, pro(['b', 'a'])).refs).toEqual([
			{ property: 'b', label: 'Reference Image Binary Fields' },
			{ property: 'a', label: 'Reference Image Binary Fields' },
		]);
		expect(binaryImagesOf(PRO, pro('b, a')).refs?.map((r) => r.property)).toEqual(['b', 'a']);
		expect(binaryImagesOf(PRO, pro(['a', ' '])).imageUrls).toEqual([pendingImageUrl(0)]);
	});

	it('no field: text-to-video as before, nothing sent as image_urls', () => {
		expect(accepted(PRO, pro([])).input.image_urls).toBeUndefined();
	});

	it('refuses 3 fields, a field that is not a name, and fields together with URLs', () => {
		expect(rejected(PRO, pro(['a', 'b', 'c']))).toEqual([
			`"Reference Image Binary Fields" names 3 binary fields ("a", "b", "c") for model ${PRO}; allowed: at most 2`,
		]);
		expect(rejected(PRO, pro([7]))).toEqual([
			`"imageBinaryFields[0]" (Reference Image Binary Fields) is 7 for model ${PRO}; allowed: the name of a binary field of the input item, such as "data"`,
		]);
		expect(rejected(PRO, pro(['a'], { imageUrls: ['https://f.example.com/a.png'] }))).toEqual([
			`"image_urls" is set in "Reference Image URLs" while the images come from "Reference Image Binary Fields" for model ${PRO}; allowed: one of them`,
		]);
	});
});

describe('the AI Agent tool stays URL-only', () => {
	const node = new MediaGeneration().description as INodeTypeDescription;
	const asTool = { ...node, name: `${node.name}Tool` } as INodeTypeDescription;
	const shown = (description: INodeTypeDescription, model: string, name: string) => {
		const values = NodeHelpers.getNodeParameters(
			description.properties,
			{ resource: 'video', operation: 'generate', model },
			true,
			false,
			{ typeVersion: 1 },
			description,
		)!;
		const visit = (props: INodeProperties[]): INodeProperties[] =>
			props.flatMap((p) =>
				p.type === 'collection' ? [p, ...visit(p.options as INodeProperties[])] : [p],
			);
		const property = visit(description.properties).find(
			(p) =>
				p.name === name &&
				(p.displayOptions?.show?.model === undefined ||
					(p.displayOptions.show.model as string[]).includes(model)),
		)!;
		return NodeHelpers.displayParameter(values, property, { typeVersion: 1 }, description);
	};

	it.each([
		[FAST, 'frameSource'],
		[PRO, 'imageBinaryFields'],
	])('%s: %s shows in the node, not in the tool', (model, name) => {
		expect(shown(node, model, name)).toBe(true);
		expect(shown(asTool, model, name)).toBe(false);
	});
});

describe('the link token in texts', () => {
	it('is masked wherever a text quotes the link, plain or inside another URL', () => {
		// A JWT's three parts: header, claims ({"id":"filesystem-v2:x"}), signature.
		const jwt = ['eyJhbGciOiJIUzI1NiJ9', 'eyJpZCI6ImZpbGVzeXN0ZW0tdjI6eCJ9', 'c2lnbmF0dXJl'].join(
			'.',
		);
		const link = `https://n8n.example.com/rest/binary-data/signed?token=${jwt}`;
		const texts = [
			`image_urls[0] could not be fetched from ${link}: HTTP 404`,
			`{"image_urls":["${link}"]}`,
			`https://proxy.example.com/?u=${encodeURIComponent(link)}`,
		];
		for (const text of texts) expect(scrubSecret(text)).not.toContain('c2lnbmF0dXJl');
		expect(scrubSecret(texts[0])).toMatch(
			/^image_urls\[0\] could not be fetched from https:\/\/n8n\.example\.com\/rest\/binary-data\/signed\?token=\*\*\*/,
		);
	});
});
