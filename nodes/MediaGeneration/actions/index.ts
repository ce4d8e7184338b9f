import type { INodeProperties } from 'n8n-workflow';

import * as image from './image';
import * as music from './music';
import * as task from './task';
import { toolDescriptionProperties } from './toolDescriptions';
import * as video from './video';

/**
 * All of the node's parameters: the tool description (only in the AI Agent tool, first as n8n
 * places its own), the resource selector, then each resource's operations.
 */
export const properties: INodeProperties[] = [
	...toolDescriptionProperties,
	{
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'Image', value: 'image' },
			{ name: 'Music', value: 'music' },
			{ name: 'Task', value: 'task', description: 'An existing task, by its task_id' },
			{ name: 'Video', value: 'video' },
		],
		default: 'video',
	},
	...video.description,
	...image.description,
	...music.description,
	...task.description,
];
