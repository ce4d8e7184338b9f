import { createHash } from 'crypto';

import type { IExecuteFunctions } from 'n8n-workflow';

/**
 * Tasks this process submitted, per execution/node/run/item. n8n's "Retry On Fail" calls
 * execute() again in the same execution (same process, same run index): an item whose exact
 * submission was already accepted then resumes its task instead of paying for a new one, and
 * one whose answer was lost (the task may exist) is not sent again either.
 * Entries are dropped when the node run ends without error, and expire after 25 hours.
 */
interface Entry {
	/** Absent when the submission may or may not have been accepted (answer lost). */
	taskId?: string;
	createdTime?: string;
	submittedAt: number;
	storedAt: number;
}

const TTL_MS = 25 * 60 * 60 * 1000;
const MAX_ENTRIES = 20_000;
const entries = new Map<string, Entry>();

// The key of one execute() call (one context) is the same for all its items: computed once, as
// $runIndex costs a whole expression evaluation.
const runKeys = new WeakMap<IExecuteFunctions, string>();

function runKey(ctx: IExecuteFunctions): string {
	const known = runKeys.get(ctx);
	if (known !== undefined) return known;
	const key = computeRunKey(ctx);
	runKeys.set(ctx, key);
	return key;
}

function computeRunKey(ctx: IExecuteFunctions): string {
	let executionId = '';
	try {
		executionId = ctx.getExecutionId() ?? '';
	} catch {
		executionId = '';
	}
	// A loop runs the node again with a new run index: a new, intended submission.
	let runIndex = '0';
	try {
		runIndex = String(ctx.evaluateExpression('{{ $runIndex }}', 0));
	} catch {
		runIndex = '0';
	}
	return `${executionId}|${ctx.getWorkflow().id ?? ''}|${ctx.getNode().name}|${runIndex}`;
}

function key(ctx: IExecuteFunctions, itemIndex: number, body: unknown): string {
	const digest = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 32);
	return `${runKey(ctx)}|${itemIndex}|${digest}`;
}

function evict(now: number): void {
	for (const [k, entry] of entries) {
		if (now - entry.storedAt > TTL_MS || entries.size > MAX_ENTRIES) entries.delete(k);
		else break;
	}
}

export function findAccepted(
	ctx: IExecuteFunctions,
	itemIndex: number,
	body: unknown,
): Entry | undefined {
	evict(Date.now());
	if (!ctx.getExecutionId?.()) return undefined;
	return entries.get(key(ctx, itemIndex, body));
}

export function rememberAccepted(
	ctx: IExecuteFunctions,
	itemIndex: number,
	body: unknown,
	entry: Omit<Entry, 'storedAt'>,
): void {
	if (!ctx.getExecutionId?.()) return;
	entries.set(key(ctx, itemIndex, body), { ...entry, storedAt: Date.now() });
}

/** Forget this node run's tasks (it completed; a later run is a new, intended submission). */
export function forgetRun(ctx: IExecuteFunctions): void {
	if (!ctx.getExecutionId?.()) return;
	const prefix = `${runKey(ctx)}|`;
	for (const k of [...entries.keys()]) if (k.startsWith(prefix)) entries.delete(k);
}
