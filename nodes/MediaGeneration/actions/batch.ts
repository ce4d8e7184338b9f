import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { getApiCredentials } from '../../shared/transport/api';
import { scrubSecret } from '../../shared/transport/faults';
import type { ItemFailure } from './itemErrors';
import { OUTCOME_OPERATIONS, outcomeOf } from './outcome';

export type ItemOutcome = { ok: true; data: INodeExecutionData } | ({ ok: false } & ItemFailure);

/** Whether a prepared entry is already the item's outcome (it failed before running). */
export function isOutcome<Prepared extends object>(
	entry: Prepared | ItemOutcome,
): entry is ItemOutcome {
	return 'ok' in entry;
}

/**
 * What one operation does, item by item. The router runs it for the whole batch (runBatch in
 * router.ts): every item is prepared first, then executed at most `concurrency` at a time, then
 * the outcomes become the node's output (finishBatch). `Prepared` must have no `ok` field.
 */
export interface ItemOperation<Prepared extends object, Batch = undefined> {
	/** Runs the whole batch another way (parking) when it returns output: nothing is prepared. */
	override?(ctx: IExecuteFunctions): Promise<INodeExecutionData[] | undefined>;
	/** Reads and checks one item's parameters; sends nothing. Throws, or returns an outcome, to fail it. */
	prepare(
		ctx: IExecuteFunctions,
		itemIndex: number,
		item: INodeExecutionData,
	): Prepared | ItemOutcome;
	/** What an item that `prepare` refused keeps in its json besides the error (e.g. its reference). */
	refused?(ctx: IExecuteFunctions, itemIndex: number): IDataObject;
	/** Once every item is prepared: ends the batch another way ({ output }) or sets up what items share. */
	begin?(
		ctx: IExecuteFunctions,
		prepared: Array<Prepared | ItemOutcome>,
	):
		| Promise<{ output: INodeExecutionData[] } | { batch: Batch }>
		| { output: INodeExecutionData[] }
		| { batch: Batch };
	/** How many items run at once, given the first item that prepared. */
	concurrency(first: Prepared | undefined): number;
	/** Does the work for one prepared item. Whatever it throws becomes that item's error. */
	execute(
		ctx: IExecuteFunctions,
		itemIndex: number,
		prepared: Prepared,
		batch: Batch,
	): Promise<ItemOutcome>;
	/** After every item ran, before the output is made. */
	settle?(ctx: IExecuteFunctions, batch: Batch): void;
	/** After the output is made (not when the batch ends in an error). */
	finish?(ctx: IExecuteFunctions): void;
	/** Once the node run ends in any way after `begin` (output made, error thrown, parked). */
	end?(ctx: IExecuteFunctions): Promise<void>;
}

/** Runs `fn` for indexes 0..count-1 with at most `limit` running at once; keeps order. */
export async function mapWithLimit<T>(
	count: number,
	limit: number,
	fn: (index: number) => Promise<T>,
): Promise<T[]> {
	const results = new Array<T>(count);
	let next = 0;
	const worker = async () => {
		while (next < count) {
			const index = next++;
			results[index] = await fn(index);
		}
	};
	const workers = Array.from({ length: Math.max(1, Math.min(limit, count)) }, worker);
	await Promise.all(workers);
	return results;
}

async function scrubFailure(ctx: IExecuteFunctions, failure: ItemFailure): Promise<void> {
	let apiKey = '';
	try {
		apiKey = (await getApiCredentials(ctx)).apiKey;
	} catch {
		apiKey = '';
	}
	const { error } = failure;
	error.message = scrubSecret(error.message, [apiKey]);
	if (typeof error.description === 'string')
		error.description = scrubSecret(error.description, [apiKey]);
}

/**
 * Turns per-item outcomes into the node's output. With Continue On Fail, failed items become
 * `{ json: { error, …task fields }, pairedItem }` (so "Continue (using error output)" routes
 * them); without, the first failure is thrown after every item has run, and its description
 * lists the other items' task_ids so that finished work can still be collected.
 */
export async function finishBatch(
	ctx: IExecuteFunctions,
	outcomes: ItemOutcome[],
): Promise<INodeExecutionData[]> {
	const failures = outcomes.filter((o): o is { ok: false } & ItemFailure => !o.ok);
	for (const failure of failures) await scrubFailure(ctx, failure);

	if (failures.length > 0 && !ctx.continueOnFail()) {
		const first = failures[0];
		const others = outcomes
			.map((o, index) => ({ o, index }))
			.filter(({ o }) => o !== first)
			.map(({ o, index }) => {
				const json = o.ok ? o.data.json : o.json;
				const id = typeof json.task_id === 'string' ? json.task_id : undefined;
				return id
					? `item ${index}: task_id ${id} (${o.ok ? String(json.status) : 'error'})`
					: undefined;
			})
			.filter((line): line is string => line !== undefined);
		if (others.length > 0) {
			const note = `Other items of this run: ${others.join('; ')}. Their files can be fetched with Task → Download Files within 24 hours.`;
			first.error.description = first.error.description
				? `${first.error.description}\n${note}`
				: note;
		}
		if (failures.length > 1) {
			first.error.message = `${first.error.message} (and ${failures.length - 1} more failed item${failures.length > 2 ? 's' : ''})`;
		}
		throw first.error;
	}

	// n8n routes an item to the error output only when its json has no keys but error, message
	// and details (WorkflowExecute.handleNodeErrorOutput); an item-level `error` field would make
	// n8n replace the json by the message alone, losing task_id. So: task fields under `details`
	// for the error output, at the top level otherwise, and never an item-level `error`.
	const toErrorOutput = ctx.getNode().onError === 'continueErrorOutput';
	const withOutcome = OUTCOME_OPERATIONS.has(String(ctx.getNodeParameter('operation', 0, '')));
	return outcomes.map((outcome, index) => {
		if (outcome.ok) {
			if (withOutcome) outcome.data.json.outcome = outcomeOf(outcome.data.json, true);
			return outcome.data;
		}
		if (withOutcome) outcome.json = { ...outcome.json, outcome: outcomeOf(outcome.json, false) };
		const description = outcome.error.description
			? { error_description: outcome.error.description }
			: {};
		const json: IDataObject = toErrorOutput
			? { error: outcome.error.message, details: { ...description, ...outcome.json } }
			: { error: outcome.error.message, ...description, ...outcome.json };
		return { json, pairedItem: { item: index } };
	});
}

/** Wraps a per-item function so nothing it throws escapes as anything but an ItemOutcome. */
export async function guard(
	ctx: IExecuteFunctions,
	itemIndex: number,
	fn: () => Promise<ItemOutcome>,
): Promise<ItemOutcome> {
	try {
		return await fn();
	} catch (error) {
		const wrapped =
			error instanceof NodeOperationError || error instanceof NodeApiError
				? error
				: new NodeOperationError(ctx.getNode(), error instanceof Error ? error : String(error), {
						itemIndex,
					});
		return { ok: false, error: wrapped, json: {} };
	}
}
