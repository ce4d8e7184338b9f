import type { INodeProperties } from 'n8n-workflow';

import * as generate from './generate.operation';

export { generate };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['music'] } },
		options: [
			{
				name: 'Generate',
				value: 'generate',
				action: 'Generate a music track',
				description: 'Generate a music track from a prompt',
			},
		],
		default: 'generate',
	},
	...generate.description,
];
