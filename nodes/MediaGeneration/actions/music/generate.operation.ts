import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { executeGenerate, generateDescription } from '../generate';

export const description: INodeProperties[] = generateDescription('music');

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[]> {
	return await executeGenerate.call(this, 'music');
}
