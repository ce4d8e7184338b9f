import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	finishBatch,
	guard,
	isOutcome,
	mapWithLimit,
	type ItemOperation,
	type ItemOutcome,
} from './batch';
import * as image from './image';
import { asItemError } from './itemErrors';
import * as music from './music';
import * as task from './task';
import * as video from './video';

/**
 * The one item loop of every operation: prepare every item (bad input costs no request), run
 * the prepared ones at most `concurrency` at a time, each failure kept to its item, then make
 * the node's output from the outcomes.
 */
export async function runBatch<Prepared extends object, Batch>(
	ctx: IExecuteFunctions,
	operation: ItemOperation<Prepared, Batch>,
): Promise<INodeExecutionData[]> {
	const instead = await operation.override?.(ctx);
	if (instead) return instead;
	const items = ctx.getInputData();
	const prepared = items.map((item, i): Prepared | ItemOutcome => {
		try {
			return operation.prepare(ctx, i, item);
		} catch (error) {
			return {
				ok: false,
				error: asItemError(ctx, i, error),
				json: operation.refused?.(ctx, i) ?? {},
			};
		}
	});
	try {
		const started = operation.begin
			? await operation.begin(ctx, prepared)
			: { batch: undefined as Batch };
		if ('output' in started) return started.output;
		const first = prepared.find((p): p is Prepared => !isOutcome(p));
		const outcomes = await mapWithLimit(items.length, operation.concurrency(first), async (i) => {
			const entry = prepared[i];
			if (isOutcome(entry)) return entry;
			return await guard(ctx, i, async () => await operation.execute(ctx, i, entry, started.batch));
		});
		operation.settle?.(ctx, started.batch);
		const output = await finishBatch(ctx, outcomes);
		operation.finish?.(ctx);
		return output;
	} finally {
		await operation.end?.(ctx);
	}
}

type Run = (ctx: IExecuteFunctions) => Promise<INodeExecutionData[]>;

const operations: Record<string, Record<string, Run>> = {
	image: { generate: async (ctx) => await runBatch(ctx, image.generate.operation) },
	video: { generate: async (ctx) => await runBatch(ctx, video.generate.operation) },
	music: { generate: async (ctx) => await runBatch(ctx, music.generate.operation) },
	task: {
		getStatus: async (ctx) => await runBatch(ctx, task.getStatus.operation),
		waitForCompletion: async (ctx) => await runBatch(ctx, task.waitForCompletion.operation),
		downloadFiles: async (ctx) => await runBatch(ctx, task.downloadFiles.operation),
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
	return [await run(this)];
}
