import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type IHookFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';

import { properties } from './actions';
import { handleParkedCallback } from './actions/durableWait';
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
	models: Object.fromEntries(
		MODELS.map((m) => [m.key, m.modelId === undefined ? '' : m.displayName]),
	),
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
		// "Wait Mode: Park Until Callbacks": the service calls this execution's resume URL
		// (n8n's $execution.resumeUrl, no path suffix) while the execution is parked. A
		// restart webhook is only served while this node has parked its execution; it is
		// never registered as a production webhook.
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: '',
				restartWebhook: true,
				isFullPath: true,
				ndvHideUrl: true,
				ndvHideMethod: true,
			},
		],
		properties,
	};

	// Restart webhooks have nothing to register at activation; n8n requires the methods.
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await handleParkedCallback(this);
	}

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
