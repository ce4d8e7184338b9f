import type { INodeProperties } from 'n8n-workflow';

import { generateDescription, generateOperation } from '../generate';

export const description: INodeProperties[] = generateDescription('video');

export const operation = generateOperation('video');
