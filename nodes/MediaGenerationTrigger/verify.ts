import { sleep } from 'n8n-workflow';

import { excerpt, type ParsedCallback } from '../shared/callbackBody';
import { getTaskStatus } from '../shared/transport/api';
import {
	classifyError,
	DEFAULT_BACKOFF,
	isTransientForRead,
	retryDelay,
	type Fault,
} from '../shared/transport/faults';
import type { Task } from '../shared/task';
import { retryAfter } from '../shared/webhookAnswer';
import {
	answer,
	answered,
	knowKey,
	refuse,
	scrub,
	type Authenticated,
	type Call,
	type Request,
	type Settings,
	type Step,
} from './call';
import { callsInProgress, UNKNOWN_TASK_LIMITS, unknownTasks } from './memory';
import {
	PENDING_LIMIT,
	PENDING_PER_URL,
	readTurns,
	taskReads,
	urlAllowances,
	type ReadOutcome,
	type TaskRead,
} from './statusReads';

// "Verify With Status Endpoint": the task of a callback is read from the service, in named
// steps: what the trigger remembers, the first read (the URL's allowance, a turn of the
// trigger's budget or a place in its line), the reads until the service answers, and the answer
// each outcome gets. The budget, the line and the memory of reads are statusReads.ts.

/** Everything the trigger does before answering takes at most this long (the answer bound). */
export const ANSWER_WITHIN_MS = 5_000;
/** A callback answered "confirming" may be confirmed until this long after it arrived. */
export const CONFIRM_WITHIN_MS = 60_000;
/**
 * From this many callbacks in progress in the process (this one included), a production call
 * is answered "confirming" as soon as its URL is authenticated and its read is allowed, before
 * the credential read and the status read: under a burst each of those waits for the CPU the
 * other calls use, and a sender that gives up after 10 s would lose the callback. A call alone
 * is answered with its outcome (200, 404, 409...), as before.
 */
export const ANSWER_FIRST_AT = 4;
/** Status reads for one callback before the answer bound. */
const VERIFY_ATTEMPTS = 3;
/**
 * Status reads for one callback in all, when a failed read is retried within the confirmation
 * window after the "confirming" answer (a forged id still costs at most this many).
 */
const CONFIRM_READS = 6;
/** Backoff between those reads: 0.5-1 s, 1-2, 2-4, 4-8, 7.5-15 (about 30 s at most in all). */
const CONFIRM_BACKOFF = { baseMs: 1_000, maxMs: 15_000 };
/** Retry-After of a 503 "could not confirm": the service should try again later. */
export const RETRY_UNCONFIRMED_S = 60;

/** What the service said of the task, or why it could not be asked. */
type Verification =
	| { kind: 'confirmed'; task: Task }
	| { kind: 'unknown' }
	| { kind: 'unconfirmed'; reason: string };

/** One callback's confirmation: its task, its limits, and whether it has its 202 already. */
interface Confirmation {
	call: Call;
	trigger: string;
	taskId: string;
	/** The URL the call came to (its place in the line's turns). */
	source: string;
	/** Places in the line this URL may hold (PENDING_PER_URL). */
	places: number;
	/** Retry failed reads after a "confirming" answer (off for "Start With Error"). */
	onFailure: boolean;
	/** The end of the confirmation window. */
	until: number;
	/** The current limit: the answer bound, then (once answered 202) the window's end. */
	limit: number;
	confirming: boolean;
	/** Answer "confirming" before the credential and status reads (a burst: ANSWER_FIRST_AT). */
	answerFirst: boolean;
	/** The start of the read whose outcome this call has (a retry wants a newer one). */
	after?: number;
}

/** The service saying it does not know the task, as opposed to failing to answer. */
function isUnknownTask(fault: Fault): boolean {
	if (fault.kind !== 'http' && fault.kind !== 'envelope') return false;
	return [400, 404, 410, 422].includes(fault.statusCode ?? 0);
}

/**
 * The status read and what each of its outcomes answers: the task, confirmed; or the answer
 * that ends the call; or (`unverified`, "On Verification Error → Start With Error") the reason
 * the run starts without a confirmed task.
 */
export async function verifyWithService(
	request: Request,
	settings: Settings,
	auth: Authenticated,
	parsed: ParsedCallback,
): Promise<Step<Task> | { unverified: string }> {
	const remembered = rememberedUnknown(request, settings, parsed);
	if (remembered) return remembered;
	const c = newConfirmation(request, settings, auth, parsed);
	const first = await firstRead(c, auth);
	if ('done' in first) return first;
	const outcome = first.ok ? await confirmTask(c, first.ok) : noTurn();
	const startWithError = !c.onFailure;
	if (
		answered(c.call) &&
		outcome.kind !== 'confirmed' &&
		!(outcome.kind === 'unconfirmed' && startWithError)
	) {
		// Answered already ("confirming"): whatever the service now says, nothing starts.
		c.call.ctx.logger.warn(
			`Media Generation Trigger: task ${c.taskId} could not be confirmed after the callback was answered; nothing was started (${outcome.kind === 'unconfirmed' ? outcome.reason : outcome.kind}). Read its status with Task → Get Status.`,
		);
	}
	return answerOutcome(c, outcome);
}

/** A task id the service called unknown lately (UNKNOWN_TASK_LIMITS): 404 without a read. */
function rememberedUnknown(
	{ call }: Request,
	settings: Settings,
	parsed: ParsedCallback,
): Step<Task> | undefined {
	if (!unknownTasks.has(settings.trigger, parsed.taskId, Date.now())) return undefined;
	return {
		done: refuse(call, 404, {
			error: `Task ${parsed.taskId} is unknown to the service (asked less than ${UNKNOWN_TASK_LIMITS.ttlMs / 60_000} minutes ago); nothing was started`,
		}),
	};
}

function newConfirmation(
	{ call, options, deadline, arrivedAt }: Request,
	settings: Settings,
	auth: Authenticated,
	parsed: ParsedCallback,
): Confirmation {
	return {
		call,
		trigger: settings.trigger,
		taskId: parsed.taskId,
		source: auth.source.key,
		places: auth.source.shared ? PENDING_PER_URL.shared : PENDING_PER_URL.own,
		// "Start With Error" starts at the first failure, as documented: no retries after it.
		onFailure: options.onVerifyError !== 'start',
		until: arrivedAt + CONFIRM_WITHIN_MS,
		limit: deadline,
		confirming: false,
		answerFirst: settings.production && callsInProgress.now >= ANSWER_FIRST_AT,
	};
}

/**
 * The first read: a read of this id under way or just made is shared; a task id the trigger has
 * not read lately first takes a token of its URL's allowance (429 when it has none: nothing is
 * read, nothing waits); then a turn of the trigger's budget, or a place in its line.
 * `ok: undefined`: no turn came within the confirmation window.
 */
async function firstRead(
	c: Confirmation,
	auth: Authenticated,
): Promise<Step<TaskRead | undefined>> {
	const now = Date.now();
	const shared = taskReads.current(c.trigger, c.taskId, undefined, now);
	if (shared) return { ok: shared };
	if (!urlAllowances.charge(c.trigger, auth.source, c.taskId, now)) {
		return {
			done: refuse(
				c.call,
				429,
				{
					error:
						'This callback URL has brought more task ids than it may have read in this time; nothing was started. Try again later.',
				},
				retryAfter(urlAllowances.waitMs(c.trigger, auth.source)),
			),
		};
	}
	if (c.answerFirst && c.onFailure) {
		// A burst: answered now, if the line has room for it (else 503 as below, unanswered).
		if (readTurns.parked(c.trigger) >= PENDING_LIMIT) return lineFull(c, 'full');
		if (readTurns.parkedBy(c.trigger, c.source) >= c.places) return lineFull(c, 'url-full');
		confirmLater(c);
	}
	// The read uses the credential: its key is scrubbed from whatever this call says from now.
	await knowKey(c.call).catch(() => '');
	const read = await obtainRead(c, 'first');
	if (read === 'full' || read === 'url-full') return lineFull(c, read);
	return { ok: read === 'no-turn' ? undefined : read };
}

/** 503 with Retry-After: the trigger's line, or this URL's places in it, are full. */
function lineFull(c: Confirmation, read: 'full' | 'url-full'): Step<TaskRead | undefined> {
	const why =
		read === 'full'
			? `Too many callbacks are waiting for a status read (${PENDING_LIMIT})`
			: `This callback URL already has ${c.places} callbacks waiting for a status read`;
	return {
		done: refuse(
			c.call,
			503,
			{ error: `${why}; nothing was started. Try again later.` },
			retryAfter(readTurns.drainMs(c.trigger)),
		),
	};
}

/** Answers "confirming" (once) and extends the limit to the confirmation window. */
function confirmLater(c: Confirmation): boolean {
	if (c.confirming) return false;
	c.confirming = true;
	answer(c.call, 202, { received: true, task_id: c.taskId, confirming: true });
	c.limit = c.until;
	return true;
}

/**
 * A read of the task newer than the one this call has: shared with other callbacks of the id,
 * at most one per READ_INTERVAL_MS, each taking a token of the trigger's budget. Without a
 * token now, the call waits in the trigger's line, answered "confirming" first ('full' when
 * the line is full); 'no-turn' when the limit came first.
 */
async function obtainRead(
	c: Confirmation,
	kind: 'first' | 'retry',
): Promise<TaskRead | 'no-turn' | 'full' | 'url-full'> {
	for (;;) {
		const now = Date.now();
		const current = taskReads.current(c.trigger, c.taskId, c.after, now);
		if (current) return current;
		const wait = taskReads.nextAt(c.trigger, c.taskId) - now;
		if (wait > 0) {
			if (now + wait >= c.limit) return 'no-turn';
			await sleep(wait);
			continue;
		}
		if (readTurns.takeNow(c.trigger, now)) return startRead(c, now);
		if (!c.confirming && kind === 'first') {
			if (readTurns.parked(c.trigger) >= PENDING_LIMIT) return 'full';
			if (readTurns.parkedBy(c.trigger, c.source) >= c.places) return 'url-full';
			confirmLater(c);
		}
		if (!(await readTurns.wait(c.trigger, kind, c.source, c.limit))) return 'no-turn';
		// Another callback of this id may have read it meanwhile: its read is used.
		const done = taskReads.current(c.trigger, c.taskId, c.after, Date.now());
		return done ?? startRead(c, Date.now());
	}
}

function startRead(c: Confirmation, now: number): TaskRead {
	return taskReads.start(c.trigger, c.taskId, now, async () =>
		getTaskStatus(c.call.ctx, c.taskId, { retries: 0 }).then(
			(task): ReadOutcome => ({ task }),
			(error: unknown): ReadOutcome => ({ fault: classifyError(error) }),
		),
	);
}

/** The call waited in line for the whole confirmation window. */
function noTurn(): Verification {
	return {
		kind: 'unconfirmed',
		reason: `no status read was possible within the trigger's ${CONFIRM_WITHIN_MS / 1000} s confirmation window (too many callbacks at once)`,
	};
}

/**
 * Reads until the service answers: within ANSWER_WITHIN_MS and VERIFY_ATTEMPTS until the caller
 * is answered "confirming", then within the confirmation window and CONFIRM_READS. Retry-After is
 * honoured only while it fits in the current limit; a slow status endpoint is raced with it (the
 * read itself ends at its own timeout).
 */
async function confirmTask(c: Confirmation, first: TaskRead): Promise<Verification> {
	let last: Fault | undefined;
	let read: TaskRead = first;
	const reads = c.onFailure ? CONFIRM_READS : VERIFY_ATTEMPTS;
	for (let attempt = 0; ; attempt++) {
		c.after = read.startedAt;
		let outcome = await readBefore(read.result, c.limit);
		// Still reading at the bound: answer now, keep reading (a genuine callback of a slow
		// service, or of a loaded n8n, is not lost; nothing starts unless the service confirms).
		if ('late' in outcome && confirmLater(c)) outcome = await readBefore(read.result, c.limit);
		if ('task' in outcome) return { kind: 'confirmed', task: outcome.task };
		last = outcome.fault;
		if (isUnknownTask(last)) return { kind: 'unknown' };
		if (!isTransientForRead(last) || attempt + 1 >= reads) break;
		const delay = retryDelay(attempt + 1, last, c.onFailure ? CONFIRM_BACKOFF : DEFAULT_BACKOFF);
		// A failure worth retrying (refused, reset, timeout, 5xx, 429): with onFailure, the
		// retries go on after the "confirming" answer, within the confirmation window.
		const window = c.onFailure ? c.until : c.limit;
		if (Date.now() + delay >= window) {
			last = beyondWindow(last, window === c.until);
			break;
		}
		if (c.onFailure) confirmLater(c);
		await sleep(delay);
		const next = await obtainRead(c, 'retry');
		if (typeof next === 'string') break;
		read = next;
	}
	return {
		kind: 'unconfirmed',
		reason: scrub(c.call, last?.message ?? 'no status read was allowed'),
	};
}

/** A Retry-After beyond the limit, said in the reason. */
function beyondWindow(fault: Fault, window: boolean): Fault {
	if (fault.retryAfterMs === undefined || fault.retryAfterMs <= 0) return fault;
	const bound = window
		? `${CONFIRM_WITHIN_MS / 1000} s confirmation window`
		: `${ANSWER_WITHIN_MS / 1000} s answer bound`;
	return {
		...fault,
		message: `${fault.message} (the service asked to wait ${Math.ceil(fault.retryAfterMs / 1000)} s, beyond the trigger's ${bound})`,
	};
}

/** The read's outcome, or `late` (with a timeout fault) when `until` comes first. */
async function readBefore(
	read: Promise<ReadOutcome>,
	until: number,
): Promise<ReadOutcome | { fault: Fault; late: true }> {
	const timer = new AbortController();
	const outcome = await Promise.race([
		read,
		sleep(Math.max(0, until - Date.now()), timer.signal).then(
			() => ({
				fault: {
					kind: 'timeout',
					message: `the status endpoint did not answer within the trigger's ${ANSWER_WITHIN_MS / 1000} s answer bound`,
				} as Fault,
				late: true as const,
			}),
			() => ({ fault: { kind: 'cancelled', message: 'cancelled' } as Fault }),
		),
	]);
	timer.abort();
	return outcome;
}

/** The answer to each outcome; the ids the service does not know are remembered. */
function answerOutcome(
	c: Confirmation,
	outcome: Verification,
): Step<Task> | { unverified: string } {
	const { call, taskId } = c;
	if (outcome.kind === 'unknown') {
		unknownTasks.add(c.trigger, taskId, Date.now());
		return {
			done: refuse(call, 404, {
				error: `Task ${taskId} is unknown to the service; nothing was started`,
			}),
		};
	}
	if (outcome.kind === 'unconfirmed') {
		// Only when nothing could be tried any more before answering: a failure not worth
		// retrying (the key refused, say), or a Retry-After beyond the confirmation window.
		if (!c.onFailure) return { unverified: outcome.reason };
		return {
			done: refuse(
				call,
				503,
				{
					error: `Could not confirm task ${taskId} with the service: ${outcome.reason}. Nothing was started; call again later.`,
				},
				{ 'Retry-After': String(RETRY_UNCONFIRMED_S) },
			),
		};
	}
	if (outcome.task.task_id !== taskId) {
		// Not this task: remembered like an unknown one, so replays cost no read.
		unknownTasks.add(c.trigger, taskId, Date.now());
		return {
			done: refuse(call, 409, {
				error: `Asked for task ${taskId}, the service answered with task ${excerpt(outcome.task.task_id)}; nothing was started`,
			}),
		};
	}
	return { ok: outcome.task };
}
