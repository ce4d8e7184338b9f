// Test-only. The workflows of the queue-mode layer, in the shape n8n's public API takes
// (POST /api/v1/workflows): a name, nodes, connections, settings.

import { randomUUID } from 'node:crypto';

import { TRIGGER_TYPE } from '../e2e/n8n';
import {
	chain,
	exampleWorkflow,
	mediaNode,
	pngToFile,
	noOp,
	splitRows,
	webhookNode,
	type Connections,
	type WorkflowNode,
} from '../e2e/workflows';

export interface ApiWorkflow {
	name: string;
	nodes: WorkflowNode[];
	connections: Connections;
	settings: Record<string, unknown>;
}

/** The credential the nodes point at, once created through the public API. */
export interface CredentialRef {
	id: string;
	name: string;
}

function withCredential(nodes: WorkflowNode[], credential: CredentialRef): WorkflowNode[] {
	return nodes.map((n) =>
		n.credentials ? { ...n, credentials: { mediaGenerationApi: credential } } : n,
	);
}

const split = splitRows();

/** Video generation of `vidmodel-1.5-pro` with the row's prompt (the cheapest 4 s, 16:9). */
export function videoParams(extra: Record<string, unknown> = {}) {
	return {
		resource: 'video',
		operation: 'generate',
		model: 'vidmodel-1.5-pro',
		prompt: '={{ $json.prompt }}',
		aspectRatio: '16:9',
		duration: 4,
		...extra,
	};
}

/**
 * Webhook (POST {rows: [{prompt}]}) → Split → Generate (waits, downloads). With `lastNode` the
 * caller gets the items back once a worker ran it; with `onReceived` at once.
 */
export function generateFlow(
	name: string,
	path: string,
	credential: CredentialRef,
	options: {
		respond?: 'lastNode' | 'onReceived';
		generate?: Record<string, unknown>;
		/** Node settings such as retryOnFail, maxTries, waitBetweenTries. */
		node?: Record<string, unknown>;
		settings?: Record<string, unknown>;
	} = {},
): ApiWorkflow {
	const generate = {
		...mediaNode('Generate', videoParams(options.generate)),
		...options.node,
	} as WorkflowNode;
	return {
		name,
		nodes: withCredential(
			[webhookNode(path, options.respond ?? 'lastNode'), split, generate],
			credential,
		),
		connections: {
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Generate', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1', ...options.settings },
	};
}

/**
 * The two-step pattern: Submit (Wait for Completion off: task ids at once) → Wait (Task → Wait
 * for Completion). With "Save execution progress" the task ids are in the database before the
 * polling starts.
 */
export function twoStepFlow(
	name: string,
	path: string,
	credential: CredentialRef,
	saveProgress: boolean,
): ApiWorkflow {
	const submit = mediaNode('Submit', videoParams({ waitForCompletion: false }));
	const wait = mediaNode('Wait', {
		resource: 'task',
		operation: 'waitForCompletion',
		taskId: '={{ $json.task_id }}',
	});
	wait.position = [600, 0];
	return {
		name,
		nodes: withCredential([webhookNode(path, 'onReceived'), split, submit, wait], credential),
		connections: {
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Submit', type: 'main', index: 0 }]] },
			Submit: { main: [[{ node: 'Wait', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1', saveExecutionProgress: saveProgress },
	};
}

/** Media Generation Trigger → Received. */
export function triggerFlow(
	name: string,
	webhookId: string,
	credential: CredentialRef,
): ApiWorkflow {
	return {
		name,
		nodes: withCredential(
			[
				{
					id: 'n-trigger',
					name: 'Media Generation Trigger',
					type: TRIGGER_TYPE,
					// The version a new trigger gets (1.1: n8n evaluates no expression per call).
					typeVersion: 1.1,
					position: [0, 0],
					webhookId,
					parameters: { event: 'any', verify: true, download: true },
					credentials: { mediaGenerationApi: credential },
				},
				noOp('Received'),
			],
			credential,
		),
		connections: {
			'Media Generation Trigger': { main: [[{ node: 'Received', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/** Webhook → Split → Submit (no waiting) with the trigger's URL as callback and a reference per row. */
export function submitFlow(
	name: string,
	path: string,
	credential: CredentialRef,
	callbackUrl: string,
): ApiWorkflow {
	const submit = mediaNode(
		'Submit',
		videoParams({
			waitForCompletion: false,
			options: { callbackUrl, callbackReference: '={{ $json.ref }}' },
		}),
	);
	return {
		name,
		nodes: withCredential([webhookNode(path, 'lastNode'), split, submit], credential),
		connections: {
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Submit', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/** One of n8n's own nodes, with no credential. */
export function baseNode(
	name: string,
	type: string,
	typeVersion: number,
	position: [number, number],
	parameters: Record<string, unknown>,
): WorkflowNode {
	return { id: `n-${name.replace(/\W+/g, '-')}`, name, type, typeVersion, position, parameters };
}

/** Generate (Wait Mode: Park Until Callbacks, Timeout 30 minutes) and Finish (Task → Wait for Completion: downloads the files). */
function parkAndFinish(): [WorkflowNode, WorkflowNode] {
	const generate = mediaNode(
		'Generate',
		videoParams({ options: { waitMode: 'park', callbackReference: '={{ $json.ref }}' } }),
	);
	const finish = mediaNode('Finish', {
		resource: 'task',
		operation: 'waitForCompletion',
		taskId: '={{ $json.task_id }}',
		options: { maxPollIntervalSeconds: 2 },
	});
	finish.position = [600, 0];
	return [generate, finish];
}

/**
 * Durable wait: Webhook (answered at once) → Split → Generate (Wait Mode: Park Until Callbacks,
 * the default Timeout of 30 minutes) → Finish (Task → Wait for Completion: downloads the files).
 */
export function durableFlow(name: string, path: string, credential: CredentialRef): ApiWorkflow {
	const [generate, finish] = parkAndFinish();
	return {
		name,
		nodes: withCredential([webhookNode(path, 'onReceived'), split, generate, finish], credential),
		connections: {
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Generate', type: 'main', index: 0 }]] },
			Generate: { main: [[{ node: 'Finish', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * examples/big-video-by-url.json as a user imports it: our credential in the Generate node, the
 * Webhook on `path`, and "Send URL to Storage" pointed at `importUrl` (the user's storage).
 */
export function bigVideoExample(
	path: string,
	credential: CredentialRef,
	importUrl: string,
): ApiWorkflow {
	const wf = exampleWorkflow('big-video-by-url.json', 'unused') as unknown as ApiWorkflow;
	const nodes = withCredential(wf.nodes, credential).map((n) => {
		if (n.type === 'n8n-nodes-base.webhook')
			return { ...n, webhookId: randomUUID(), parameters: { ...n.parameters, path } };
		if (n.type === 'n8n-nodes-base.httpRequest')
			return { ...n, parameters: { ...n.parameters, url: importUrl } };
		return n;
	});
	return { name: wf.name, nodes, connections: wf.connections, settings: wf.settings };
}

/**
 * Two parks in one execution: Webhook → Split → Loop Over Items (batches of `batchSize`) →
 * Generate (Park Until Callbacks) → Finish (Task → Wait for Completion) → back to the loop;
 * when every batch is done → Done.
 */
export function loopedParkFlow(
	name: string,
	path: string,
	credential: CredentialRef,
	batchSize: number,
): ApiWorkflow {
	const loop = baseNode('Loop', 'n8n-nodes-base.splitInBatches', 3, [300, 0], {
		batchSize,
		options: {},
	});
	const [generate, finish] = parkAndFinish();
	finish.position = [700, 0];
	const done = noOp('Done');
	done.position = [500, -200];
	return {
		name,
		nodes: withCredential(
			[webhookNode(path, 'onReceived'), split, loop, generate, finish, done],
			credential,
		),
		connections: {
			Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Loop', type: 'main', index: 0 }]] },
			Loop: {
				main: [
					[{ node: 'Done', type: 'main', index: 0 }],
					[{ node: 'Generate', type: 'main', index: 0 }],
				],
			},
			Generate: { main: [[{ node: 'Finish', type: 'main', index: 0 }]] },
			Finish: { main: [[{ node: 'Loop', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * A manual run (the editor's "Execute workflow"): Manual Trigger → Rows (Set, raw JSON) → Split
 * → Generate (Park Until Callbacks) → Finish. In queue mode n8n runs manual executions on the
 * main (unless OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS=true), so the main parks it.
 */
export function manualParkFlow(
	name: string,
	credential: CredentialRef,
	rows: Array<Record<string, unknown>>,
): ApiWorkflow {
	const trigger = baseNode('Start', 'n8n-nodes-base.manualTrigger', 1, [0, 0], {});
	const set = baseNode('Rows', 'n8n-nodes-base.set', 3.4, [100, 0], {
		mode: 'raw',
		jsonOutput: JSON.stringify({ body: { rows } }),
		options: {},
	});
	const [generate, finish] = parkAndFinish();
	return {
		name,
		nodes: withCredential([trigger, set, split, generate, finish], credential),
		connections: {
			Start: { main: [[{ node: 'Rows', type: 'main', index: 0 }]] },
			Rows: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: 'Generate', type: 'main', index: 0 }]] },
			Generate: { main: [[{ node: 'Finish', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * Reference images from binary data (issue 34): Webhook (POST {rows: [{prompt, png}]}) → Split →
 * Convert to File (the row's base64 PNG as binary field `data`) → Vidmodel 2.0 Fast with the
 * start frame from that binary (waits). The worker signs n8n's link to the file (stored in
 * PostgreSQL, `database` mode); the service fetches it through the balancer, which sends `/rest`
 * to the main process.
 */
export function binaryFrameFlow(
	name: string,
	path: string,
	credential: CredentialRef,
): ApiWorkflow {
	const convert = pngToFile(400);
	const animate = mediaNode('Animate', {
		resource: 'video',
		operation: 'generate',
		model: 'vidmodel-2.0-fast/image-to-video',
		prompt: "={{ $('Split').item.json.prompt }}",
		frameSource: 'binary',
		startFrameBinaryField: 'data',
		options: { maxPollIntervalSeconds: 1, timeoutMinutes: 2 },
	});
	animate.position = [600, 0];
	return {
		name,
		nodes: withCredential([webhookNode(path, 'onReceived'), split, convert, animate], credential),
		connections: chain('Webhook', 'Split', 'Convert to File', 'Animate'),
		settings: { executionOrder: 'v1' },
	};
}
