import { sleep } from 'n8n-workflow';

import { cancelSignalOf, getTaskStatus, type ApiContext } from '../../shared/transport/api';
import { isTransientForRead, TransportError, type Fault } from '../../shared/transport/faults';
import {
	DEFAULT_POLL_SCHEDULE,
	delayAfterRefusedRead,
	nextPollDelay,
	type PollObservation,
	type PollScheduleOptions,
} from './schedule';
import type { DurationLearner, DurationWait } from './durations';
import { hintParking } from './parkHint';
import { isTerminal, type Task } from '../../shared/task';

export interface WaitOptions {
	/** Epoch ms the task started (our submission, or its created_time). */
	origin: number;
	/** Whether `origin` is the real start (false when only guessed). */
	originKnown: boolean;
	/** Give up (the task keeps running on the service) after this many ms from the call. */
	timeoutMs: number;
	/** Read at once instead of after the schedule's first delay (picking up an existing task). */
	pollImmediately?: boolean;
	/**
	 * When the origin is not known, take the task's created_time as the origin once a read
	 * returns one that is plausible on this clock (an existing task picked up later).
	 */
	learnOrigin?: (createdTime: string | undefined, now: number) => number | undefined;
	schedule?: Partial<PollScheduleOptions>;
	/**
	 * The batch's duration learner and this task's kind (see durations.ts): the wait reads
	 * around what earlier tasks of the kind took, and teaches it when it finishes.
	 */
	durations?: { learner: DurationLearner; key: string; typicalMs?: number };
	/** Called after every successful status read. */
	onUpdate?: (task: Task, polls: number) => void;
	/** Called when a read fails even after its retries (the wait goes on). */
	onReadFailure?: (fault: Fault) => void;
	signal?: AbortSignal;
}

export interface WaitResult {
	task: Task;
	/** Epoch ms of the read that first saw the final state. */
	finishedAt: number;
	polls: number;
}

/** The task was still running when the wait's time ran out. */
export class WaitTimeoutError extends Error {
	constructor(
		readonly lastTask: Task | undefined,
		readonly waitedMs: number,
		readonly polls: number,
	) {
		super(`still running after ${Math.round(waitedMs / 1000)} s`);
		this.name = 'WaitTimeoutError';
	}
}

/** Consecutive failed reads (each already retried) before the wait gives up on the service. */
const MAX_FAILED_READS = 8;

/**
 * Polls the status endpoint until `finished` or `failed`, on the adaptive schedule, until the
 * timeout, stopping at once when the execution is cancelled (sleep rejects on the signal).
 */
export async function waitForTask(
	ctx: ApiContext,
	taskId: string,
	options: WaitOptions,
): Promise<WaitResult> {
	const shared = options.durations?.learner.join(
		options.durations.key,
		options.durations.typicalMs,
	);
	const own = taskSignal(options.signal ?? cancelSignalOf(ctx));
	hintParking(ctx);
	try {
		return await pollTask(ctx, taskId, { ...options, signal: own.signal }, shared);
	} finally {
		own.release();
		shared?.leave();
	}
}

/** Per execution signal: the waits' own controllers, all aborted by its one listener. */
const relays = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * A signal of the wait's own that aborts with the execution's. Every sleep adds a listener to
 * the signal it is given and removes it after; Node's EventTarget does both in time linear in
 * the listeners present, so a thousand waits sleeping on the execution's signal itself cost a
 * thousand-long scan per sleep. Here that signal carries one listener for all of them.
 */
function taskSignal(parent: AbortSignal | undefined): { signal?: AbortSignal; release(): void } {
	if (!parent) return { signal: undefined, release: () => undefined };
	const controller = new AbortController();
	if (parent.aborted) {
		controller.abort(parent.reason);
		return { signal: controller.signal, release: () => undefined };
	}
	let waits = relays.get(parent);
	if (!waits) {
		const created = new Set<AbortController>();
		waits = created;
		relays.set(parent, created);
		parent.addEventListener(
			'abort',
			() => {
				for (const c of created) c.abort(parent.reason);
				created.clear();
			},
			{ once: true },
		);
	}
	const registered = waits;
	registered.add(controller);
	return { signal: controller.signal, release: () => registered.delete(controller) };
}

async function pollTask(
	ctx: ApiContext,
	taskId: string,
	options: WaitOptions,
	shared: DurationWait | undefined,
): Promise<WaitResult> {
	const schedule: PollScheduleOptions = { ...DEFAULT_POLL_SCHEDULE, ...options.schedule };
	const signal = options.signal ?? cancelSignalOf(ctx);
	const startedAt = Date.now();
	const deadline = startedAt + options.timeoutMs;
	const observations: PollObservation[] = [];
	let polls = 0;
	let lastTask: Task | undefined;
	let failedReads = 0;
	let retryAfterMs: number | undefined;
	// Whether a read was refused since the last one that saw the task running (see the finish).
	let refusedSinceRunning = false;
	let first = true;
	let origin = options.origin;
	let originKnown = options.originKnown;

	for (;;) {
		const now = Date.now();
		let delay =
			first && options.pollImmediately
				? 0
				: failedReads > 0
					? // A refused read is a read that did not happen: its Retry-After (or a short
						// back-off) decides, not the schedule's next step.
						delayAfterRefusedRead(failedReads, retryAfterMs, schedule)
					: nextPollDelay(
							{
								now: now - origin,
								observations,
								originKnown,
								retryAfterMs,
								prior: shared?.prior(),
								role: shared?.role(),
								typicalMs: shared?.typicalMs(),
							},
							schedule,
						);
		first = false;
		if (now >= deadline) throw new WaitTimeoutError(lastTask, now - startedAt, polls);
		// The last read lands on the deadline rather than past it.
		delay = Math.min(delay, deadline - now);
		if (delay > 0) {
			const outcome = await pause(delay, signal, shared);
			if (outcome === 'cancelled')
				throw new TransportError({ kind: 'cancelled', message: 'The execution was cancelled' });
			// Woken: something was learnt about this kind of task; plan the next read again.
			if (outcome === 'woken') continue;
		}

		let task: Task | undefined;
		let fault: Fault | undefined;
		try {
			// Few retries per read: the schedule itself is the outer retry loop; none past the
			// wait's deadline, whatever Retry-After says.
			task = await getTaskStatus(ctx, taskId, {
				signal,
				retries: 2,
				deadline,
				onRetry: () => {
					refusedSinceRunning = true;
				},
			});
		} catch (error) {
			fault =
				error instanceof TransportError ? error.fault : { kind: 'network', message: String(error) };
		}
		polls++;
		const readAt = Date.now();
		if (!task) {
			const f = fault ?? { kind: 'network' as const, message: 'no answer' };
			if (f.kind === 'cancelled' || !isTransientForRead(f) || ++failedReads >= MAX_FAILED_READS) {
				throw new TransportError({ ...f, message: f.message });
			}
			retryAfterMs = f.retryAfterMs;
			refusedSinceRunning = true;
			options.onReadFailure?.(f);
			continue;
		}
		failedReads = 0;
		retryAfterMs = undefined;
		lastTask = task;
		if (!originKnown && options.learnOrigin) {
			const learnt = options.learnOrigin(task.created_time, readAt);
			if (learnt !== undefined) {
				// Re-base what was seen so far on the task's real start.
				for (const o of observations) o.at += origin - learnt;
				origin = learnt;
				originKnown = true;
			}
		}
		if (isTerminal(task.status)) {
			// Only a finish teaches a duration, and only from a known start: it lies after the last
			// read that saw the task running. Without one, when refused reads hid the task while it
			// ran, after the submission (a wide interval, used until narrower ones are learnt): the
			// batch's followers must hear of it. A task first seen finished with no read refused
			// teaches nothing (it may have ended long before that read).
			const running = observations[observations.length - 1];
			if (
				task.status === 'finished' &&
				originKnown &&
				(running || (refusedSinceRunning && !options.pollImmediately))
			)
				shared?.finished(running?.at ?? 0, readAt - origin, readAt);
			options.onUpdate?.(task, polls);
			return { task, finishedAt: readAt, polls };
		}
		refusedSinceRunning = false;
		observations.push({ at: readAt - origin, progress: task.progress, status: task.status });
		if (observations.length > 50) observations.splice(1, observations.length - 50);
		options.onUpdate?.(task, polls);
	}
}

/**
 * Sleeps `ms`; while nothing is learnt about its kind, the sleep also ends when that changes its
 * plan: the kind's first duration is learnt, a scout leaves without one (its follower scouts
 * now), or enough tasks joined to scout (a lone task asleep is a scout now). It then re-plans at
 * once instead of sleeping through the finish.
 */
async function pause(
	ms: number,
	signal: AbortSignal | undefined,
	learnt: DurationWait | undefined,
): Promise<'slept' | 'woken' | 'cancelled'> {
	if (signal?.aborted) return 'cancelled';
	if (!learnt || learnt.prior() !== undefined) {
		return await sleep(ms, signal).then(
			() => 'slept' as const,
			() => 'cancelled' as const,
		);
	}
	const controller = new AbortController();
	const forward = () => controller.abort();
	signal?.addEventListener('abort', forward, { once: true });
	const unsubscribe = learnt.onWake(forward);
	try {
		await sleep(ms, controller.signal);
		return 'slept';
	} catch {
		return signal?.aborted ? 'cancelled' : 'woken';
	} finally {
		unsubscribe();
		signal?.removeEventListener('abort', forward);
	}
}
