// Test-only. Workflow JSON for the end-to-end layer, in the shape `n8n import:workflow` takes.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CREDENTIAL_TYPE, NODE_TYPE, ROOT, TRIGGER_TYPE } from './n8n';

export interface WorkflowNode {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
	webhookId?: string;
	onError?: 'continueErrorOutput' | 'continueRegularOutput' | 'stopWorkflow';
}

export type Connections = Record<
	string,
	{ main: Array<Array<{ node: string; type: 'main'; index: number }>> }
>;

export const CREDENTIAL = { id: 'mgenCred0000001', name: 'Media Generation (simulator)' };

/** The credential as `n8n import:credentials` takes it: n8n encrypts `data` on import. */
export function credentialImport(
	baseUrl: string,
	apiKey: string,
	id = CREDENTIAL.id,
	name = CREDENTIAL.name,
) {
	// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
	return {
		id,
		name,
		type: CREDENTIAL_TYPE,
		data: { apiKey, baseUrl, allowPrivateFileHosts: true },
	};
}

export function manualTrigger(name = 'Start'): WorkflowNode {
	return {
		id: `n-${name}`,
		name,
		type: 'n8n-nodes-base.manualTrigger',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
}

/** Connects nodes in a chain through output 0. */
export function chain(...names: string[]): Connections {
	const c: Connections = {};
	for (let i = 0; i + 1 < names.length; i++) {
		c[names[i]] = { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] };
	}
	return c;
}

export function workflow(id: string, nodes: WorkflowNode[], connections: Connections) {
	return {
		id,
		name: `e2e ${id}`,
		active: false,
		nodes,
		connections,
		settings: { executionOrder: 'v1', saveManualExecutions: true },
		pinData: {},
	};
}

/** The Media Generation node as a workflow node. */
export function mediaNode(
	name: string,
	parameters: Record<string, unknown>,
	extra: Partial<WorkflowNode> = {},
): WorkflowNode {
	return {
		id: `n-${name.replace(/\W+/g, '-')}`,
		name,
		type: NODE_TYPE,
		typeVersion: 1,
		position: [400, 0],
		parameters,
		credentials: { [CREDENTIAL_TYPE]: CREDENTIAL },
		...extra,
	};
}

/**
 * A production Webhook node (POST). `lastNode` answers with every item of the last node, as the
 * submitting workflows need; `onReceived` answers at once.
 */
export function webhookNode(
	path: string,
	responseMode: 'lastNode' | 'onReceived' = 'onReceived',
): WorkflowNode {
	return {
		id: `n-webhook-${path}`,
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: randomUUID(),
		parameters: {
			httpMethod: 'POST',
			path,
			responseMode,
			...(responseMode === 'lastNode' ? { responseData: 'allEntries' } : {}),
			options: {},
		},
	};
}

/** One item per entry of the webhook body's `rows` (or of another field). */
export function splitRows(field = 'body.rows', x = 200): WorkflowNode {
	return {
		id: 'n-split',
		name: 'Split',
		type: 'n8n-nodes-base.splitOut',
		typeVersion: 1,
		position: [x, 0],
		parameters: { fieldToSplitOut: field },
	};
}

/**
 * A manual run's items: a Set node "Rows" holding `rows` (raw JSON), then a Split Out "Split"
 * of them, one item per row (connect Start → Rows → Split → the node under test).
 */
export function rowItems(rows: unknown[]): WorkflowNode[] {
	return [
		{
			id: 'n-rows',
			name: 'Rows',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [200, 0],
			parameters: { mode: 'raw', jsonOutput: JSON.stringify({ rows }) },
		},
		splitRows('rows', 300),
	];
}

/**
 * Convert to File: the item's base64 PNG in JSON field `png` as binary field `data`
 * (frame.png), the picture the binary reference image tests animate (issue 34).
 */
export function pngToFile(x: number): WorkflowNode {
	return {
		id: 'n-convert',
		name: 'Convert to File',
		type: 'n8n-nodes-base.convertToFile',
		typeVersion: 1.1,
		position: [x, 0],
		parameters: {
			operation: 'toBinary',
			sourceProperty: 'png',
			options: { fileName: 'frame.png', mimeType: 'image/png' },
		},
	};
}

export function noOp(name: string): WorkflowNode {
	return {
		id: `n-${name}`,
		name,
		type: 'n8n-nodes-base.noOp',
		typeVersion: 1,
		position: [600, 0],
		parameters: {},
	};
}

/**
 * Media Generation Trigger (the simulator's credential, the given parameters and typeVersion) →
 * a No Operation node "Received", as a user wires it.
 */
export function triggerWorkflow(
	id: string,
	webhookId: string,
	parameters: Record<string, unknown>,
	typeVersion: number,
) {
	return workflow(
		id,
		[
			{
				id: 'n-trigger',
				name: 'Media Generation Trigger',
				type: TRIGGER_TYPE,
				typeVersion,
				position: [0, 0],
				webhookId,
				parameters,
				credentials: { mediaGenerationApi: CREDENTIAL },
			},
			noOp('Received'),
		],
		{ 'Media Generation Trigger': { main: [[{ node: 'Received', type: 'main', index: 0 }]] } },
	);
}

/** The folder the examples write to as shipped: n8n's Docker image's `~/.n8n-files`. */
export const EXAMPLE_FILES_FOLDER = '/home/node/.n8n-files';

/**
 * A workflow from examples/, as a user imports it: our credential picked for every node that
 * asks for one, a fixed id for `n8n execute --id`, and, given `folder`, the examples' folder
 * (EXAMPLE_FILES_FOLDER) changed to it, as the guides tell the user to.
 */
export function exampleWorkflow(file: string, id: string, folder?: string) {
	const text = fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8');
	const wf = JSON.parse(folder ? text.split(EXAMPLE_FILES_FOLDER).join(folder) : text) as {
		nodes: WorkflowNode[];
	} & Record<string, unknown>;
	for (const node of wf.nodes) {
		if (node.credentials?.[CREDENTIAL_TYPE]) node.credentials[CREDENTIAL_TYPE] = CREDENTIAL;
	}
	return { ...wf, id, active: false };
}
