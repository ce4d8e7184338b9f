import type { IDataObject } from 'n8n-workflow';

import { bool, inputSchema, setIfChosen, text } from './rules';
import type { ModelDefinition } from './types';

export const generateMusic: ModelDefinition = {
	key: 'generate-music',
	kind: 'music',
	displayName: 'Generate Music',
	description: 'Music generated from a prompt',
	modelId: 'generate-music',
	typicalDuration: {
		ms: 120_000,
		source:
			'Not in the spec (it documents no generation time): an assumed order of magnitude for hosted music generation, minutes per track',
	},
	properties: [
		{
			displayName: 'Prompt',
			name: 'prompt',
			type: 'string',
			typeOptions: { rows: 4 },
			required: true,
			default: '',
			description: 'Description of the music to generate',
		},
		{
			displayName: 'Model Options',
			name: 'musicOptions',
			type: 'collection',
			placeholder: 'Add Model Option',
			default: {},
			options: [
				{
					displayName: 'Custom Mode',
					name: 'customMode',
					type: 'boolean',
					default: false,
					description: 'Whether to generate in custom mode',
				},
				{
					displayName: 'Instrumental',
					name: 'instrumental',
					type: 'boolean',
					default: false,
					description: 'Whether the track is instrumental (no vocals)',
				},
				{
					displayName: 'Model Version',
					name: 'mv',
					type: 'string',
					default: '',
					description: 'Version of the music model as your service names it (sent as mv)',
				},
				{
					displayName: 'Style',
					name: 'style',
					type: 'string',
					default: '',
					description: 'Musical style or genre of the track',
				},
				{
					displayName: 'Title',
					name: 'title',
					type: 'string',
					default: '',
					description: 'Title of the track',
				},
			],
		},
	],
	schema: inputSchema({
		prompt: text(),
		style: text().optional(),
		title: text().optional(),
		custom_mode: bool().optional(),
		instrumental: bool().optional(),
		mv: text().optional(),
	}),
	toInput(p) {
		const o = (p('musicOptions', {}) ?? {}) as IDataObject;
		const input: IDataObject = { prompt: p('prompt') as string };
		setIfChosen(input, 'style', o.style);
		setIfChosen(input, 'title', o.title);
		setIfChosen(input, 'custom_mode', o.customMode);
		setIfChosen(input, 'instrumental', o.instrumental);
		setIfChosen(input, 'mv', o.mv);
		return input;
	},
};
