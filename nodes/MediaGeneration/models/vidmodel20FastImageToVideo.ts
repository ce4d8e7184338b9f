import type { IDataObject } from 'n8n-workflow';

import {
	httpUrlList,
	inputSchema,
	integerRange,
	isChosen,
	oneOf,
	sentence,
	setIfChosen,
	text,
} from './rules';
import {
	BINARY_IMAGE_HINT,
	IMAGE_SOURCE_BINARY,
	IMAGE_SOURCE_URLS,
	imageSourceProperty,
} from './referenceImages';
import type { ModelDefinition, ParamReader } from './types';

/** The identifier sent as `model`, also the value of the node's Model option. */
export const MODEL_ID = 'vidmodel-2.0-fast/image-to-video';
export const ASPECT_RATIOS = ['auto', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'] as const;
export const RESOLUTIONS = ['480p', '720p'] as const;
export const MIN_DURATION = 4;
export const MAX_DURATION = 15;
export const MAX_PROMPT = 20000;

const fromBinary = (p: ParamReader) => p('frameSource') === IMAGE_SOURCE_BINARY;

export const vidmodel20FastImageToVideo: ModelDefinition = {
	key: MODEL_ID,
	kind: 'video',
	displayName: 'Vidmodel 2.0 Fast (Image to Video)',
	description: 'Image-to-video from a start frame and an optional end frame',
	modelId: MODEL_ID,
	typicalDuration: {
		ms: 120_000,
		source:
			'Not in the spec (it documents no generation time): an assumed order of magnitude, as hosted image-to-video takes minutes for a clip of 4-15 s',
	},
	properties: [
		{
			displayName: 'Prompt',
			name: 'prompt',
			type: 'string',
			typeOptions: { rows: 4 },
			required: true,
			default: '',
			description: 'Description of the video to generate, up to 20,000 characters',
		},
		imageSourceProperty('frameSource', 'Frames From'),
		{
			displayName: 'Start Frame URL',
			name: 'startFrameUrl',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'https://example.com/start.png',
			description: 'Public, directly downloadable URL of the image the video starts from',
			displayOptions: { show: { frameSource: [IMAGE_SOURCE_URLS] } },
		},
		{
			displayName: 'Start Frame Binary Field',
			name: 'startFrameBinaryField',
			type: 'string',
			required: true,
			default: 'data',
			description:
				'Name of the binary field of the input item that holds the image the video starts from',
			hint: BINARY_IMAGE_HINT,
			displayOptions: { show: { frameSource: [IMAGE_SOURCE_BINARY] } },
		},
		{
			displayName: 'Model Options',
			name: 'vidmodel20FastOptions',
			type: 'collection',
			placeholder: 'Add Model Option',
			default: {},
			options: [
				{
					displayName: 'Aspect Ratio',
					name: 'aspectRatio',
					type: 'options',
					options: ASPECT_RATIOS.map((r) => ({ name: r === 'auto' ? 'Auto' : r, value: r })),
					default: 'auto',
				},
				{
					displayName: 'Duration (Seconds)',
					name: 'duration',
					type: 'number',
					typeOptions: { minValue: MIN_DURATION, maxValue: MAX_DURATION, numberPrecision: 0 },
					default: MIN_DURATION,
					description: 'Whole seconds from 4 to 15; billing depends on duration and resolution',
				},
				{
					displayName: 'End Frame Binary Field',
					name: 'endFrameBinaryField',
					type: 'string',
					default: '',
					placeholder: 'e.g. end',
					description:
						'Name of the binary field of the input item that holds the image the video ends on (JPEG, PNG or WebP, at most 10 MB)',
					displayOptions: { show: { '/frameSource': [IMAGE_SOURCE_BINARY] } },
				},
				{
					displayName: 'End Frame URL',
					name: 'endFrameUrl',
					type: 'string',
					default: '',
					placeholder: 'https://example.com/end.png',
					description: 'Public, directly downloadable URL of the image the video ends on',
					displayOptions: { show: { '/frameSource': [IMAGE_SOURCE_URLS] } },
				},
				{
					displayName: 'Resolution',
					name: 'resolution',
					type: 'options',
					options: RESOLUTIONS.map((r) => ({ name: r, value: r })),
					default: '720p',
				},
			],
		},
	],
	labels: {
		image_urls: 'Start Frame URL and End Frame URL',
		'image_urls[0]': 'Start Frame URL',
		'image_urls[1]': 'End Frame URL',
	},
	additionalFieldsHint:
		'For options this panel does not list, e.g. the audio option under the name your service gives it: {"option_name": true}. Reference-media fields (reference_*) cannot be combined with the frames.',
	schema: inputSchema(
		{
			prompt: text(MAX_PROMPT),
			image_urls: httpUrlList(1, 2),
			duration: integerRange(MIN_DURATION, MAX_DURATION).optional(),
			resolution: oneOf(RESOLUTIONS).optional(),
			aspect_ratio: oneOf(ASPECT_RATIOS).optional(),
		},
		(input, ctx) => {
			for (const key of Object.keys(input)) {
				if (/^reference/i.test(key)) {
					sentence(
						ctx,
						[key],
						`"${key}" cannot be combined with image_urls (start and end frames) for model ${MODEL_ID}; remove it from Additional Input Fields`,
					);
				}
			}
		},
	),
	binaryImages(p) {
		if (!fromBinary(p)) return undefined;
		const o = (p('vidmodel20FastOptions', {}) ?? {}) as IDataObject;
		const fields = [
			{
				name: 'startFrameBinaryField',
				label: 'Start Frame Binary Field',
				value: p('startFrameBinaryField', 'data'),
			},
		];
		if (isChosen(o.endFrameBinaryField)) {
			fields.push({
				name: 'endFrameBinaryField',
				label: 'End Frame Binary Field',
				value: o.endFrameBinaryField,
			});
		}
		return { fields, max: 2, label: 'Start Frame Binary Field and End Frame Binary Field' };
	},
	toInput(p) {
		const o = (p('vidmodel20FastOptions', {}) ?? {}) as IDataObject;
		const input: IDataObject = { prompt: p('prompt') as string };
		if (!fromBinary(p)) {
			// The start frame is always first, so a lone end frame cannot become the start.
			const frames: unknown[] = [p('startFrameUrl') ?? ''];
			if (isChosen(o.endFrameUrl)) frames.push(o.endFrameUrl);
			input.image_urls = frames.map((f) => (typeof f === 'string' ? f.trim() : f)) as string[];
		}
		setIfChosen(input, 'duration', o.duration);
		setIfChosen(input, 'resolution', o.resolution);
		setIfChosen(input, 'aspect_ratio', o.aspectRatio);
		return input;
	},
};
