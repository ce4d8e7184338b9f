// The workflow the benchmarks and the soak test run: Manual Trigger (items pinned, one per
// prompt) → Media Generation (music, generate-music: the model with the fewest required fields;
// the node's batching, polling and download code is the same for every model).
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import {
	MANUAL_TRIGGER_TYPE,
	MEDIA_GENERATION_TYPE,
	chain,
	mediaCredentials,
	type WorkflowJson,
} from '../../test/harness';

export const GENERATION_NODE = 'Media Generation';

/** The file of each task in the batch benchmark (section 1); bench/lib/plan.ts lists the rest. */
export const BATCH_FILE_BYTES = 20_000;
/** The file of each task elsewhere (large batches, polling checks, overhead). */
export const SMALL_FILE_BYTES = 1_000;

export interface GenerationOptions {
	/** Tasks in flight; undefined = the node's default. */
	concurrency?: number;
	/** Node setting, e.g. 'continueErrorOutput' so that failed items go to the error output. */
	onError?: 'continueErrorOutput' | 'continueRegularOutput' | 'stopWorkflow';
	/** Extra options of the node's Options collection. */
	options?: IDataObject;
}

export function generationWorkflow(opts: GenerationOptions = {}): WorkflowJson {
	const options: IDataObject = { ...(opts.options ?? {}) };
	if (opts.concurrency !== undefined) options.maxConcurrentTasks = opts.concurrency;
	return chain(
		{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
		{
			name: GENERATION_NODE,
			type: MEDIA_GENERATION_TYPE,
			parameters: {
				resource: 'music',
				operation: 'generate',
				model: 'generate-music',
				prompt: '={{ $json.prompt }}',
				options: options as INodeParameters,
			},
			credentials: mediaCredentials(),
			...(opts.onError ? { settings: { onError: opts.onError } } : {}),
		},
	);
}

/** Items for the Manual Trigger: one prompt each, numbered so every item is traceable. */
export function promptItems(count: number, prompt: (i: number) => string): IDataObject[] {
	return Array.from({ length: count }, (_, i) => ({ prompt: prompt(i) }));
}

/** The input item index an output item is paired with. */
export function pairedIndex(item: { pairedItem?: unknown }): number | undefined {
	const p = item.pairedItem;
	if (typeof p === 'number') return p;
	if (Array.isArray(p)) return pairedIndex({ pairedItem: p[0] });
	if (p && typeof p === 'object' && typeof (p as { item?: unknown }).item === 'number') {
		return (p as { item: number }).item;
	}
	return undefined;
}

/**
 * The node's Max File Size (MB of 1,048,576 bytes) for a download of `size` bytes: the file's own
 * size, rounded up, as a user who downloads such files sets it. Without it the 5 GB download
 * fails: the default in filesystem mode is 2048 MB.
 */
export function maxFileSizeMbFor(size: number): number {
	return Math.ceil(size / (1024 * 1024));
}
