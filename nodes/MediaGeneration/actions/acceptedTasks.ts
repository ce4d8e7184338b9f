import { createHash } from 'crypto';

import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { getApiCredentials } from '../../shared/transport/api';

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
 * input, callback URL) and to which account (the credential's Base URL and API key, hashed): an
 * item whose input changed, or a Retry made with another credential (whose account does not
 * know the task), is a new submission. What is read back is checked (the execution data is
 * stored in n8n's database): a malformed entry is ignored.
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

interface Ledger {
	/** The execution whose submissions `submitted` counts (the spend guard is per execution). */
	execution: string;
	submitted: number;
	/** `${runIndex}|${itemIndex}` → entry with its submission digest. */
	entries: Record<string, Entry & { digest: string }>;
}

const FIELD = 'mediaGenerationLedger';
/** A task's files live 24 hours: an older entry is worth nothing and is dropped. */
const TTL_MS = 24 * 60 * 60 * 1000;
const MAX_ENTRIES = 20_000;
const TASK_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const STATES: readonly string[] = ['accepted', 'unknown', 'failed'];

// What one execute() call (one context) reads is the same for all its items: computed once, as
// $runIndex costs a whole expression evaluation.
const runIndexes = new WeakMap<IExecuteFunctions, string>();
const fallbackContexts = new WeakMap<IExecuteFunctions, IDataObject>();
/** The account digest of each execute() call's credential (see openLedger). */
const accounts = new WeakMap<IExecuteFunctions, string>();
/** Entries held by each ledger: counted, as Object.keys over 20,000 entries per item is O(n²). */
const sizes = new WeakMap<Ledger, number>();
/** execute() calls that repeat a node run n8n lost (see lostRun). */
const lost = new WeakSet<IExecuteFunctions>();

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

function validEntry(value: unknown, now: number): (Entry & { digest: string }) | undefined {
	if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
	const v = value as Record<string, unknown>;
	if (typeof v.state !== 'string' || !STATES.includes(v.state)) return undefined;
	if (typeof v.digest !== 'string' || !/^[0-9a-f]{32}$/.test(v.digest)) return undefined;
	if (typeof v.submittedAt !== 'number' || !Number.isFinite(v.submittedAt)) return undefined;
	if (now - v.submittedAt > TTL_MS || v.submittedAt > now + 60_000) return undefined;
	const hasId = typeof v.taskId === 'string' && TASK_ID.test(v.taskId);
	if (v.state !== 'unknown' && !hasId) return undefined;
	if (v.taskId !== undefined && !hasId) return undefined;
	const entry: Entry & { digest: string } = {
		state: v.state as LedgerState,
		digest: v.digest,
		submittedAt: v.submittedAt,
	};
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
	const ledger: Ledger = { execution: executionId, submitted: 0, entries: {} };
	let size = 0;
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
		const entries = r.entries;
		if (entries && typeof entries === 'object' && !Array.isArray(entries)) {
			for (const [k, v] of Object.entries(entries as Record<string, unknown>)) {
				if (!/^\d{1,9}\|\d{1,9}$/.test(k)) continue;
				const entry = validEntry(v, now);
				if (!entry) continue;
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

/**
 * Opens the ledger for this node run, before anything can fail: reads the credential once (the
 * account digests below need it) and writes the ledger into the node's context, so that any run
 * n8n saves, failed ones included, carries one (lostRun tells a lost run by its absence).
 */
export async function openLedger(ctx: IExecuteFunctions): Promise<void> {
	let account = '';
	try {
		const { baseUrl, apiKey } = await getApiCredentials(ctx);
		// A digest: what the ledger stores must not reveal the key (it is in n8n's database).
		account = createHash('sha256')
			.update(JSON.stringify(['media-generation-account', baseUrl, apiKey]))
			.digest('hex');
	} catch {
		// No usable credential: nothing will be submitted, so no digest is compared.
		account = '';
	}
	accounts.set(ctx, account);
	ledger(ctx);
}

/** What identifies one submission: the same model, input and callback URL, to the same account. */
export function submissionDigest(
	ctx: IExecuteFunctions,
	submission: { model: string; input: unknown; callbackUrl?: string },
): string {
	const account = accounts.get(ctx);
	if (account === undefined) {
		throw new NodeOperationError(ctx.getNode(), 'Internal error: the task ledger was not opened');
	}
	const text = JSON.stringify([
		submission.model,
		submission.input,
		submission.callbackUrl ?? null,
		account,
	]);
	return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/**
 * Whether this run repeats a node run that n8n lost: a Retry (mode `retry`) of an execution in
 * which this node had a run that left no ledger. Every run that ends, failed or not, leaves one
 * (openLedger); none is saved when the process dies while the node runs. Then n8n 2.x's crash
 * recovery (`ExecutionRecoveryService.amend`, `executions/execution-recovery.service.js`: on
 * restart, from the event log, in regular mode) records a crashed run for the node that had
 * started and not finished, and `ExecutionService.retry` removes that run (it holds an error):
 * the slot stays, empty. The tasks that run submitted may have been accepted, and their ids are
 * lost: the items must not be sent blind (that bills twice). Not detectable when n8n records no
 * such run: queue mode's recovery (`ScalingService.recoverFromQueue`) only marks the execution
 * crashed. Only for Retries, so a first run never meets it.
 */
export function lostRun(ctx: IExecuteFunctions): boolean {
	ledger(ctx);
	return lost.has(ctx);
}

function keyOf(ctx: IExecuteFunctions, itemIndex: number): string {
	return `${runIndexOf(ctx)}|${itemIndex}`;
}

/** The entry of this item in this node run, if it was submitted with the same digest. */
export function findSubmitted(
	ctx: IExecuteFunctions,
	itemIndex: number,
	digest: string,
): Entry | undefined {
	const entry = ledger(ctx).entries[keyOf(ctx, itemIndex)];
	return entry && entry.digest === digest ? entry : undefined;
}

/** Records what became of a submission (call before anything else can fail). */
export function record(
	ctx: IExecuteFunctions,
	itemIndex: number,
	digest: string,
	entry: Entry,
): void {
	const l = ledger(ctx);
	const key = keyOf(ctx, itemIndex);
	let size = sizes.get(l) ?? 0;
	if (key in l.entries) {
		delete l.entries[key];
		size -= 1;
	}
	if (size < MAX_ENTRIES) {
		l.entries[key] = { ...entry, digest };
		size += 1;
	}
	sizes.set(l, size);
}

/** Marks the accepted task of an item as failed on the service: the next try submits anew. */
export function markFailed(ctx: IExecuteFunctions, itemIndex: number, digest: string): void {
	const entry = ledger(ctx).entries[keyOf(ctx, itemIndex)];
	if (entry && entry.digest === digest && entry.taskId !== undefined) entry.state = 'failed';
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
