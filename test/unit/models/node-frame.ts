import type { INodeProperties } from 'n8n-workflow';

import { properties } from '../../../nodes/MediaGeneration/actions';

/** The node's own Resource and Operation selectors, around which the registry's panels sit. */
export const frame: INodeProperties[] = properties.filter(
	(p) => p.name === 'resource' || p.name === 'operation',
);
