import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import * as image from './image';
import * as music from './music';
import * as task from './task';
import * as video from './video';

type Operation = (this: IExecuteFunctions) => Promise<INodeExecutionData[]>;

const operations: Record<string, Record<string, Operation>> = {
	image: { generate: image.generate.execute },
	video: { generate: video.generate.execute },
	music: { generate: music.generate.execute },
	task: {
		getStatus: task.getStatus.execute,
		waitForCompletion: task.waitForCompletion.execute,
		downloadFiles: task.downloadFiles.execute,
	},
};

/** Resource and operation cannot be expressions: one operation runs for all items. */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const run = operations[resource]?.[operation];
	if (!run) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operation}" of resource "${resource}" is not supported`,
		);
	}
	return [await run.call(this)];
}
