// Test-only. Workflow JSON for the end-to-end layer, in the shape `n8n import:workflow` takes.
import { CREDENTIAL_TYPE } from './n8n';

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

export type Connections = Record<string, { main: Array<Array<{ node: string; type: 'main'; index: number }>> }>;

export const CREDENTIAL = { id: 'mgenCred0000001', name: 'Media Generation (simulator)' };

/** The credential as `n8n import:credentials` takes it: n8n encrypts `data` on import. */
export function credentialImport(baseUrl: string, apiKey: string, id = CREDENTIAL.id, name = CREDENTIAL.name) {
	return { id, name, type: CREDENTIAL_TYPE, data: { apiKey, baseUrl } };
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
