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
import { handleParkedCallback } from './actions/common/durableWait';
import { router } from './actions/router';

export class MediaGeneration implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Media Generation',
		name: 'mediaGeneration',
		icon: { light: 'file:mediaGeneration.svg', dark: 'file:mediaGeneration.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle:
			'={{ $parameter["operation"] + ($parameter["resource"] === "task" ? "" : ": " + ($parameter["modelId"] || $parameter["model"])) }}',
		description: 'Generate images, video and music, wait for the results and get the files',
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
