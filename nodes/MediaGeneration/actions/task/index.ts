import type { INodeProperties } from 'n8n-workflow';

import * as downloadFiles from './downloadFiles.operation';
import * as getStatus from './getStatus.operation';
import * as waitForCompletion from './waitForCompletion.operation';

export { downloadFiles, getStatus, waitForCompletion };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['task'] } },
		options: [
			{
				name: 'Download Files',
				value: 'downloadFiles',
				action: 'Download the files of a finished task',
				description: 'Fresh binaries of a finished task, within the 24 hours its files stay valid',
			},
			{
				name: 'Get Status',
				value: 'getStatus',
				action: 'Get the status of a task',
				description: 'Read the status, progress and file URLs of a task once',
			},
			{
				name: 'Wait for Completion',
				value: 'waitForCompletion',
				action: 'Wait for a task to complete',
				description:
					'Pick up an existing task (after a timeout, a restart or from another workflow), wait until it is finished or failed, and download its files',
			},
		],
		default: 'waitForCompletion',
	},
	...getStatus.description,
	...waitForCompletion.description,
	...downloadFiles.description,
];
