import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import {
	generateProperties,
	getModel,
	MODELS,
	modelsOf,
	validateSubmission,
	type MediaKind,
} from '../../../nodes/MediaGeneration/models';
import { frame } from './node-frame';

const KINDS: MediaKind[] = ['image', 'video', 'music'];

const allProperties = [...frame, ...KINDS.flatMap((k) => generateProperties(k))];
// Named as the node is: n8n reads the name for '@tool' conditions (the AI Agent tool's panel).
const description = { name: 'mediaGeneration', properties: allProperties } as INodeTypeDescription;

/** A model's dropdowns (`options` fields), top-level and inside its optional-fields collection. */
function dropdownsOf(model: (typeof MODELS)[number]) {
	const collection = model.properties.find((p) => p.type === 'collection');
	return [
		...model.properties
			.filter((p) => p.type === 'options')
			.map((p) => ({ p, inCollection: false })),
		...((collection?.options ?? []) as INodeProperties[])
			.filter((p) => p.type === 'options')
			.map((p) => ({ p, inCollection: true })),
	];
}

/** What the editor stores for a fresh node with this model selected (defaults included). */
function freshNode(kind: MediaKind, model: string) {
	return NodeHelpers.getNodeParameters(
		allProperties,
		{ resource: kind, operation: 'generate', model },
		true,
		false,
		{ typeVersion: 1 },
		description,
	)!;
}

/**
 * Per model: its required fields filled in, the exact `input` that must then be sent, and the
 * fields a fresh node is rejected for. A new model needs an entry here.
 */
const FIXTURES: Record<
	string,
	{ required: Record<string, unknown>; sends: Record<string, unknown>; freshErrors: string[] }
> = {
	'vidmodel-1.5-pro': {
		required: { prompt: 'p', aspectRatio: '16:9', duration: 8 },
		sends: { prompt: 'p', aspect_ratio: '16:9', duration: 8 },
		// Aspect ratio and duration are preselected (16:9, 4 s): only the prompt is missing.
		freshErrors: ['prompt'],
	},
	'vidmodel-2.0-fast/image-to-video': {
		required: { prompt: 'p', startFrameUrl: 'https://f.example.com/a.png' },
		sends: { prompt: 'p', image_urls: ['https://f.example.com/a.png'] },
		freshErrors: ['prompt', 'image_urls[0]'],
	},
	'video-by-id': {
		required: { prompt: 'p', modelId: 'm-1' },
		sends: { prompt: 'p' },
		freshErrors: ['modelId', 'prompt'],
	},
	'image-by-id': {
		required: { prompt: 'p', modelId: 'm-1' },
		sends: { prompt: 'p' },
		freshErrors: ['modelId', 'prompt'],
	},
	'generate-music': { required: { prompt: 'p' }, sends: { prompt: 'p' }, freshErrors: ['prompt'] },
};
/** Fields a fresh node does not show: they appear once another image source is chosen. */
const SHOWN_ON_CHOICE: Record<string, string[]> = {
	'vidmodel-2.0-fast/image-to-video': ['startFrameBinaryField'],
};
const REQUIRED = Object.fromEntries(Object.entries(FIXTURES).map(([k, f]) => [k, f.required]));

describe('model registry', () => {
	it('has unique keys, and getModel/modelsOf find each model', () => {
		expect(new Set(MODELS.map((m) => m.key)).size).toBe(MODELS.length);
		for (const model of MODELS) {
			expect(getModel(model.key)).toBe(model);
			expect(modelsOf(model.kind)).toContain(model);
		}
		expect(() => getModel('no-such-model')).toThrow('Unknown model "no-such-model"');
	});

	it('offers the models named by the spec', () => {
		expect(modelsOf('video').map((m) => m.key)).toEqual([
			'vidmodel-1.5-pro',
			'vidmodel-2.0-fast/image-to-video',
			'video-by-id',
		]);
		expect(modelsOf('image').map((m) => m.key)).toEqual(['image-by-id']);
		expect(modelsOf('music').map((m) => m.key)).toEqual(['generate-music']);
	});

	it.each(KINDS)(
		'lists every %s model in that resource’s Model dropdown, if it has several',
		(kind) => {
			const dropdown = generateProperties(kind).filter((p) => p.name === 'model');
			// A dropdown with one entry is noise: a resource with one model shows none.
			if (modelsOf(kind).length === 1) {
				expect(dropdown).toHaveLength(0);
				return;
			}
			expect(dropdown).toHaveLength(1);
			expect(dropdown[0].type).toBe('options');
			expect(dropdown[0].displayOptions).toEqual({
				show: { resource: [kind], operation: ['generate'] },
			});
			expect(dropdown[0].options!.map((o) => (o as { value: string }).value)).toEqual(
				modelsOf(kind).map((m) => m.key),
			);
			expect(dropdown[0].default).toBe(modelsOf(kind)[0].key);
		},
	);

	it.each(KINDS)('shows every %s field only for its own model, resource and operation', (kind) => {
		const keys = modelsOf(kind).map((m) => m.key);
		for (const property of generateProperties(kind).filter((p) => p.name !== 'model')) {
			const show = property.displayOptions?.show;
			expect(show?.resource).toEqual([kind]);
			expect(show?.operation).toEqual(['generate']);
			if (keys.length > 1)
				expect((show?.model as string[]).every((k) => keys.includes(k))).toBe(true);
			else expect(show?.model).toBeUndefined();
		}
	});

	it('never gives one parameter name two types', () => {
		const types = new Map<string, Set<string>>();
		const visit = (props: INodeProperties[], scope: string) => {
			for (const p of props) {
				const key = `${scope}${p.name}`;
				types.set(key, (types.get(key) ?? new Set()).add(p.type));
				if (p.type === 'collection') visit(p.options as INodeProperties[], `${key}.`);
			}
		};
		visit(allProperties, '');
		const clashes = [...types]
			.filter(([, t]) => t.size > 1)
			.map(([name, t]) => `${name}: ${[...t].join('/')}`);
		expect(clashes).toEqual([]);
	});

	describe.each(MODELS.map((m) => [m.key, m] as const))('%s in the editor', (key, model) => {
		const fresh = freshNode(model.kind, key);

		it('shows exactly this model’s fields', () => {
			const shownOnChoice = SHOWN_ON_CHOICE[key] ?? [];
			expect(Object.keys(fresh).sort()).toEqual(
				[
					'resource',
					'operation',
					...(modelsOf(model.kind).length > 1 ? ['model'] : []),
					...(model.modelId === undefined ? ['modelId'] : []),
					...model.properties.map((p) => p.name).filter((n) => !shownOnChoice.includes(n)),
					'additionalInputFields',
				].sort(),
			);
		});

		it('keeps optional fields in one collection, empty by default', () => {
			const collections = model.properties.filter((p) => p.type === 'collection');
			expect(collections).toHaveLength(1);
			expect(fresh[collections[0].name]).toEqual({});
			for (const p of model.properties.filter((p) => p.type !== 'collection'))
				expect(p.required).toBe(true);
		});

		it('flags the required fields a fresh node leaves empty, as the editor does', () => {
			const issues = NodeHelpers.getNodeParametersIssues(
				allProperties,
				{ id: '1', name: 'n', type: 't', typeVersion: 1, position: [0, 0], parameters: fresh },
				description,
			);
			const required = [
				...(model.modelId === undefined ? ['modelId'] : []),
				...model.properties.filter((p) => p.required && p.default === '').map((p) => p.name),
			];
			expect(Object.keys(issues?.parameters ?? {}).sort()).toEqual(required.sort());
		});

		it('sends nothing the user did not choose: a fresh node is rejected for its required fields only; filled in, it sends just those', () => {
			const fixture = FIXTURES[key];
			const fresh_ = validateSubmission(key, fresh);
			if (fresh_.ok) throw new Error('a fresh node was accepted');
			expect(fresh_.errors.map((e) => /^"([^"]+)"/.exec(e)![1])).toEqual(fixture.freshErrors);
			const filled = validateSubmission(key, { ...fresh, ...fixture.required });
			if (!filled.ok) throw new Error(filled.errors.join('\n'));
			expect(filled.input).toEqual(fixture.sends);
		});
	});

	// Models whose panel has no dropdown (no `options` field, top-level or in the collection):
	// named here, so that the test below covers every other model, and a dropdown added to one
	// of these moves it there.
	const WITHOUT_DROPDOWNS = ['video-by-id', 'image-by-id', 'generate-music'];

	it('has no dropdown exactly in the models named as such', () => {
		expect(MODELS.filter((m) => dropdownsOf(m).length === 0).map((m) => m.key)).toEqual(
			WITHOUT_DROPDOWNS,
		);
	});

	describe.each(
		MODELS.filter((m) => !WITHOUT_DROPDOWNS.includes(m.key)).map((m) => [m.key, m] as const),
	)('%s in the editor', (key, model) => {
		it('accepts every value its dropdowns offer', () => {
			const dropdowns = dropdownsOf(model);
			expect(dropdowns.length).toBeGreaterThan(0);
			const collection = model.properties.find((p) => p.type === 'collection')!;
			const refused: string[] = [];
			const ignored: string[] = [];
			const submit = (p: INodeProperties, inCollection: boolean, value: unknown) =>
				validateSubmission(
					key,
					inCollection
						? { ...REQUIRED[key], [collection.name]: { [p.name]: value } }
						: { ...REQUIRED[key], [p.name]: value },
				);
			for (const { p, inCollection } of dropdowns) {
				const options = p.options as Array<{ value: string | number }>;
				expect(options.length).toBeGreaterThan(0);
				for (const option of options) {
					const result = submit(p, inCollection, option.value);
					if (!result.ok) refused.push(`${p.name} = ${option.value}: ${result.errors.join('; ')}`);
				}
				// The check reads the dropdown (a value it does not offer is refused, quoted in the
				// error), so the values above were accepted by the check, not ignored by it.
				const other = submit(p, inCollection, 'not-an-option');
				const quoted = !other.ok && other.errors.some((e) => e.includes('"not-an-option"'));
				if (!quoted) ignored.push(p.name);
			}
			expect(refused).toEqual([]);
			expect(ignored).toEqual([]);
		});
	});

	it('tells the 2.0 fast model’s users where the audio option goes', () => {
		const additional = generateProperties('video').find(
			(p) =>
				p.name === 'additionalInputFields' &&
				(p.displayOptions?.show?.model as string[])[0] === 'vidmodel-2.0-fast/image-to-video',
		);
		expect(additional?.hint).toMatch(/audio option/);
		// Users know no spec: the panel speaks of their service.
		expect(additional?.hint).not.toMatch(/spec/i);
	});

	it('never shows a W:H example as a grey placeholder that looks like a value', () => {
		const visit = (props: INodeProperties[]): INodeProperties[] =>
			props.flatMap((p) => (p.type === 'collection' ? visit(p.options as INodeProperties[]) : [p]));
		const placeholders = visit(allProperties)
			.map((p) => p.placeholder)
			.filter((p): p is string => typeof p === 'string' && /^\d+:\d+$/.test(p));
		expect(placeholders).toEqual([]);
	});

	it('labels the resolutions of vidmodel-1.5-pro with the spec’s wording', () => {
		const options = getModel('vidmodel-1.5-pro').properties.find((p) => p.type === 'collection')!
			.options as INodeProperties[];
		const resolution = options.find((p) => p.name === 'resolution')!;
		expect(resolution.options).toEqual([
			{ name: '480p (Standard)', value: '480p' },
			{ name: '720p (High)', value: '720p' },
			{ name: '1080p (Ultra)', value: '1080p' },
		]);
	});
});
