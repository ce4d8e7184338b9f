import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { parseTaskData, type Task } from '../../../shared/task';
import { finishBatch, type ItemOperation, type ItemOutcome } from '../batch';
import { completeTask } from '../waitAndDownload';
import { getApiCredentials } from '../../../shared/transport/api';
import { WAIT_MODE_PARK, checkParkable, parkExecution, readWaitMode } from '../durableWait';
import { PARK_KEY, parkStateKey, verifyParkState, type ParkState } from '../parkState';
import { asItemError } from '../itemErrors';
import { readRunOptions, type RunOptions } from '../runOptions';
import { taskRunOptions } from '../runOptionsPanel';
import { ProgressReporter } from '../progress';
import {
	carriedFacts,
	originFromCreatedTime,
	readTaskId,
	taskIdProperty,
	type CarriedFacts,
} from './taskId';

export const description: INodeProperties[] = updateDisplayOptions(
	{ show: { resource: ['task'], operation: ['waitForCompletion'] } },
	[taskIdProperty, taskRunOptions('waitForCompletion')],
);

interface Entry {
	taskId: string;
	run: RunOptions;
	/** Set when the item comes from the node that parked this execution (parkState.ts). */
	park?: ParkState;
	/** Why the item's park state was ignored, for the output item. */
	notice?: string;
	json: IDataObject;
}

/** The names of the nodes upstream of this one (where a parking node can be). */
function upstreamOf(ctx: IExecuteFunctions): string[] {
	try {
		return ctx.getParentNodes(ctx.getNode().name).map((node) => node.name);
	} catch {
		return [];
	}
}

/**
 * The parked item's model and reference: sealed in the state; from the item for 0.1.0's states,
 * which did not seal them (as 0.1.0 read them).
 */
function parkedItemFacts(
	park: ParkState,
	json: IDataObject,
): { model?: string; reference?: string } {
	const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
	const source = park.item ?? json;
	return { model: text(source.model), reference: text(source.reference) };
}

/** The park-state key of each run (from its credential), read before the items are prepared. */
const parkKeys = new WeakMap<IExecuteFunctions, Buffer | undefined>();

function knownTask(state: ParkState | undefined): Task | undefined {
	if (!state?.task) return undefined;
	try {
		return parseTaskData(state.task);
	} catch {
		return undefined;
	}
}

/**
 * Picks up tasks by task_id (after a timeout, a restart, or from another workflow): reads at
 * once, then polls on the adaptive schedule until final, then downloads like Generate.
 * Items of a node that parked the execution carry their submission facts and, when their
 * callback confirmed it, the final task: those are finished without another status read, and
 * the output is what the parking node would have output by polling.
 */
export const operation: ItemOperation<Entry, ProgressReporter> = {
	async override(ctx) {
		const items = ctx.getInputData();
		if (items.length > 0 && readWaitMode(ctx, 0) === WAIT_MODE_PARK) {
			return await parkOnTasks(ctx);
		}
		if (items.some((item) => item.json?.[PARK_KEY] !== undefined)) {
			let apiKey = '';
			try {
				apiKey = (await getApiCredentials(ctx)).apiKey;
			} catch {
				apiKey = '';
			}
			parkKeys.set(ctx, parkStateKey(apiKey));
		}
		return undefined;
	},

	prepare(ctx, i, item) {
		const json = { ...(item.json ?? {}) };
		delete json[PARK_KEY];
		const given = ctx.getNodeParameter('taskId', i, '') as unknown;
		const fromItem =
			(given === '' || given === undefined) && typeof json.task_id === 'string'
				? json.task_id
				: undefined;
		let ownTaskId: string | undefined;
		let taskIdError: unknown;
		try {
			ownTaskId = readTaskId(ctx, i);
		} catch (error) {
			taskIdError = error;
		}
		const { state: park, notice } = verifyParkState(
			item.json,
			parkKeys.get(ctx),
			ctx.getExecutionId() ?? '',
			fromItem ?? ownTaskId,
			{ index: i, upstream: upstreamOf(ctx), now: Date.now() },
		);
		if (notice) json.notice = notice;
		if (park?.error) {
			return {
				ok: false,
				error: new NodeOperationError(ctx.getNode(), String(park.error.message), {
					itemIndex: i,
					description:
						typeof park.error.description === 'string' ? park.error.description : undefined,
				}),
				json,
			};
		}
		// With the parking node's state, an empty Task ID means the item's own task.
		const taskId = park && fromItem !== undefined ? fromItem : ownTaskId;
		if (taskId === undefined) throw taskIdError;
		const run = readRunOptions(ctx, i, false);
		if (park) {
			// Generate's file options carry over unless this node sets its own.
			const own = ctx.getNodeParameter('options', i, {}) as IDataObject;
			if (own.downloadFiles === undefined && typeof park.downloadFiles === 'boolean')
				run.downloadFiles = park.downloadFiles;
			if (own.binaryPropertyName === undefined && typeof park.binaryPropertyName === 'string')
				run.binaryPropertyName = park.binaryPropertyName;
		}
		return { taskId, run, park, notice, json };
	},

	begin: (ctx) => ({ batch: new ProgressReporter(ctx, ctx.getInputData().length) }),

	concurrency: (first) => first?.run.maxConcurrentTasks ?? 1,

	async execute(ctx, i, entry, progress) {
		const { park, json } = entry;
		// Verified for this task: the item's model and reference are the parking node's output.
		const fromPark = park !== undefined;
		const known = fromPark ? knownTask(park) : undefined;
		const submittedAt = fromPark ? park.submittedAt : undefined;
		// Without a park state, what the item itself says (a Generate output, a row that kept it).
		const facts: CarriedFacts = fromPark
			? { ...parkedItemFacts(park, json), submittedAt }
			: carriedFacts(json, entry.taskId, Date.now());
		const outcome = await completeTask(ctx, {
			itemIndex: i,
			taskId: entry.taskId,
			model: facts.model,
			reference: facts.reference,
			submittedAt: facts.submittedAt,
			// The creation time is learnt from the first read; until then the origin is "now".
			origin: submittedAt ?? Date.now(),
			originKnown: submittedAt !== undefined,
			pollImmediately: true,
			learnOrigin: submittedAt !== undefined ? undefined : originFromCreatedTime,
			known,
			knownFinishedAt: known ? park?.finishedAt : undefined,
			wait: true,
			run: entry.run,
			progress,
		});
		if (entry.notice) (outcome.ok ? outcome.data.json : outcome.json).notice = entry.notice;
		return outcome;
	},
};

/**
 * "Wait Mode: Park Until Callbacks" on existing tasks: they must have been submitted in this
 * execution with `{{ $execution.resumeUrl }}` as Callback URL. Reads each status once, parks
 * until the callbacks (or the Timeout); the Task → Wait for Completion node after this one
 * makes the output.
 */
async function parkOnTasks(ctx: IExecuteFunctions): Promise<INodeExecutionData[]> {
	const items = ctx.getInputData();
	const resumeUrl = await checkParkable(ctx, {});
	let timeoutMs: number | undefined;
	const outcomes: ItemOutcome[] = items.map((_, i) => {
		try {
			const taskId = readTaskId(ctx, i);
			timeoutMs ??= readRunOptions(ctx, i, false).timeoutMs;
			return {
				ok: true,
				data: { json: { task_id: taskId, status: 'unknown' }, pairedItem: { item: i } },
			};
		} catch (error) {
			return { ok: false, error: asItemError(ctx, i, error), json: {} };
		}
	});
	if (outcomes.some((o) => !o.ok) && !ctx.continueOnFail()) await finishBatch(ctx, outcomes);
	return await parkExecution(ctx, outcomes, {
		resumeUrl,
		timeoutMs: timeoutMs ?? 30 * 60_000,
		submittedAt: [],
	});
}
