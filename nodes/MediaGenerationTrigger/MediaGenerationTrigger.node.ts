import type {
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

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
		version: 1,
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
				path: 'media-generation',
			},
		],
		properties: [
			{
				displayName:
					'Copy this node\'s Production URL (above) into the "Callback URL" option of the Media Generation node, then activate this workflow. The service has no webhook registration: the URL travels with each task. A "Callback Reference" set there comes back here as <code>reference</code>.',
				name: 'notice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Trigger On',
				name: 'event',
				type: 'options',
				options: [
					{
						name: 'Finished or Failed',
						value: 'any',
						description: 'Every task outcome starts the workflow',
					},
					{
						name: 'Finished',
						value: 'finished',
						description: 'Only tasks that produced files',
					},
					{
						name: 'Failed',
						value: 'failed',
						description: 'Only tasks that failed (the output carries error_message)',
					},
				],
				default: 'any',
			},
			{
				displayName: 'Verify With Status Endpoint',
				name: 'verify',
				type: 'boolean',
				default: true,
				description:
					"Whether to confirm each callback with the service's status endpoint before starting. The service does not sign its callbacks: with this on, a forged or replayed call cannot inject a task, a status or files (the task and its files come from the service). Off trusts the callback body, files included.",
			},
			{
				displayName:
					'Verification is off: anyone who has this URL with a valid signature can start this workflow with a task, status and file URLs of their choosing, and the files are downloaded from wherever the body points. Turn it off only for a service you reach over a private network.',
				name: 'verifyOffNotice',
				type: 'notice',
				default: '',
				displayOptions: { show: { verify: [false] } },
			},
			{
				displayName: 'Download Files',
				name: 'download',
				type: 'boolean',
				default: true,
				description:
					'Whether to download the result files as binary data (streamed). Links expire 24 hours after generation.',
			},
			{
				displayName: 'Put Output File in Field',
				name: 'binaryPropertyName',
				type: 'string',
				default: 'data',
				displayOptions: { show: { download: [true] } },
				hint: 'The first file goes to this field; further files to data_1, data_2… (same as the Media Generation node)',
				description: 'Name of the binary field the downloaded file is put in',
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Secret',
						name: 'secret',
						type: 'string',
						typeOptions: { password: true },
						default: '',
						description:
							'When set, a callback is accepted only if its URL carries <code>?secret=</code> with this value. Add it to the Callback URL you give the Media Generation node. It is masked in every output.',
					},
					{
						displayName: 'Accept Unsigned Callbacks',
						name: 'acceptUnsigned',
						type: 'boolean',
						default: false,
						description:
							'Whether to accept callbacks whose URL has no <code>sig</code> parameter. The Media Generation node signs every Callback URL (and its Callback Reference) with this credential; tasks submitted another way carry no signature and are refused (401) unless this is on. A wrong signature is always refused.',
					},
					{
						displayName: 'On Verification Error',
						name: 'onVerifyError',
						type: 'options',
						options: [
							{
								name: 'Reject (Answer 503)',
								value: 'reject',
								description:
									'Start nothing and answer 503 with Retry-After, so the service calls again later',
							},
							{
								name: 'Start With Error',
								value: 'start',
								description:
									'Start the workflow with the task ID and an error field, no status or files. Anyone who can reach the URL can then start runs while the service is unreachable.',
							},
						],
						default: 'reject',
						description:
							'What to do when the status endpoint cannot confirm the callback within 5 seconds (not when it says the task is unknown: then nothing starts)',
					},
				],
			},
		],
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
