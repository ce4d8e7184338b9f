import { createHash } from 'crypto';

import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { CREDENTIAL_NAME, getApiCredentials } from '../../shared/transport/api';

/**
 * The ledger of the tasks this node submitted in this execution, the one module that writes and
 * reads it. It lives in n8n's node execution context (`getContext('node')`), which n8n keeps in
 * the execution's own data (`executionData.contextData`): the same object across the tries of
 * Retry On Fail, saved with a failed execution, and handed unchanged to a Retry from the
 * Executions list (with the original or the current workflow, after a restart, on any queue
 * worker: ExecutionService.retry starts from the failed execution's stored data). A new
 * execution starts with an empty context, so it never reuses an old task.
 *
 * Entries are per node run (run index) and item, with a digest of what was submitted (model,
 * input, callback URL) and the account it went to: the credential's identity (its id in n8n and
 * its Base URL, hashed), never key material, so a Retry after the key of the same account was
 * changed resumes the accepted tasks. An item whose input changed is a new submission; one whose
 * account differs is not sent blind: it is resumed, and the status read (401/404 from an account
 * that does not know the task) decides (see generate.ts). What is read back is checked (the
 * execution data is stored in n8n's database): a malformed entry is ignored. A ledger written by
 * the previous version (no `version`, its digests included a hash of the API key): an entry is
 * matched by recomputing that digest with the current key, only for the comparison (nothing of
 * the key is stored); if it does not match, the input or the key changed and the node cannot
 * tell which, so the item is not sent again (see findSubmitted).
 *
 * n8n saves the context only when the node ends (or the execution waits): with the execution
 * data after a node when "Save execution progress" is on (`hookFunctionsSaveProgress`,
 * `nodeExecuteAfter`, in n8n's `execution-lifecycle/execution-lifecycle-hooks.js` and
 * `save-execution-progress.js`), otherwise when the execution ends. A process killed while the
 * node runs leaves no ledger: see `lostRun` for what the node can still tell, and
 * docs/reliability.md for the layouts that keep the tasks.
 */
export type LedgerState = 'accepted' | 'unknown' | 'failed';

export interface Entry {
	state: LedgerState;
	/** Set for accepted and failed tasks; absent when the submission got no answer. */
	taskId?: string;
	createdTime?: string;
	submittedAt: number;
}

/** What identifies one submission; see submissionDigest. */
export interface SubmissionDigest {
	/** Model, input and callback URL. */
	digest: string;
	/** The previous version's digest of the same submission (it hashed the key in): compared only. */
	legacy: string;
}

interface StoredEntry extends Entry {
	digest: string;
	/** The account it was submitted to (see openLedger). */
	account?: string;
	/** Written by the previous version (its digest hashed the key in): kept when saved again. */
	legacy?: 1;
}

/** What findSubmitted knows of an earlier submission of the item. */
export interface Found extends Entry {
	/**
	 * `same`: the same credential and Base URL; `other`: another credential or Base URL (the
	 * status read tells whether its account knows the task); `unmatched`: an entry of the previous
	 * version whose digest no longer matches (input or key changed: the node cannot tell which).
	 */
	account: 'same' | 'other' | 'unmatched';
}

interface Ledger {
	version: 2;
	/** The execution whose submissions `submitted` counts (the spend guard is per execution). */
	execution: string;
	submitted: number;
	/** Run indexes of this node whose run was opened: saved by n8n only when the run ends. */
	runs: Record<string, 1>;
	/** `${runIndex}|${itemIndex}` → entry with its submission digest. */
	entries: Record<string, StoredEntry>;
}

const FIELD = 'mediaGenerationLedger';
/** A task's files live 24 hours: an older entry is worth nothing and is dropped. */
const TTL_MS = 24 * 60 * 60 * 1000;
const MAX_ENTRIES = 20_000;
const TASK_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const STATES: readonly string[] = ['accepted', 'unknown', 'failed'];
const ACCOUNT = /^([0-9a-f]{16})?$/;
const EXECUTION_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Markers of started runs kept per node in n8n's deduplication store (see startedMarker). */
const MAX_MARKERS = 1000;

// What one execute() call (one context) reads is the same for all its items: computed once, as
// $runIndex costs a whole expression evaluation.
const runIndexes = new WeakMap<IExecuteFunctions, string>();
const fallbackContexts = new WeakMap<IExecuteFunctions, IDataObject>();
/** The account of each execute() call's credential, and the previous version's hash of it (see openLedger). */
const accounts = new WeakMap<IExecuteFunctions, { account: string; legacy: string }>();
/** Ledgers read from a version-2 ledger n8n stored: the runs they knew then (see lostRun). */
const storedRuns = new WeakMap<Ledger, ReadonlySet<string>>();
/** Entries held by each ledger: counted, as Object.keys over 20,000 entries per item is O(n²). */
const sizes = new WeakMap<Ledger, number>();
/** execute() calls that repeat a node run n8n lost (see lostRun). */
const lost = new WeakSet<IExecuteFunctions>();
/** The execution that wrote the ledger each ledger was read from (this one when none): see startedMarker. */
const heldFrom = new WeakMap<Ledger, string>();
/**
 * Ledgers this process made in this execution from none (the node's first call in it), or from
 * one of these: never read back from n8n's database, so every copy n8n stored of them was saved
 * after a node ended (with saved progress) or holds no ledger at all (see closeRun).
 */
const madeHere = new WeakSet<Ledger>();
/** The start marker each execute() call recorded itself (not found there before it). */
const ownMarkers = new WeakMap<IExecuteFunctions, string>();
/** execute() calls that recorded a task that may have been accepted (accepted, or no answer). */
const mayBeAccepted = new WeakSet<IExecuteFunctions>();

function runIndexOf(ctx: IExecuteFunctions): string {
	const known = runIndexes.get(ctx);
	if (known !== undefined) return known;
	let runIndex = '0';
	try {
		runIndex = String(ctx.evaluateExpression('{{ $runIndex }}', 0));
	} catch {
		runIndex = '0';
	}
	runIndexes.set(ctx, runIndex);
	return runIndex;
}

function executionIdOf(ctx: IExecuteFunctions): string {
	try {
		return ctx.getExecutionId() ?? '';
	} catch {
		return '';
	}
}

function contextOf(ctx: IExecuteFunctions): IDataObject {
	try {
		return ctx.getContext('node') as IDataObject;
	} catch {
		// No execution data (a context n8n builds without one): the ledger lasts this call only.
		let own = fallbackContexts.get(ctx);
		if (!own) {
			own = {};
			fallbackContexts.set(ctx, own);
		}
		return own;
	}
}

function validEntry(value: unknown, now: number): StoredEntry | undefined {
	if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
	const v = value as Record<string, unknown>;
	if (typeof v.state !== 'string' || !STATES.includes(v.state)) return undefined;
	if (typeof v.digest !== 'string' || !/^[0-9a-f]{32}$/.test(v.digest)) return undefined;
	if (typeof v.submittedAt !== 'number' || !Number.isFinite(v.submittedAt)) return undefined;
	if (now - v.submittedAt > TTL_MS || v.submittedAt > now + 60_000) return undefined;
	const hasId = typeof v.taskId === 'string' && TASK_ID.test(v.taskId);
	if (v.state !== 'unknown' && !hasId) return undefined;
	if (v.taskId !== undefined && !hasId) return undefined;
	if (v.account !== undefined && (typeof v.account !== 'string' || !ACCOUNT.test(v.account)))
		return undefined;
	if (v.legacy !== undefined && v.legacy !== 1) return undefined;
	const entry: StoredEntry = {
		state: v.state as LedgerState,
		digest: v.digest,
		submittedAt: v.submittedAt,
	};
	if (typeof v.account === 'string') entry.account = v.account;
	if (v.legacy === 1) entry.legacy = 1;
	if (hasId) entry.taskId = v.taskId as string;
	if (typeof v.createdTime === 'string' && v.createdTime.length <= 64)
		entry.createdTime = v.createdTime;
	return entry;
}

/**
 * Whether a node of this name has a run slot in the execution's run data. n8n creates it when
 * a run of the node ends (`WorkflowExecute.processRunExecutionData`, n8n-core), and its crash
 * recovery when the node was running as the process died (see lostRun).
 */
function hasRunSlot(ctx: IExecuteFunctions): boolean {
	try {
		const self = ctx.getWorkflowDataProxy(0).$(ctx.getNode().name) as { isExecuted?: unknown };
		return self.isExecuted === true;
	} catch {
		return false;
	}
}

function modeOf(ctx: IExecuteFunctions): string {
	try {
		return ctx.getMode();
	} catch {
		return '';
	}
}

/** Reads, checks and prunes the ledger; the object returned is the one n8n saves. */
function ledgerOf(ctx: IExecuteFunctions): Ledger {
	const context = contextOf(ctx);
	const raw = context[FIELD] as unknown;
	const now = Date.now();
	const executionId = executionIdOf(ctx);
	const ledger: Ledger = {
		version: 2,
		execution: executionId,
		submitted: 0,
		runs: {},
		entries: {},
	};
	let size = 0;
	heldFrom.set(ledger, executionId);
	if (raw === undefined || madeHere.has(raw as Ledger)) madeHere.add(ledger);
	if (raw === undefined && modeOf(ctx) === 'retry' && hasRunSlot(ctx)) lost.add(ctx);
	if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
		const r = raw as Record<string, unknown>;
		if (
			r.execution === executionId &&
			typeof r.submitted === 'number' &&
			Number.isInteger(r.submitted) &&
			r.submitted >= 0
		)
			ledger.submitted = r.submitted;
		if (typeof r.execution === 'string' && EXECUTION_ID.test(r.execution))
			heldFrom.set(ledger, r.execution);
		if (r.version === 2) {
			const runs = r.runs;
			if (runs && typeof runs === 'object' && !Array.isArray(runs)) {
				for (const k of Object.keys(runs).slice(0, MAX_ENTRIES)) {
					if (/^\d{1,9}$/.test(k)) ledger.runs[k] = 1;
				}
			}
			storedRuns.set(ledger, new Set(Object.keys(ledger.runs)));
		}
		const entries = r.entries;
		if (entries && typeof entries === 'object' && !Array.isArray(entries)) {
			for (const [k, v] of Object.entries(entries as Record<string, unknown>)) {
				if (!/^\d{1,9}\|\d{1,9}$/.test(k)) continue;
				const entry = validEntry(v, now);
				if (!entry) continue;
				if (r.version !== 2) entry.legacy = 1;
				ledger.entries[k] = entry;
				if (++size >= MAX_ENTRIES) break;
			}
		}
	}
	sizes.set(ledger, size);
	if (raw !== ledger) context[FIELD] = ledger as unknown as IDataObject;
	return ledger;
}

// The ledger object in the context is replaced by the checked copy once per execute() call.
const checked = new WeakMap<IExecuteFunctions, Ledger>();

function ledger(ctx: IExecuteFunctions): Ledger {
	let known = checked.get(ctx);
	if (!known) {
		known = ledgerOf(ctx);
		checked.set(ctx, known);
	}
	return known;
}

/** The credential's identity: its id in n8n (or name) and Base URL. No key material. */
function credentialIdOf(ctx: IExecuteFunctions): string {
	try {
		const ref = ctx.getNode().credentials?.[CREDENTIAL_NAME];
		return ref?.id ?? ref?.name ?? '';
	} catch {
		return '';
	}
}

const sha256 = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/**
 * Opens the ledger for this node run, before anything can fail: reads the credential once (the
 * account below needs it), writes the ledger, marked with this run, into the node's context, so
 * that any run n8n saves, failed ones included, carries one (lostRun tells a lost run by its
 * absence), and records that this run started where n8n keeps it at once (startedMarker).
 */
export async function openLedger(ctx: IExecuteFunctions): Promise<void> {
	let account = { account: '', legacy: '' };
	try {
		const { baseUrl, apiKey } = await getApiCredentials(ctx);
		account = {
			account: sha256(['media-generation-account-2', credentialIdOf(ctx), baseUrl]).slice(0, 16),
			// The previous version's account digest, to match its entries; never stored.
			legacy: sha256(['media-generation-account', baseUrl, apiKey]),
		};
	} catch {
		// No usable credential: nothing will be submitted, so no digest is compared.
	}
	accounts.set(ctx, account);
	const l = ledger(ctx);
	const runIndex = runIndexOf(ctx);
	const startedBefore = await startedMarker(
		ctx,
		`${heldFrom.get(l) ?? executionIdOf(ctx)}|${runIndex}`,
		runIndex,
	);
	const known = storedRuns.get(l);
	// A run of this index was started in this chain of executions and n8n saved no end of it.
	if (modeOf(ctx) === 'retry' && startedBefore && known && !known.has(runIndex)) lost.add(ctx);
	l.runs[runIndex] = 1;
}

/**
 * Records, in n8n's deduplication store (a database row per workflow and node, written at once,
 * in every process type), that run `runIndex` started from the ledger of execution `held` (the
 * execution whose stored ledger this run holds: the one a Retry starts from, or this one), and
 * says whether it was recorded before. Keyed by the held ledger, not by the chain of Retries:
 * a Retry finds the marker of a run that started from the very ledger it holds, and no other
 * (issue 51: a Retry whose run the service refused blocked every later Retry of the same
 * execution). A marker this run recorded is removed when the run ends (closeRun), so that only
 * runs n8n lost keep one. The first run of the node (index 0) is not recorded: a Retry tells its
 * loss without it (no ledger at all). Best effort: where the store cannot be used, or a
 * concurrent execution of the same workflow overwrote the row, a lost later run is not told
 * apart (and its items are sent again, as before this rule).
 */
async function startedMarker(
	ctx: IExecuteFunctions,
	marker: string,
	runIndex: string,
): Promise<boolean> {
	if (runIndex === '0') return false;
	try {
		const { processed } = await ctx.helpers.checkProcessedAndRecord([marker], 'node', {
			mode: 'entries',
			maxEntries: MAX_MARKERS,
		});
		if (processed.length === 0) ownMarkers.set(ctx, marker);
		return processed.length > 0;
	} catch (error) {
		ctx.logger.debug('Media Generation could not record the start of a node run', {
			error: error instanceof Error ? error.message : String(error),
		});
		return false;
	}
}

/**
 * Called when the node run ends (returned, threw, or parked the execution): removes the start
 * marker this run recorded when nothing needs it any more, so that only runs n8n lost hold one
 * (issue 51: every later run of every execution took one of the 1,000 the store keeps, and a
 * crash's marker was soon dropped). Needed no more when:
 * - nothing of this run may have been accepted (every submission refused, or none sent): a
 *   Retry that sends its items again pays for nothing twice; or
 * - the ledger it started from is this execution's own and was never read back from n8n's
 *   database (madeHere), or the workflow saves its progress: every copy n8n keeps of this
 *   execution then knows this run once it ended (saved right after the node), or holds no
 *   ledger (nothing saved before the end: a Retry then starts without one, see lostRun).
 * Kept otherwise: a run of a Retry, or after a wait, in a workflow that does not save its progress
 * (a crash later in the execution leaves the copy stored at its start, which does not know this
 * run), and the first later run of a Retry that got tasks accepted (another Retry of the same
 * execution holds the same ledger and must not send them again). A marker found there before
 * (a lost run) is never removed: every Retry of that execution must find it.
 */
export async function closeRun(ctx: IExecuteFunctions): Promise<void> {
	const marker = ownMarkers.get(ctx);
	if (marker === undefined) return;
	const l = ledger(ctx);
	let saves = false;
	try {
		saves = ctx.getWorkflowSettings().saveExecutionProgress === true;
	} catch {
		saves = false;
	}
	const own = heldFrom.get(l) === executionIdOf(ctx);
	if (mayBeAccepted.has(ctx) && !(own && (madeHere.has(l) || saves))) return;
	try {
		await ctx.helpers.removeProcessed([marker], 'node', { mode: 'entries' });
		ownMarkers.delete(ctx);
	} catch (error) {
		ctx.logger.debug('Media Generation could not remove the start marker of a node run', {
			error: error instanceof Error ? error.message : String(error),
		});
	}
}

/** What identifies one submission: the same model, input and callback URL. */
export function submissionDigest(
	ctx: IExecuteFunctions,
	submission: { model: string; input: unknown; callbackUrl?: string },
): SubmissionDigest {
	const account = accounts.get(ctx);
	if (account === undefined) {
		throw new NodeOperationError(ctx.getNode(), 'Internal error: the task ledger was not opened');
	}
	const what = [submission.model, submission.input, submission.callbackUrl ?? null];
	return {
		digest: sha256(['2', ...what]).slice(0, 32),
		legacy: sha256([...what, account.legacy]).slice(0, 32),
	};
}

/**
 * Whether this run repeats a node run that n8n lost: a Retry (mode `retry`) of an execution in
 * which this run of the node started and left no ledger. Every run that ends, failed or not,
 * leaves one marked with its run index (openLedger); none is saved when the process dies while
 * the node runs.
 *
 * A later run (a loop, a second branch): n8n keeps the runs saved before (with "Save execution
 * progress") and records no crashed run for a node that has runs already; the Retry resumes at
 * this node with the next run index and the ledger of the earlier runs. The run is lost when the
 * ledger n8n stored does not know this run index and the run's start was recorded
 * (startedMarker); a run index the ledger does not know and that never started (the execution
 * stopped before it, in another node) is a first run: it submits.
 *
 * The first run (no ledger at all): the node finds a run slot of its own in the run data
 * (hasRunSlot). n8n 2.x's crash recovery (`ExecutionRecoveryService.amend`, `executions/execution-recovery.service.js`: on
 * restart, from the event log, in regular mode) records a crashed run for the node that had
 * started and not finished, and `ExecutionService.retry` removes that run (it holds an error):
 * the slot stays, empty. The tasks that run submitted may have been accepted, and their ids are
 * lost: the items must not be sent blind (that bills twice). Not detectable when n8n records no
 * such run: queue mode's recovery (`ScalingService.recoverFromQueue`) only marks the execution
 * crashed, and the node cannot learn which execution the Retry comes from (n8n keeps `retryOf`
 * in its lifecycle hooks only), so it finds no start marker either. Without saved progress a
 * Retry starts from the trigger: in regular mode its first run of the node gets run index 1
 * (the recovered run holds slot 0) and no ledger, and is told lost by this rule. Only for
 * Retries, so a first run never meets it.
 */
export function lostRun(ctx: IExecuteFunctions): boolean {
	ledger(ctx);
	return lost.has(ctx);
}

function keyOf(ctx: IExecuteFunctions, itemIndex: number): string {
	return `${runIndexOf(ctx)}|${itemIndex}`;
}

/**
 * The entry of this item in this node run, if it was submitted with the same model, input and
 * callback URL (to whatever account: see Found).
 */
export function findSubmitted(
	ctx: IExecuteFunctions,
	itemIndex: number,
	digest: SubmissionDigest,
): Found | undefined {
	const entry = ledger(ctx).entries[keyOf(ctx, itemIndex)];
	if (!entry) return undefined;
	const found = {
		state: entry.state,
		taskId: entry.taskId,
		createdTime: entry.createdTime,
		submittedAt: entry.submittedAt,
	};
	if (entry.legacy === 1) {
		if (entry.digest === digest.legacy) return { ...found, account: 'same' };
		// The previous version hashed the key in: a changed key and a changed input look alike.
		return entry.taskId === undefined ? undefined : { ...found, account: 'unmatched' };
	}
	if (entry.digest !== digest.digest) return undefined;
	const same = (entry.account ?? '') === accounts.get(ctx)?.account;
	return { ...found, account: same ? 'same' : 'other' };
}

/** Records what became of a submission (call before anything else can fail). */
export function record(
	ctx: IExecuteFunctions,
	itemIndex: number,
	digest: SubmissionDigest,
	entry: Entry,
): void {
	const l = ledger(ctx);
	const key = keyOf(ctx, itemIndex);
	if (entry.state !== 'failed') mayBeAccepted.add(ctx);
	let size = sizes.get(l) ?? 0;
	if (key in l.entries) {
		delete l.entries[key];
		size -= 1;
	}
	if (size < MAX_ENTRIES) {
		l.entries[key] = { ...entry, digest: digest.digest, account: accounts.get(ctx)?.account ?? '' };
		size += 1;
	}
	sizes.set(l, size);
}

/** Marks the accepted task of an item as failed on the service: the next try submits anew. */
export function markFailed(
	ctx: IExecuteFunctions,
	itemIndex: number,
	digest: SubmissionDigest,
): void {
	const entry = ledger(ctx).entries[keyOf(ctx, itemIndex)];
	const same = entry?.legacy === 1 ? digest.legacy : digest.digest;
	if (entry && entry.digest === same && entry.taskId !== undefined) entry.state = 'failed';
}

/** Counts one submission sent by this execution (the spend guard's count). */
export function countSubmission(ctx: IExecuteFunctions): void {
	ledger(ctx).submitted += 1;
}

/** Submissions this node already sent in this execution (earlier runs, earlier tries). */
export function submittedInExecution(ctx: IExecuteFunctions): number {
	return ledger(ctx).submitted;
}

/** Forget this node run's tasks (it completed; a later run is a new, intended submission). */
export function forgetRun(ctx: IExecuteFunctions): void {
	const l = ledger(ctx);
	const prefix = `${runIndexOf(ctx)}|`;
	let size = sizes.get(l) ?? 0;
	// Once per node run: one pass over the entries is cheap next to the run itself.
	for (const k in l.entries) {
		if (k.startsWith(prefix)) {
			delete l.entries[k];
			size -= 1;
		}
	}
	sizes.set(l, size);
}
