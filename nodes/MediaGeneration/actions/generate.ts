import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { getApiCredentials, getTaskStatus, submitTask } from '../../shared/transport/api';
import { maskCallbackUrl, signCallbackUrl } from '../../shared/callbackUrl';
import { taskOutputJson } from '../../shared/output';
import type { SubmittedTask, Task } from '../../shared/task';
import { buildSubmission, checkReferenceImages, generateProperties, getModel } from '../models';
import { DOCUMENTED_LIMITS } from '../models/referenceImages';
import {
	UNWAITED_LINK_MS,
	checkBinaryImages,
	contentReference,
	imageError,
	linkBaseProblem,
	linkImages,
	type BinaryImageRef,
	type CheckedImage,
} from '../../shared/transport/binaryImageLinks';
import { ALLOW_PRIVATE_FIELD } from '../../shared/transport/fileHosts';
import type { MediaKind } from '../models/types';
import {
	finishBatch,
	guard,
	isOutcome,
	mapWithLimit,
	type ItemOperation,
	type ItemOutcome,
} from './batch';
import { durationKey, type DurationLearner } from '../polling/durations';
import { completeTask } from './waitAndDownload';
import { openDurations, saveDurations } from '../polling/savedDurations';
import {
	WAIT_MODE_PARK,
	checkParkable,
	parkCallbackUrl,
	parkExecution,
	readWaitMode,
} from './durableWait';
import {
	asItemError,
	cancelled,
	lostRunFailure,
	resumedTaskUnknown,
	submitFailure,
	unmatchedLegacyTask,
} from './itemErrors';
import { hintCrashSafety } from './crashHint';
import {
	closeRun,
	countSubmission,
	findSubmitted,
	forgetRun,
	lostRun,
	markFailed,
	openLedger,
	record,
	submissionDigest,
	submittedInExecution,
	type Found,
	type SubmissionDigest,
} from './acceptedTasks';
import { readCallbackReference, readRunOptions, type RunOptions } from './runOptions';
import { generateRunProperties } from './runOptionsPanel';
import { ProgressReporter } from './progress';

/** The panel of Image/Video/Music → Generate: the model's fields, then waiting and files. */
export function generateDescription(kind: MediaKind): INodeProperties[] {
	return [...generateProperties(kind), ...generateRunProperties(kind)];
}

export interface Prepared {
	model: string;
	modelKey: string;
	/** With binary reference images: their content references in `image_urls` (see begin). */
	input: IDataObject;
	run: RunOptions;
	/** Reference images the panel takes from binary fields of the input item. */
	binaryImages?: BinaryImageRef[];
	/** Those files once checked; linked in `image_urls` only in the body that is submitted. */
	images?: CheckedImage[];
	/** How long their links live: the Timeout when the node waits (polling or parked). */
	imageLinkMs?: number;
}

export interface Batch {
	progress: ProgressReporter;
	durations: DurationLearner;
	/** For the hint after a manual run (crashHint.ts). */
	waitForCompletion: boolean;
	startedAt: number;
	/** The longest typical duration of the batch's models. */
	typicalMs: number;
}

/**
 * The one implementation behind the three Generate operations. Every item is validated before
 * anything is sent; then all items are submitted and awaited concurrently (bounded), so a batch
 * takes about as long as its slowest task.
 */
export function generateOperation(kind: MediaKind): ItemOperation<Prepared, Batch> {
	return {
		// 1. Validate everything first: bad input costs no request and no credits.
		prepare(ctx, itemIndex) {
			const submission = buildSubmission(ctx, itemIndex, kind);
			const run = readRunOptions(ctx, itemIndex, true);
			if (!submission.binaryImages) return { ...submission, run };
			const imageLinkMs = run.waitForCompletion ? run.timeoutMs : UNWAITED_LINK_MS;
			return { ...submission, run, imageLinkMs };
		},

		refused: refusedJson,

		async begin(ctx, prepared) {
			// First, before anything can fail: a run that ends in any way leaves its ledger.
			await openLedger(ctx);
			const items = ctx.getInputData();
			await checkImageFiles(ctx, prepared);
			const invalid = prepared.filter(
				(p): p is ItemOutcome & { ok: false } => isOutcome(p) && !p.ok,
			);
			if (invalid.length > 0 && !ctx.continueOnFail()) {
				const first = invalid[0].error;
				const note =
					items.length > 1
						? `No request was sent for any of the ${items.length} items.${invalid.length > 1 ? ` ${invalid.length} items are invalid.` : ''}`
						: 'No request was sent.';
				first.description = first.description ? `${first.description}\n${note}` : note;
				throw first;
			}

			// 2. Submit and wait, at most `maxConcurrentTasks` at a time (taken from the first item).
			const firstValid = prepared.find((p): p is Prepared => !isOutcome(p));
			if (firstValid) checkSpend(ctx, prepared, firstValid.run.maxSubmissions);
			const limit = firstValid?.run.maxConcurrentTasks ?? 1;
			const progress = new ProgressReporter(ctx, items.length);

			const firstIndex = prepared.findIndex((p) => !isOutcome(p));
			if (firstValid?.run.waitForCompletion && readWaitMode(ctx, firstIndex) === WAIT_MODE_PARK) {
				return { output: await generateParked(ctx, prepared, limit, progress) };
			}
			return {
				batch: {
					progress,
					durations: openDurations(ctx),
					waitForCompletion: firstValid?.run.waitForCompletion ?? false,
					startedAt: Date.now(),
					typicalMs: prepared.reduce(
						(most, p) =>
							isOutcome(p) ? most : Math.max(most, getModel(p.modelKey).typicalDuration.ms),
						0,
					),
				},
			};
		},

		concurrency: (first) => first?.run.maxConcurrentTasks ?? 1,

		async execute(ctx, itemIndex, prepared, batch) {
			return await runItem(ctx, itemIndex, prepared, batch.progress, batch.durations);
		},

		settle(ctx, batch) {
			saveDurations(ctx, batch.durations);
			hintCrashSafety(ctx, {
				waitForCompletion: batch.waitForCompletion,
				waitedMs: Date.now() - batch.startedAt,
				typicalMs: batch.typicalMs,
			});
		},

		finish(ctx) {
			forgetRun(ctx);
		},

		// Only runs n8n lost keep their start marker (see closeRun).
		end: closeRun,
	};
}

/**
 * Checks the binary reference images of every item before anything is sent (an item whose
 * files fail becomes that item's error, as invalid input does), and whether the service can
 * reach n8n's links at all. A checked item's `image_urls` then holds the files' content
 * references, so that the ledger knows a file again whatever link it was sent as.
 */
async function checkImageFiles(
	ctx: IExecuteFunctions,
	prepared: Array<Prepared | ItemOutcome>,
): Promise<void> {
	if (!prepared.some((p) => !isOutcome(p) && p.binaryImages)) return;
	const allowPrivate = await getApiCredentials(ctx).then(
		(c) => c.allowPrivateFileHosts,
		() => false,
	);
	// n8n's public URL is the same for every file: checked once, refused for every item.
	let baseProblem: Promise<string | undefined> | undefined;
	// A few files read at once: each read is local, bounded by the size limit.
	await mapWithLimit(prepared.length, 4, async (itemIndex) => {
		const entry = prepared[itemIndex];
		if (isOutcome(entry) || !entry.binaryImages) return;
		try {
			const limits = getModel(entry.modelKey).referenceImages ?? DOCUMENTED_LIMITS;
			const images = await checkBinaryImages(ctx, itemIndex, entry.binaryImages, limits);
			baseProblem ??= linkBaseProblem(ctx, images[0], allowPrivate, ALLOW_PRIVATE_FIELD);
			const problem = await baseProblem;
			if (problem) throw imageError(ctx, itemIndex, [problem]);
			prepared[itemIndex] = {
				...entry,
				images,
				input: { ...entry.input, image_urls: images.map(contentReference) },
			};
		} catch (error) {
			prepared[itemIndex] = {
				ok: false,
				error: asItemError(ctx, itemIndex, error),
				json: refusedJson(ctx, itemIndex),
			};
		}
	});
}

/**
 * What an item refused before anything was sent keeps besides its error: its Callback
 * Reference, so that the row it came from can be found (refused by prepare or by the file checks).
 */
function refusedJson(ctx: IExecuteFunctions, itemIndex: number): IDataObject {
	return { reference: readCallbackReference(ctx, itemIndex) ?? null };
}

/**
 * The spend guard: the items this run would submit (not those resuming a task of an earlier try
 * or of the execution a Retry starts from), plus what this node already submitted in this
 * execution, must stay within Options → Max Submissions per Execution. Checked before anything
 * is sent.
 */
function checkSpend(
	ctx: IExecuteFunctions,
	prepared: Array<Prepared | ItemOutcome>,
	cap: number,
): void {
	let toSubmit = 0;
	// A lost run's items are not sent (see lostRun): nothing to count.
	const lost = lostRun(ctx);
	prepared.forEach((p, itemIndex) => {
		if (isOutcome(p)) return;
		const digest = submissionDigest(ctx, {
			model: p.model,
			input: p.input,
			callbackUrl: p.run.callbackUrl,
		});
		const state = findSubmitted(ctx, itemIndex, digest)?.state;
		if (state !== 'accepted' && state !== 'unknown' && !lost) toSubmit += 1;
	});
	const earlier = submittedInExecution(ctx);
	if (earlier + toSubmit <= cap) return;
	const counted = earlier > 0 ? ` (${toSubmit} now, ${earlier} earlier in this execution)` : '';
	throw new NodeOperationError(
		ctx.getNode(),
		`This execution would submit ${earlier + toSubmit} generations${counted}, more than Options → Max Submissions per Execution (${cap})`,
		{
			description: `Nothing was submitted. If ${earlier + toSubmit} paid generations are intended, raise "Max Submissions per Execution" in the node's Options; otherwise check the input of this node (for example a spreadsheet read whole by mistake).`,
		},
	);
}

/**
 * "Wait Mode: Park Until Callbacks": every item is submitted with this execution's resume URL
 * as callback URL, then the execution parks (see durableWait.ts). The Task → Wait for
 * Completion node after this one makes the output polling would have made.
 */
async function generateParked(
	ctx: IExecuteFunctions,
	prepared: Array<Prepared | ItemOutcome>,
	limit: number,
	progress: ProgressReporter,
): Promise<INodeExecutionData[]> {
	const own = prepared.find((p): p is Prepared => !('ok' in p) && p.run.callbackUrl !== undefined);
	const resumeUrl = await checkParkable(ctx, { userCallbackUrl: own?.run.callbackUrl });
	const timeoutMs = (prepared.find((p): p is Prepared => !('ok' in p)) as Prepared).run.timeoutMs;
	// Items whose task was accepted in the run this one retries: their callback goes to the
	// resume URL of that run's execution, which no longer waits, so parking cannot await them.
	const resumed = prepared.map((p, i) => {
		if ('ok' in p) return false;
		const found = findSubmitted(ctx, i, submissionDigest(ctx, { model: p.model, input: p.input }));
		return found?.state === 'accepted' && found.account !== 'unmatched';
	});
	const outcomes = await mapWithLimit(prepared.length, limit, async (i) => {
		const entry = prepared[i];
		if ('ok' in entry) return entry;
		const run = {
			...entry.run,
			waitForCompletion: false,
			callbackUrl: parkCallbackUrl(resumeUrl, i),
		};
		return await guard(
			ctx,
			i,
			async () => await runItem(ctx, i, { ...entry, run }, progress, undefined, true),
		);
	});
	if (outcomes.some((o) => !o.ok) && !ctx.continueOnFail()) {
		// As when polling: the first failure ends the node, listing the other items' task_ids
		// (finishBatch masks the resume URL's signature in what it throws). The ledger is kept:
		// a Retry of this execution resumes the accepted tasks.
		await finishBatch(ctx, outcomes);
	}
	const submittedAt = outcomes.map((o) => {
		const at = o.ok ? o.data.json.submitted_at : undefined;
		return typeof at === 'string' ? Date.parse(at) : undefined;
	}) as number[];
	const files = prepared.map((p) =>
		'ok' in p
			? undefined
			: { downloadFiles: p.run.downloadFiles, binaryPropertyName: p.run.binaryPropertyName },
	);
	const result = await parkExecution(ctx, outcomes, {
		resumeUrl,
		timeoutMs,
		submittedAt,
		files,
		resumed,
	});
	forgetRun(ctx);
	return result;
}

/** The callback URL as shown in the output: `secret`, `sig` and n8n's `signature` masked. */
export const withoutSecret = maskCallbackUrl;

/** What one item's run knows once its task is known: resumed from the ledger, or just submitted. */
interface ItemTask {
	submitted: SubmittedTask;
	submittedAt: number;
	/** The task as the status read of a resumed task found it. */
	known?: Task;
	knownAt?: number;
	resumed: boolean;
}

/**
 * One item of a Generate: checked, then its earlier submission looked up in the ledger (resumed,
 * or refused when it may have been accepted unseen), else submitted and recorded; then its
 * output made at once or after the wait.
 */
async function runItem(
	ctx: IExecuteFunctions,
	itemIndex: number,
	prepared: Prepared,
	progress: ProgressReporter,
	durations?: DurationLearner,
	parked = false,
): Promise<ItemOutcome> {
	const { model, input, run } = prepared;
	// Items still queued behind Max Tasks in Flight when the user cancels are never sent.
	if (ctx.getExecutionCancelSignal()?.aborted) {
		return { ok: false, ...cancelled(ctx, itemIndex, { model }) };
	}
	const refused = await precheckReferenceUrls(ctx, itemIndex, prepared);
	if (refused) return refused;

	const body: IDataObject = { model, input };
	// Signed with the credential, so the trigger can tell the reference is the node's own.
	if (run.callbackUrl)
		body.callback_url = signCallbackUrl(run.callbackUrl, (await getApiCredentials(ctx)).apiKey);
	const baseJson: IDataObject = { model, reference: run.callbackReference ?? null };

	// Parked, the callback URL is the execution's resume URL, which a Retry's execution does not
	// share: it is left out, so that the Retry finds the task (a user's Callback URL is refused
	// in that mode, see checkParkable).
	const digest = submissionDigest(ctx, {
		model,
		input,
		callbackUrl: parked ? undefined : run.callbackUrl,
	});
	const earlier = earlierSubmission(ctx, itemIndex, digest, baseJson);
	if (earlier && 'ok' in earlier) return earlier;
	const task = earlier
		? await resumeTask(ctx, itemIndex, earlier, baseJson)
		: await submitItem(ctx, itemIndex, prepared, body, digest, baseJson);
	if ('ok' in task) return task;
	progress.update(itemIndex, task.submitted.task_id, task.submitted.status);
	if (!run.waitForCompletion) return unwaitedOutput(itemIndex, prepared, body, task);
	return await awaitTask(ctx, itemIndex, prepared, task, digest, progress, durations);
}

/**
 * The reference image URLs' pre-check (Options → Check Reference Images). Binary reference
 * images were checked from their bytes (checkImageFiles), not as URLs.
 */
async function precheckReferenceUrls(
	ctx: IExecuteFunctions,
	itemIndex: number,
	prepared: Prepared,
): Promise<ItemOutcome | undefined> {
	const imageUrls = prepared.input.image_urls;
	if (
		!prepared.run.checkReferenceImages ||
		prepared.images ||
		!Array.isArray(imageUrls) ||
		imageUrls.length === 0
	)
		return undefined;
	let problem: NodeOperationError | undefined;
	try {
		await checkReferenceImages(ctx, itemIndex, imageUrls.map(String));
	} catch (error) {
		problem =
			error instanceof NodeOperationError
				? error
				: new NodeOperationError(ctx.getNode(), `Item ${itemIndex}: ${String(error)}`, {
						itemIndex,
					});
	}
	return problem ? { ok: false, error: problem, json: { model: prepared.model } } : undefined;
}

/**
 * A task this item's submission got in this node run (an earlier try of Retry On Fail, or the
 * failed execution a Retry from the Executions list starts from), to resume, never re-pay; or
 * the item's failure when it may have been accepted and its task cannot be known (a lost run,
 * an answer lost, a previous version's entry that no longer matches). Undefined: submit it.
 */
function earlierSubmission(
	ctx: IExecuteFunctions,
	itemIndex: number,
	digest: SubmissionDigest,
	baseJson: IDataObject,
): (Found & { taskId: string }) | ItemOutcome | undefined {
	const found = findSubmitted(ctx, itemIndex, digest);
	const previous = found?.state === 'failed' ? undefined : found;
	if (!found && lostRun(ctx)) {
		// Recorded as unknown: a later Retry of this execution does not send it blind either.
		record(ctx, itemIndex, digest, { state: 'unknown', submittedAt: Date.now() });
		return { ok: false, ...lostRunFailure(ctx, itemIndex, baseJson) };
	}
	if (previous && previous.taskId === undefined) {
		const message = `Item ${itemIndex}: an earlier attempt submitted this item and its answer was lost: the submission may have been accepted`;
		return {
			ok: false,
			error: new NodeOperationError(ctx.getNode(), message, {
				itemIndex,
				description:
					"It was NOT sent again on this retry: a repeat could create a second task and be billed twice. Look for the task in the service's dashboard: if there is one, fetch its files with Task → Download Files and its task_id; if there is none, run the workflow again (a new execution submits the item).",
			}),
			json: { ...baseJson, submission: 'unknown' },
		};
	}
	if (found?.account === 'unmatched' && found.taskId !== undefined) {
		return { ok: false, ...unmatchedLegacyTask(ctx, itemIndex, found.taskId, baseJson) };
	}
	return previous?.taskId ? (previous as Found & { taskId: string }) : undefined;
}

/**
 * Resumes an accepted task. The account decides, not the credential's key: a task the
 * credential's account does not know (401/404) is said per item, never submitted again.
 */
async function resumeTask(
	ctx: IExecuteFunctions,
	itemIndex: number,
	previous: Found & { taskId: string },
	baseJson: IDataObject,
): Promise<ItemTask | ItemOutcome> {
	let known: Task | undefined;
	let knownAt: number | undefined;
	try {
		known = await getTaskStatus(ctx, previous.taskId);
		knownAt = Date.now();
	} catch (error) {
		const failure = resumedTaskUnknown(ctx, itemIndex, error, previous, baseJson);
		if (failure) return { ok: false, ...failure };
	}
	ctx.logger.debug('Media Generation resumes a task accepted before a retry', {
		itemIndex,
		taskId: previous.taskId,
	});
	return {
		submitted: {
			task_id: previous.taskId,
			status: known?.status ?? 'not_started',
			created_time: previous.createdTime,
		},
		submittedAt: previous.submittedAt,
		known,
		knownAt,
		resumed: true,
	};
}

/** Submits the item (its binary reference images linked now) and records what became of it. */
async function submitItem(
	ctx: IExecuteFunctions,
	itemIndex: number,
	prepared: Prepared,
	body: IDataObject,
	digest: SubmissionDigest,
	baseJson: IDataObject,
): Promise<ItemTask | ItemOutcome> {
	const submittedAt = Date.now();
	if (prepared.images) {
		// Signed now, so that a link lives its whole lifetime from the submission on.
		const lifetimeMs = prepared.imageLinkMs ?? UNWAITED_LINK_MS;
		body.input = {
			...prepared.input,
			image_urls: linkImages(ctx, prepared.images, lifetimeMs),
		};
		ctx.logger.debug('Media Generation links binary reference images', {
			itemIndex,
			sha256: prepared.images.map((i) => i.sha256),
			linkSeconds: Math.ceil(lifetimeMs / 1000),
		});
	}
	countSubmission(ctx);
	let submitted: SubmittedTask;
	try {
		submitted = await submitTask(ctx, body, {
			rateLimitDeadline: submittedAt + prepared.run.timeoutMs,
			onRetry: (fault, attempt, delay) =>
				ctx.logger.debug('Media Generation submit retried (not accepted by the service)', {
					itemIndex,
					attempt,
					delay,
					fault: fault.message,
				}),
		});
	} catch (error) {
		const failure = { ok: false as const, ...submitFailure(ctx, itemIndex, error, baseJson) };
		if (failure.json.submission === 'unknown') {
			record(ctx, itemIndex, digest, { state: 'unknown', submittedAt });
		}
		return failure;
	}
	record(ctx, itemIndex, digest, {
		state: 'accepted',
		taskId: submitted.task_id,
		createdTime: submitted.created_time,
		submittedAt,
	});
	return { submitted, submittedAt, resumed: false };
}

/** Wait for Completion off: the task as the service answered, at once. */
function unwaitedOutput(
	itemIndex: number,
	prepared: Prepared,
	body: IDataObject,
	task: ItemTask,
): ItemOutcome {
	const { submitted } = task;
	const json = taskOutputJson(
		{
			task_id: submitted.task_id,
			status: submitted.status,
			created_time: submitted.created_time,
		},
		{
			model: prepared.model,
			reference: prepared.run.callbackReference,
			submittedAt: task.submittedAt,
		},
	);
	if (typeof body.callback_url === 'string') json.callback_url = withoutSecret(body.callback_url);
	return { ok: true, data: { json, pairedItem: { item: itemIndex } } };
}

/** Wait for Completion on: polls the task to its end and downloads its files. */
async function awaitTask(
	ctx: IExecuteFunctions,
	itemIndex: number,
	prepared: Prepared,
	task: ItemTask,
	digest: SubmissionDigest,
	progress: ProgressReporter,
	durations?: DurationLearner,
): Promise<ItemOutcome> {
	const { model, modelKey, input, run } = prepared;
	const outcome = await completeTask(ctx, {
		itemIndex,
		taskId: task.submitted.task_id,
		model,
		reference: run.callbackReference,
		submittedAt: task.submittedAt,
		origin: task.submittedAt,
		originKnown: true,
		pollImmediately: task.resumed,
		known: task.known,
		knownFinishedAt: task.knownAt,
		wait: true,
		run,
		progress,
		durations: durations && {
			learner: durations,
			key: durationKey(model, input),
			typicalMs: getModel(modelKey).typicalDuration.ms,
		},
	});
	// The service failed the task: a next try (Retry On Fail, a Retry) asks for a new attempt.
	if (!outcome.ok && outcome.json.status === 'failed') markFailed(ctx, itemIndex, digest);
	return outcome;
}
