import type { IDataObject } from 'n8n-workflow';

import { inputSchema, integerRange, ratio, setIfChosen, text } from './rules';
import type { ModelDefinition } from './types';

/** The text-to-image model: the spec names no identifier, only its quickstart shape. */
export const imageById: ModelDefinition = {
	key: 'image-by-id',
	kind: 'image',
	displayName: 'Image Model (by ID)',
	description: 'Text-to-image with a model identifier you enter',
	typicalDuration: {
		ms: 10_000,
		source:
			'Not in the spec (it documents no generation time): an assumed order of magnitude for hosted text-to-image, seconds',
	},
	properties: [
		{
			displayName: 'Prompt',
			name: 'prompt',
			type: 'string',
			typeOptions: { rows: 4 },
			required: true,
			default: '',
			description: 'Description of the image to generate',
		},
		{
			displayName: 'Model Options',
			name: 'imageByIdOptions',
			type: 'collection',
			placeholder: 'Add Model Option',
			default: {},
			options: [
				{
					displayName: 'Number of Images',
					name: 'n',
					type: 'number',
					typeOptions: { minValue: 1, numberPrecision: 0 },
					default: 1,
					description: 'How many images to generate',
				},
				{
					displayName: 'Size',
					name: 'size',
					type: 'string',
					default: '',
					placeholder: 'e.g. 1:1',
					description: 'Ratio of width to height written W:H, e.g. 1:1 or 16:9',
				},
			],
		},
	],
	schema: inputSchema({
		prompt: text(),
		size: ratio().optional(),
		n: integerRange(1).optional(),
	}),
	toInput(p) {
		const o = (p('imageByIdOptions', {}) ?? {}) as IDataObject;
		const input: IDataObject = { prompt: p('prompt') as string };
		setIfChosen(input, 'size', o.size);
		setIfChosen(input, 'n', o.n);
		return input;
	},
};
