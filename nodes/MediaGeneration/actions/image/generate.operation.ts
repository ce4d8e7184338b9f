import type { INodeProperties } from 'n8n-workflow';

import { generateDescription, generateOperation } from '../generate';

export const description: INodeProperties[] = generateDescription('image');

export const operation = generateOperation('image');
