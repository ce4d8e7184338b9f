import type { IDataObject } from 'n8n-workflow';

import {
	bool,
	fieldList,
	httpUrlList,
	inputSchema,
	integerOneOf,
	oneOf,
	setIfChosen,
	text,
	urlList,
} from './rules';
import { DOCUMENTED_LIMITS } from './referenceImages';
import type { ModelDefinition } from './types';

/** The identifier sent as `model`, also the value of the node's Model option. */
export const MODEL_ID = 'vidmodel-1.5-pro';
export const ASPECT_RATIOS = ['1:1', '21:9', '4:3', '3:4', '16:9', '9:16'] as const;
export const DURATIONS = [4, 8, 12] as const;
/** The Duration the panel preselects: the shortest, so an untouched panel spends the fewest credits. */
export const PRESET_DURATION = 4;
export const RESOLUTIONS = [
	{ value: '480p', name: '480p (Standard)' },
	{ value: '720p', name: '720p (High)' },
	{ value: '1080p', name: '1080p (Ultra)' },
] as const;

const RESOLUTION_VALUES = RESOLUTIONS.map((r) => r.value) as ['480p', '720p', '1080p'];

export const vidmodel15Pro: ModelDefinition = {
	key: MODEL_ID,
	kind: 'video',
	displayName: 'Vidmodel 1.5 Pro',
	description: 'Text-to-video, or image-to-video with up to 2 reference images',
	modelId: MODEL_ID,
	typicalDuration: {
		ms: 120_000,
		source:
			'Not in the spec (it documents no generation time): an assumed order of magnitude, as hosted text-to-video takes minutes for a clip of 4-12 s',
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
			displayName: 'Aspect Ratio',
			name: 'aspectRatio',
			type: 'options',
			required: true,
			options: ASPECT_RATIOS.map((r) => ({ name: r, value: r })),
			// The spec shows no service default; the panel preselects a value the user sees.
			default: '16:9',
		},
		{
			displayName: 'Duration',
			name: 'duration',
			type: 'options',
			required: true,
			options: DURATIONS.map((d) => ({ name: `${d} Seconds`, value: d })),
			default: PRESET_DURATION,
			description: 'Length of the video in seconds',
		},
		{
			displayName: 'Model Options',
			name: 'vidmodel15ProOptions',
			type: 'collection',
			placeholder: 'Add Model Option',
			default: {},
			options: [
				{
					displayName: 'Fixed Lens',
					name: 'fixedLens',
					type: 'boolean',
					default: false,
					description: 'Whether the camera lens is kept fixed',
				},
				{
					displayName: 'Generate Audio',
					name: 'generateAudio',
					type: 'boolean',
					default: false,
					description: 'Whether an audio track is generated',
				},
				{
					displayName: 'Reference Image Binary Fields',
					name: 'imageBinaryFields',
					type: 'string',
					typeOptions: { multipleValues: true, multipleValueButtonText: 'Add Binary Field' },
					default: [],
					placeholder: 'e.g. data',
					description:
						'Up to 2 names of binary fields of the input item, each holding a JPEG, PNG or WebP of at most 10 MB, for image-to-video (instead of Reference Image URLs). n8n gives the service a temporary link to each file (n8n must be reachable at its public URL, WEBHOOK_URL).',
					displayOptions: { hide: { '@tool': [true] } },
				},
				{
					displayName: 'Reference Image URLs',
					name: 'imageUrls',
					type: 'string',
					typeOptions: { multipleValues: true, multipleValueButtonText: 'Add Image URL' },
					default: [],
					placeholder: 'https://example.com/frame.png',
					description:
						'Up to 2 public URLs of JPEG, PNG or WebP images of at most 10 MB each, for image-to-video. URLs of files already uploaded, not file content.',
				},
				{
					displayName: 'Resolution',
					name: 'resolution',
					type: 'options',
					options: RESOLUTIONS.map((r) => ({ name: r.name, value: r.value })),
					default: '720p',
				},
			],
		},
	],
	referenceImages: DOCUMENTED_LIMITS,
	schema: inputSchema({
		prompt: text(),
		aspect_ratio: oneOf(ASPECT_RATIOS),
		duration: integerOneOf(DURATIONS),
		image_urls: httpUrlList(0, 2).optional(),
		resolution: oneOf(RESOLUTION_VALUES).optional(),
		fixed_lens: bool().optional(),
		generate_audio: bool().optional(),
	}),
	binaryImages(p) {
		const o = (p('vidmodel15ProOptions', {}) ?? {}) as IDataObject;
		const names = fieldList(o.imageBinaryFields);
		if (names.length === 0) return undefined;
		return {
			fields: names.map((value, i) => ({
				name: `imageBinaryFields[${i}]`,
				label: 'Reference Image Binary Fields',
				value,
			})),
			max: 2,
			label: 'Reference Image Binary Fields',
		};
	},
	toInput(p) {
		const o = (p('vidmodel15ProOptions', {}) ?? {}) as IDataObject;
		// Required fields are always passed on, even when empty, so the schema names them.
		const input: IDataObject = {
			prompt: p('prompt') as string,
			aspect_ratio: p('aspectRatio') as string,
			duration: p('duration') as number,
		};
		setIfChosen(input, 'image_urls', urlList(o.imageUrls));
		setIfChosen(input, 'resolution', o.resolution);
		setIfChosen(input, 'fixed_lens', o.fixedLens);
		setIfChosen(input, 'generate_audio', o.generateAudio);
		return input;
	},
};
