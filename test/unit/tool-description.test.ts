// The tool description an AI Agent's model reads, resolved by n8n-workflow's own helpers as n8n
// 2.41 does for the "Media Generation Tool" it derives from `usableAsTool` (the type name gets
// "Tool" appended; n8n adds its own Description fields only when the node has none). Every
// operation of every resource has its own default, and the ordinary node never shows it.
import {
	NodeHelpers,
	type INode,
	type INodeProperties,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { MediaGeneration } from '../../nodes/MediaGeneration/MediaGeneration.node';
import { TOOL_DESCRIPTIONS } from '../../nodes/MediaGeneration/actions/toolDescriptions';

const node = new MediaGeneration().description;
const tool: INodeTypeDescription = {
	...node,
	name: `${node.name}Tool`,
	displayName: `${node.displayName} Tool`,
};

/** Every resource and the operations its selector offers. */
const pairs: Array<[string, string]> = (
	node.properties.find((p) => p.name === 'resource')!.options as Array<{ value: string }>
).flatMap(({ value: resource }) =>
	(
		node.properties.find(
			(p) => p.name === 'operation' && p.displayOptions?.show?.resource?.includes(resource),
		)!.options as Array<{ value: string }>
	).map(({ value }): [string, string] => [resource, value]),
);

function resolved(type: INodeTypeDescription, resource: string, operation: string) {
	const parameters = NodeHelpers.getNodeParameters(
		type.properties,
		{ resource, operation },
		true,
		false,
		null,
		type,
	)!;
	const instance: INode = {
		id: '1',
		name: 'Tool',
		type: type.name,
		typeVersion: 1,
		position: [0, 0],
		parameters,
	};
	return {
		parameters,
		description: NodeHelpers.getToolDescriptionForNode(instance, { description: type } as never),
	};
}

describe('tool descriptions', () => {
	test('every operation is covered', () => {
		expect(pairs.length).toBeGreaterThanOrEqual(6);
		expect(pairs.map(([r, o]) => `${r}.${o}`).sort()).toEqual(
			Object.entries(TOOL_DESCRIPTIONS)
				.flatMap(([r, ops]) => Object.keys(ops).map((o) => `${r}.${o}`))
				.sort(),
		);
	});

	test.each(pairs)(
		'%s → %s: the tool describes it; the node shows no such field',
		(resource, operation) => {
			const { description } = resolved(tool, resource, operation);
			expect(description).toBe(TOOL_DESCRIPTIONS[resource][operation]);
			// What comes back, always; what it costs: paid for Generate, free otherwise.
			for (const field of ['task_id', 'status', 'files', 'url', 'mime_type', 'expires_at'])
				expect(description).toContain(field);
			expect(description).toMatch(
				operation === 'generate' ? /paid generation/ : /Free: starts no generation/,
			);
			expect(resolved(node, resource, operation).parameters).not.toHaveProperty('toolDescription');
		},
	);

	test('n8n adds none of its own Description fields: the node has its own toolDescription', () => {
		const names = node.properties.map((p: INodeProperties) => p.name);
		expect(names).toContain('toolDescription');
		expect(names).not.toContain('descriptionType');
	});
});
