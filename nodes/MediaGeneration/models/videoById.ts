import type { IDataObject } from 'n8n-workflow';

import { inputSchema, integerRange, ratio, setIfChosen, text } from './rules';
import type { ModelDefinition } from './types';

/** The further text-to-video model: the spec names no identifier, only its quickstart shape. */
export const videoById: ModelDefinition = {
	key: 'video-by-id',
	kind: 'video',
	displayName: 'Other Video Model (by ID)',
	description: 'Text-to-video with a model identifier you enter',
	typicalDuration: {
		ms: 120_000,
		source:
			'Not in the spec (it documents no generation time): an assumed order of magnitude for hosted text-to-video, minutes',
	},
	properties: [
		{
			displayName: 'Prompt',
			name: 'prompt',
			type: 'string',
			typeOptions: { rows: 4 },
			required: true,
			default: '',
			description: 'Description of the video to generate',
		},
		{
			displayName: 'Model Options',
			name: 'videoByIdOptions',
			type: 'collection',
			placeholder: 'Add Model Option',
			default: {},
			options: [
				{
					displayName: 'Aspect Ratio',
					name: 'aspectRatio',
					type: 'string',
					default: '',
					placeholder: 'e.g. 16:9',
					description: 'Ratio of width to height written W:H, e.g. 16:9 or 9:16',
				},
				{
					displayName: 'Duration (Seconds)',
					name: 'duration',
					type: 'number',
					typeOptions: { minValue: 1, numberPrecision: 0 },
					default: 1,
					description: 'Length of the video in whole seconds',
				},
			],
		},
	],
	schema: inputSchema({
		prompt: text(),
		duration: integerRange(1).optional(),
		aspect_ratio: ratio().optional(),
	}),
	toInput(p) {
		const o = (p('videoByIdOptions', {}) ?? {}) as IDataObject;
		const input: IDataObject = { prompt: p('prompt') as string };
		setIfChosen(input, 'duration', o.duration);
		setIfChosen(input, 'aspect_ratio', o.aspectRatio);
		return input;
	},
};
