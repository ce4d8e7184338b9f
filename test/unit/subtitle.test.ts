// The canvas subtitle of Media Generation, evaluated by n8n-workflow's own expression engine
// as the editor does: the panel's words, and never "undefined" (n8n's generic "Custom API Call"
// entry sets resource and operation values the node does not have).
import { Workflow, type INode, type INodeTypes } from 'n8n-workflow';

import { MediaGeneration } from '../../nodes/MediaGeneration/MediaGeneration.node';

const description = new MediaGeneration().description;
const nodeTypes = {
	getByName: () => ({ description }),
	getByNameAndVersion: () => ({ description }),
	getKnownTypes: () => ({}),
} as unknown as INodeTypes;

function subtitle(parameters: Record<string, unknown>): unknown {
	const node: INode = {
		id: '1',
		name: 'M',
		type: 'x',
		typeVersion: 1,
		position: [0, 0],
		parameters: parameters as INode['parameters'],
	};
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	return workflow.expression.getSimpleParameterValue(
		node,
		description.subtitle as string,
		'internal',
		{},
	);
}

describe('canvas subtitle', () => {
	it.each([
		[
			{ resource: 'video', operation: 'generate', model: 'vidmodel-1.5-pro' },
			'Generate Video: Vidmodel 1.5 Pro',
		],
		[
			{ resource: 'video', operation: 'generate', model: 'video-by-id', modelId: 'my-video-model' },
			'Generate Video: my-video-model',
		],
		[{ resource: 'image', operation: 'generate', modelId: ' image-1 ' }, 'Generate Image: image-1'],
		[{ resource: 'music', operation: 'generate' }, 'Generate Music'],
		[{ resource: 'task', operation: 'getStatus' }, 'Task: Get Status'],
		[{ resource: 'task', operation: 'waitForCompletion' }, 'Task: Wait for Completion'],
		[{ resource: 'task', operation: 'downloadFiles' }, 'Task: Download Files'],
		[{ resource: '__CUSTOM_API_CALL__', operation: '__CUSTOM_API_CALL__' }, 'Custom API Call'],
		[{ resource: 'nonsense', operation: 'nonsense' }, ''],
	])('%j → %s', (parameters, expected) => {
		expect(subtitle(parameters)).toBe(expected);
	});
});
