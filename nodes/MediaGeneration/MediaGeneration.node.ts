import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { properties } from './actions';
import { router } from './actions/router';
import { MODELS } from './models';

// The canvas subtitle in the words of the panel: "Generate Video: Vidmodel 1.5 Pro",
// "Generate Image: <the Model ID typed>", "Task: Get Status". n8n's generic "Custom API Call"
// entry sets values this node does not have: the subtitle then names that entry, never
// "undefined". The words go in as indented JSON: a compact "}}" would end the expression.
const SUBTITLE_WORDS = {
	resources: { image: 'Image', video: 'Video', music: 'Music', task: 'Task' },
	operations: {
		generate: 'Generate',
		getStatus: 'Get Status',
		waitForCompletion: 'Wait for Completion',
		downloadFiles: 'Download Files',
	},
	models: Object.fromEntries(MODELS.map((m) => [m.key, m.modelId === undefined ? '' : m.displayName])),
};
const subtitle = `={{ ((w, r, o, m, id) => {
	if (r === '__CUSTOM_API_CALL__' || o === '__CUSTOM_API_CALL__') return 'Custom API Call';
	const resource = w.resources[r];
	const operation = w.operations[o];
	if (!resource || !operation) return '';
	if (r === 'task') return resource + ': ' + operation;
	const typed = typeof id === 'string' && id.trim() !== '' && !id.startsWith('=') ? id.trim() : '';
	const model = w.models[m] || typed;
	return operation + ' ' + resource + (model ? ': ' + model : '');
})(${JSON.stringify(SUBTITLE_WORDS, null, 1)}, $parameter["resource"], $parameter["operation"], $parameter["model"], $parameter["modelId"]) }}`;

export class MediaGeneration implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Media Generation',
		name: 'mediaGeneration',
		icon: { light: 'file:mediaGeneration.svg', dark: 'file:mediaGeneration.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle,
		description:
			'Generate images, video and music with AI models and get the files, or start a workflow when a generation finishes',
		defaults: { name: 'Media Generation' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'mediaGenerationApi', required: true }],
		properties,
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
