/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// Test-only node types that stand in for the few n8n built-in nodes our workflows rely on.
// They are registered in the harness under n8n's own type names so that the repository's
// example workflows (exported from n8n) run unchanged. They are never shipped.
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError, sleep } from 'n8n-workflow';

/**
 * Equivalent of n8n's Manual Trigger for manual executions: emits one empty item. (n8n's own
 * node is a trigger whose manual function emits the same; an execute() start node is what
 * WorkflowExecute runs for it in manual mode.) Pass `items` to runWorkflow to pin other items
 * on it, the way a user pins data on a trigger in the editor.
 */
export class HarnessManualTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'When clicking ‘Execute workflow’ (harness)',
		name: 'n8n-nodes-base.manualTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Test-only stand-in for n8n’s Manual Trigger',
		defaults: { name: 'When clicking ‘Execute workflow’' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [[{ json: {}, pairedItem: { item: 0 } }]];
	}
}

/**
 * Emits the items given as JSON in its `items` parameter (an array of objects), each paired
 * with the first input item. A Code-free stand-in for n8n's Set / Code nodes.
 */
export class HarnessItems implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Items (harness)',
		name: 'harness.items',
		group: ['transform'],
		version: 1,
		usableAsTool: true,
		description: 'Test-only: emits the items given as JSON',
		defaults: { name: 'Items' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [{ displayName: 'Items', name: 'items', type: 'json', default: '[]' }],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const raw = this.getNodeParameter('items', 0) as unknown;
		const parsed = typeof raw === 'string' ? (JSON.parse(raw) as unknown) : raw;
		if (!Array.isArray(parsed)) {
			throw new NodeOperationError(this.getNode(), 'Parameter "items" must be a JSON array');
		}
		return [parsed.map((json: IDataObject) => ({ json, pairedItem: { item: 0 } }))];
	}
}

/** Equivalent of n8n's No Operation node: passes its input through. */
export class HarnessNoOp implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'No Operation (harness)',
		name: 'n8n-nodes-base.noOp',
		group: ['organization'],
		version: 1,
		usableAsTool: true,
		description: 'Test-only stand-in for n8n’s No Operation node',
		defaults: { name: 'No Operation, do nothing' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

/**
 * Test-only: waits `ms` milliseconds (parameter) honouring the execution's cancel signal, then
 * passes its input through. Proves the harness's cancellation without product nodes.
 */
export class HarnessSleep implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Sleep (harness)',
		name: 'harness.sleep',
		group: ['organization'],
		version: 1,
		usableAsTool: true,
		description: 'Test-only: waits, then passes items through',
		defaults: { name: 'Sleep' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [{ displayName: 'Milliseconds', name: 'ms', type: 'number', default: 1000 }],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const ms = this.getNodeParameter('ms', 0) as number;
		try {
			await sleep(ms, this.getExecutionCancelSignal());
		} catch {
			throw new NodeOperationError(this.getNode(), 'Sleep cancelled');
		}
		return [this.getInputData()];
	}
}

/**
 * Test-only: turns its `text` parameter (or `base64` bytes, padded with zeros to `padToBytes`)
 * into a binary property (`property`, default `data`) of the type `mimeType` through n8n's
 * prepareBinaryData (a Readable stream), so the harness's binary store is exercised without
 * product nodes. The input item's JSON and binary fields are kept.
 */
export class HarnessBinary implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Binary (harness)',
		name: 'harness.binary',
		group: ['transform'],
		version: 1,
		usableAsTool: true,
		description: 'Test-only: writes text as binary data',
		defaults: { name: 'Binary' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{ displayName: 'Text', name: 'text', type: 'string', default: '' },
			{ displayName: 'File Name', name: 'fileName', type: 'string', default: 'file.txt' },
			{ displayName: 'Base64', name: 'base64', type: 'string', default: '' },
			{ displayName: 'MIME Type', name: 'mimeType', type: 'string', default: 'text/plain' },
			{ displayName: 'Pad to Bytes', name: 'padToBytes', type: 'number', default: 0 },
			{ displayName: 'Property', name: 'property', type: 'string', default: 'data' },
			// The file's bytes without the size n8n stores beside them (its metadata file removed,
			// as for a store that keeps none): a reader learns the size only by reading.
			{ displayName: 'Forget Size', name: 'forgetSize', type: 'boolean', default: false },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const { Readable } = await import('node:stream');
		const out: INodeExecutionData[] = [];
		const input = this.getInputData();
		for (let i = 0; i < input.length; i++) {
			const text = this.getNodeParameter('text', i) as string;
			const fileName = this.getNodeParameter('fileName', i) as string;
			const base64 = this.getNodeParameter('base64', i, '') as string;
			const padTo = this.getNodeParameter('padToBytes', i, 0) as number;
			const property = this.getNodeParameter('property', i, 'data') as string;
			let bytes = base64 ? Buffer.from(base64, 'base64') : Buffer.from(text);
			if (padTo > bytes.length) bytes = Buffer.concat([bytes, Buffer.alloc(padTo - bytes.length)]);
			const data = await this.helpers.prepareBinaryData(
				Readable.from([bytes]),
				fileName,
				this.getNodeParameter('mimeType', i, 'text/plain') as string,
			);
			if (this.getNodeParameter('forgetSize', i, false) && data.id) {
				const { rmSync } = await import('node:fs');
				const { join } = await import('node:path');
				const { BINARY_DATA_PATH } = await import('./env');
				const location = data.id.slice(data.id.indexOf(':') + 1);
				rmSync(join(BINARY_DATA_PATH, `${location}.metadata`));
			}
			out.push({
				json: { ...input[i].json, fileName },
				binary: { ...(input[i].binary ?? {}), [property]: data },
				pairedItem: { item: i },
			});
		}
		return [out];
	}
}

/**
 * Test-only: GETs its `url` parameter with this.helpers.httpRequestWithAuthentication and the
 * package's credential, and outputs the JSON answer. Proves the harness applies credentials
 * exactly as n8n does, independently of the product nodes.
 */
export class HarnessHttpProbe implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'HTTP Probe (harness)',
		name: 'harness.httpProbe',
		group: ['transform'],
		version: 1,
		usableAsTool: true,
		description: 'Test-only: authenticated GET',
		defaults: { name: 'HTTP Probe' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'mediaGenerationApi', required: true }],
		properties: [{ displayName: 'URL', name: 'url', type: 'string', default: '' }],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const url = this.getNodeParameter('url', 0) as string;
		const json = (await this.helpers.httpRequestWithAuthentication.call(
			this,
			'mediaGenerationApi',
			{
				method: 'GET',
				url,
				json: true,
			},
		)) as IDataObject;
		return [[{ json, pairedItem: { item: 0 } }]];
	}
}

/**
 * Equivalent of n8n's Webhook node (POST, "Respond: Immediately"): each call starts an execution
 * with one item `{ headers, params, query, body }`, as n8n's node outputs it. Served over real
 * HTTP by startCallbackReceiver (webhook.ts).
 */
export class HarnessWebhook implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Webhook (harness)',
		name: 'n8n-nodes-base.webhook',
		group: ['trigger'],
		version: [1, 2],
		description: 'Test-only stand-in for n8n’s Webhook node',
		defaults: { name: 'Webhook' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'hook' }],
		properties: [{ displayName: 'Path', name: 'path', type: 'string', default: 'hook' }],
	};

	// Nothing to register anywhere: the harness serves the path itself.
	webhookMethods = {
		default: {
			checkExists: async () => true,
			create: async () => true,
			delete: async () => true,
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const request = this.getRequestObject();
		return {
			workflowData: [
				[
					{
						json: {
							headers: this.getHeaderData(),
							params: request.params ?? {},
							query: this.getQueryData(),
							body: this.getBodyData(),
						} as IDataObject,
					},
				],
			],
		};
	}
}

/** n8n's Sticky Note: documentation on the canvas, never executed. Examples carry some. */
export class HarnessStickyNote implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Sticky Note (harness)',
		name: 'n8n-nodes-base.stickyNote',
		group: ['input'],
		version: [1, 2],
		usableAsTool: true,
		description: 'Test-only stand-in for n8n’s Sticky Note',
		defaults: { name: 'Sticky Note' },
		inputs: [],
		outputs: [],
		properties: [
			{ displayName: 'Content', name: 'content', type: 'string', default: '' },
			{ displayName: 'Height', name: 'height', type: 'number', default: 160 },
			{ displayName: 'Width', name: 'width', type: 'number', default: 240 },
			{ displayName: 'Color', name: 'color', type: 'number', default: 1 },
		],
	};
}

export const HARNESS_NODE_TYPES: INodeType[] = [
	new HarnessStickyNote(),
	new HarnessHttpProbe(),
	new HarnessManualTrigger(),
	new HarnessItems(),
	new HarnessNoOp(),
	new HarnessSleep(),
	new HarnessBinary(),
	new HarnessWebhook(),
];
