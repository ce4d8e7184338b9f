import type {
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { TRIGGER_WEBHOOK_PATH } from '../shared/callbackUrl';
import { triggerProperties } from './TriggerDescription';
import { handleCallback } from './handler';

export class MediaGenerationTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Media Generation Trigger',
		name: 'mediaGenerationTrigger',
		icon: {
			light: 'file:mediaGenerationTrigger.svg',
			dark: 'file:mediaGenerationTrigger.dark.svg',
		},
		group: ['trigger'],
		// 1.1 behaves as 1 does; n8n's webhook server treats a start node of version 1 as its own
		// Webhook node of version 1 and evaluates an expression for every callback before reading
		// its body (webhook-helpers.js, parseRequestBody), costly under a burst of callbacks.
		version: [1, 1.1],
		defaultVersion: 1.1,
		subtitle:
			'={{"On " + {"any": "finished or failed", "finished": "finished", "failed": "failed"}[$parameter["event"]] + " task"}}',
		// n8n's node creator shows this node and Media Generation as one entry that carries this
		// text: it describes the package, the trigger's own part is in its panel.
		description:
			'Generate images, video and music with AI models and get the files, or start a workflow when a generation finishes',
		defaults: {
			name: 'Media Generation Trigger',
		},
		eventTriggerDescription:
			"Waiting for a task to end: submit one with this node's Test URL as Callback URL",
		activationMessage:
			"Tasks submitted with this node's Production URL as Callback URL now start this workflow when they finish or fail.",
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'mediaGenerationApi',
				required: true,
			},
		],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				// The node answers the service itself (before downloading files), see handler.ts.
				responseMode: 'onReceived',
				path: TRIGGER_WEBHOOK_PATH,
			},
		],
		properties: triggerProperties,
	};

	webhookMethods = {
		default: {
			// The service has no endpoint to register or remove callback URLs: the URL is given per
			// task at submission. Activation therefore only has to say "nothing to do".
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
		return await handleCallback(this);
	}
}
