/**
 * When to read a task's status next: a pure function of what has been seen so far, so that it is
 * unit-tested and benchmarked without HTTP.
 *
 * The service gives no duration estimate, only `progress` (an integer percentage in practice).
 * Fixed polling pays one request per interval; here:
 *  - without usable progress, the delay grows with the time already waited (a fixed fraction
 *    of it), so the lag after the finish stays a bounded share of the task's duration; faster
 *    while progress is 0 under a waiting status (not started: it will not finish right away);
 *  - when progress rises steadily, the finish is extrapolated and the next read is aimed just
 *    after it, capped so that a wrong extrapolation costs at most one capped wait;
 *  - an early read that still sees the task running re-aims with the fresher sample;
 *  - when earlier tasks of the same kind taught how long such a task takes (a `prior`, see
 *    durations.ts), and progress says nothing better, the reads are spent around that duration:
 *    one at half of it, then steps of a few percent through the learnt range, then back-off;
 *  - while nothing is known, a batch's first tasks of a kind ("scouts") poll closely and the
 *    others ("followers") double their wait: the scouts' first finish wakes them with a prior;
 *  - a task alone with nothing learnt and no usable progress may end at any moment: its first
 *    read comes after `coldFirstDelayMs`, the next ones `coldMinDelayMs` apart, then
 *    `backoffRatio` of the time waited. With the default pace (balanced) that is the users' own
 *    loop (a read every 5 s), so it is seen within max(2.5 s, 5 %) of its end at the median and
 *    max(4.5 s, 10 %) at p90, as the loop is, with never more reads than the loop, and fewer from
 *    about 65 s on (the trade-off against reads: docs/performance.md, section 2). Its model's
 *    typical duration does not space them out: a model's figure says nothing about this task's
 *    length. A follower of such a model reads only as a safety net until its scouts' first finish.
 *  - a task seen almost done (progress NEAR_DONE_PROGRESS or more, no confident aim) is read
 *    again within `almostDoneDelayMs`, whatever its role; a task alone of a learnt kind reads
 *    within the users' loop's allowance (its n-th read no sooner than n loop steps);
 *  - a read the service refused (429, 5xx, no answer) is no read: the next comes at its
 *    Retry-After or a short back-off (delayAfterRefusedRead), and nothing here counts it;
 *  - the pace (POLL_PACES, the panel's "Check for Results") moves all of this along the
 *    trade-off: sooner (more reads), balanced (the default), fewer requests (a later result).
 */

export interface PollObservation {
	/** Milliseconds since the origin (the submission, or the task's creation when known). */
	at: number;
	/** Progress percentage reported at that time, when the service sent one. */
	progress?: number;
	/** The status read at that time. */
	status?: string;
}

// Statuses that say the task has not started yet. A 0 % under any other status (a service that
// leaves progress at 0 while it renders) is not taken as "queued": waiting as for a queued task
// would let the lag after the finish grow to a large share of the task's duration.
const WAITING_STATUS = /^(not[_ -]?started|queued|pending|waiting|submitted|created)$/i;

/** Whether the last read says the task is still waiting to start. */
const looksNotStarted = (observations: PollObservation[]) => {
	const last = observations[observations.length - 1];
	return last.progress === 0 && (last.status === undefined || WAITING_STATUS.test(last.status));
};

export interface PollScheduleOptions {
	/** Delay before the first read after a submission. */
	firstDelayMs: number;
	/** Never read more often than this (back-off and probing reads). */
	minDelayMs: number;
	/** The first read of a task waited for alone (no scouts, nothing learnt). */
	coldFirstDelayMs: number;
	/**
	 * A task waited for alone (no scouts, nothing learnt) reads no more often than this: with
	 * nothing to aim at, closer reads buy a lag below 2.5 s on short tasks at the price of more
	 * requests than the users' 5 s loop (see docs/performance.md).
	 */
	coldMinDelayMs: number;
	/** A scout (the first tasks of a kind never seen, in a batch) reads no more often than this. */
	scoutMinDelayMs: number;
	/** Shortest wait for a read aimed at a confidently predicted finish that is close. */
	minAimDelayMs: number;
	/** Never wait longer than this between reads. */
	maxDelayMs: number;
	/**
	 * Without progress information, wait this fraction of the time elapsed so far: the lag after
	 * the finish is at most this share of the task's duration, about half of it at the median.
	 */
	backoffRatio: number;
	/**
	 * While progress is 0 (queued, not started), wait this fraction instead: a task
	 * rarely jumps from 0 to done, so fewer reads are spent before processing begins.
	 */
	zeroProgressRatio: number;
	/** Aim this fraction of the predicted duration after the predicted finish. */
	marginRatio: number;
	/** Progress two samples must span before their rate is trusted (integer rounding ≈ 1/Δp). */
	confidentProgress: number;
	/** With only an upper bound for the finish, read again after this share of the time left. */
	probeRatio: number;
	/** A scout (others of its kind wait on it) backs off by this fraction instead. */
	scoutBackoffRatio: number;
	/** A follower (scouts of its kind are reading) backs off by this fraction. */
	followerBackoffRatio: number;
	/** Within the learnt range, read every this fraction of its low end... */
	priorStepRatio: number;
	/** ...but not more often than this (fewer than 1/priorStepRatio reads in all: aimed reads). */
	priorMinStepMs: number;
	/** Past the learnt range, back off by this fraction of the time elapsed. */
	overdueRatio: number;
	/** A follower of a model of known typical duration reads this fraction of it apart. */
	followerTypicalRatio: number;
	/**
	 * A task seen almost done (progress at NEAR_DONE_PROGRESS or more, with no confident aim) is
	 * read again within this, whatever its role: it may end any moment, and its end is what the
	 * user waits for.
	 */
	almostDoneDelayMs: number;
}

/** The balanced pace: the default, and what saved workflows without the option get. */
export const DEFAULT_POLL_SCHEDULE: PollScheduleOptions = {
	firstDelayMs: 1_000,
	minDelayMs: 1_000,
	// 5.5 s, 10.5 s, 15.5 s … 65.5 s, then 7.5 % of the time waited: the users' 5 s loop (half
	// a second later), whose lag the targets equal below 50 s, and fewer reads than it after.
	coldFirstDelayMs: 5_500,
	coldMinDelayMs: 5_000,
	// Two scouts read for a batch of six or more: reading closer, they wake the rest sooner.
	scoutMinDelayMs: 2_500,
	minAimDelayMs: 250,
	maxDelayMs: 30_000,
	backoffRatio: 0.075,
	zeroProgressRatio: 0.5,
	marginRatio: 0.02,
	confidentProgress: 10,
	probeRatio: 0.2,
	scoutBackoffRatio: 0.05,
	followerBackoffRatio: 1,
	priorStepRatio: 0.04,
	priorMinStepMs: 500,
	overdueRatio: 0.1,
	followerTypicalRatio: 0.25,
	almostDoneDelayMs: 1_000,
};

/** The panel's "Check for Results" (Options): where on the trade-off of reads and lag to poll. */
export type PollPace = 'sooner' | 'balanced' | 'fewer';

export const POLL_PACES: Record<PollPace, PollScheduleOptions> = {
	// Issue 30's schedule: a lone task read every 2.5 s, then every 8 % of the time waited;
	// scouts from 1 s. About 0.7 of fixed 2 s polling at 60 s, seen within about 2.5 s.
	sooner: {
		...DEFAULT_POLL_SCHEDULE,
		coldFirstDelayMs: 2_500,
		coldMinDelayMs: 2_500,
		scoutMinDelayMs: 1_000,
		backoffRatio: 0.08,
		almostDoneDelayMs: 500,
	},
	balanced: DEFAULT_POLL_SCHEDULE,
	// A read every 10 s, then every 20 % of the time waited; learnt durations stepped through
	// twice as coarsely. Seen up to about a fifth of a task's duration late.
	fewer: {
		...DEFAULT_POLL_SCHEDULE,
		firstDelayMs: 2_000,
		coldFirstDelayMs: 10_000,
		coldMinDelayMs: 10_000,
		scoutMinDelayMs: 10_000,
		backoffRatio: 0.2,
		scoutBackoffRatio: 0.1,
		priorStepRatio: 0.08,
		overdueRatio: 0.2,
		marginRatio: 0.04,
		almostDoneDelayMs: 2_000,
	},
};

/** What earlier tasks of the same kind taught: their finish, in ms from the submission. */
export interface DurationPrior {
	/** About the earliest finish seen (with a small margin). */
	lowMs: number;
	/** About the latest finish seen (with a small margin). */
	highMs: number;
	/** How many finished tasks it rests on. */
	samples: number;
}

export interface PollState {
	/** Milliseconds since the origin, now. */
	now: number;
	/** Reads made so far, oldest first. */
	observations: PollObservation[];
	/** Whether `at` is measured from the moment the task started (submission/creation). */
	originKnown?: boolean;
	/** The service asked to wait at least this long (Retry-After). */
	retryAfterMs?: number;
	/** How long tasks of this kind took before (only with a known origin). */
	prior?: DurationPrior;
	/** This task's part while nothing is known: alone, scouting for others, or following. */
	role?: 'solo' | 'scout' | 'follower';
	/** How long a task of this model typically takes (ms): the prior before anything is learnt. */
	typicalMs?: number;
}

export interface Prediction {
	/** Predicted finish, ms since the origin. */
	finishAt: number;
	/** Whether the samples agree enough to aim straight at the finish. */
	confident: boolean;
}

const hasProgress = (o: PollObservation): o is Required<PollObservation> =>
	typeof o.progress === 'number' && Number.isFinite(o.progress);

/**
 * Extrapolates the finish from progress samples. The anchor is the last moment progress was
 * still 0 (or the origin): progress that starts late (queueing) then does not skew the rate.
 */
export function predictFinish(
	observations: PollObservation[],
	originKnown: boolean,
	options: PollScheduleOptions = DEFAULT_POLL_SCHEDULE,
): Prediction | undefined {
	const samples = observations.filter(hasProgress);
	if (samples.length === 0) return undefined;
	const last = samples[samples.length - 1];
	if (last.progress <= 0 || last.progress >= 100) return undefined;

	// Integer progress is (at worst) rounded down, so the true fraction is at least p/100:
	// extrapolating from p itself lands at or just after the finish, rarely before it.
	const p = last.progress;
	const zeros = samples.filter((s) => s.progress <= 0);
	const lastZero = zeros.length > 0 ? zeros[zeros.length - 1] : undefined;
	let anchorEstimate: number | undefined;
	// From the last moment progress was 0 (or the task's start): exact for linear progress from
	// the start; an upper bound when progress began some time after that last zero.
	const anchorAt = lastZero ? lastZero.at : originKnown ? 0 : undefined;
	if (anchorAt !== undefined && last.at > anchorAt) {
		anchorEstimate = last.at + ((100 - p) * (last.at - anchorAt)) / p;
	}
	// From the rate between the first non-zero sample and the last: unbiased by a late start,
	// precise once they are far enough apart in progress.
	let rateEstimate: number | undefined;
	const firstNonZero = samples.find((s) => s.progress > 0);
	const spanned = firstNonZero ? last.progress - firstNonZero.progress : 0;
	if (firstNonZero && spanned > 0 && last.at > firstNonZero.at) {
		const rate = spanned / (last.at - firstNonZero.at);
		rateEstimate = last.at + (100 - p) / rate;
	}

	if (rateEstimate !== undefined && spanned >= options.confidentProgress) {
		// Steady when the rate agrees with the bound; far beyond it, progress is slowing down.
		const steady = anchorEstimate === undefined || rateEstimate <= anchorEstimate * 1.15;
		return { finishAt: rateEstimate, confident: steady };
	}
	if (anchorEstimate === undefined) {
		return rateEstimate === undefined ? undefined : { finishAt: rateEstimate, confident: false };
	}
	// A single span from the anchor is only an upper bound: progress may have started (after
	// queueing) well after it, and then the task ends much sooner. Never aim at it blindly.
	return { finishAt: anchorEstimate, confident: false };
}

/** Progress from which a task is taken as almost done (read again soon). */
export const NEAR_DONE_PROGRESS = 90;

const isAlmostDone = (o: PollObservation | undefined) =>
	o !== undefined &&
	typeof o.progress === 'number' &&
	o.progress >= NEAR_DONE_PROGRESS &&
	o.progress < 100;

/**
 * Milliseconds to wait after a status read the service refused (429, 5xx, no answer) even after
 * the transport's own retries. The refused read told nothing, so it is not a read of the
 * schedule: the next one comes at the service's Retry-After, or after a short back-off that
 * doubles with each refusal in a row, not at the schedule's next step.
 */
export function delayAfterRefusedRead(
	refusedInARow: number,
	retryAfterMs: number | undefined,
	options: PollScheduleOptions = DEFAULT_POLL_SCHEDULE,
): number {
	if (retryAfterMs !== undefined) return Math.round(Math.min(options.maxDelayMs, retryAfterMs));
	return Math.min(options.maxDelayMs, options.minDelayMs * 2 ** Math.max(0, refusedInARow - 1));
}

/** Milliseconds to wait before the next status read. */
export function nextPollDelay(
	state: PollState,
	options: PollScheduleOptions = DEFAULT_POLL_SCHEDULE,
): number {
	const { now, observations } = state;
	const prior = state.originKnown === false ? undefined : state.prior;
	const solo = state.role !== 'scout' && state.role !== 'follower';
	const alone = !prior && solo;
	const floor = Math.max(
		alone
			? options.coldMinDelayMs
			: state.role === 'scout' && !prior
				? options.scoutMinDelayMs
				: options.minDelayMs,
		state.retryAfterMs ?? 0,
	);
	const clamp = (ms: number) => Math.round(Math.max(floor, Math.min(options.maxDelayMs, ms)));

	if (observations.length === 0) {
		// Woken (or planned) past the low end of a learnt duration before any read: read now.
		if (prior && now >= prior.lowMs) return state.retryAfterMs ?? 0;
		// A follower's first read can wait longer: the scouts' reads catch what is wrong at once,
		// and their first finish wakes it. Of a known model, it waits as a task alone would: the
		// scouts' closer reads are paid for by the followers' (a batch within the users' loop).
		const first = alone
			? options.coldFirstDelayMs
			: state.role === 'follower'
				? Math.max(
						options.firstDelayMs * (1 + options.followerBackoffRatio),
						state.typicalMs && !prior ? options.coldFirstDelayMs : 0,
					)
				: options.firstDelayMs;
		// A task alone of a learnt kind: its first read is the learnt one (at half, or the low end).
		if (prior && solo) return clamp(priorDelay(now, prior, options, solo));
		return clamp(first - now);
	}

	const prediction = predictFinish(observations, state.originKnown ?? true, options);
	const last = observations[observations.length - 1];
	if (isAlmostDone(last) && !prediction?.confident) {
		// Seen almost done: read again soon, aimed at the extrapolated end when it is closer.
		// Once: a task that stays there (uploading at 99 %) is read as an overdue one.
		const before = observations[observations.length - 2];
		const soon = isAlmostDone(before)
			? Math.max(options.almostDoneDelayMs, now * options.marginRatio * 2)
			: Math.min(
					options.almostDoneDelayMs,
					prediction ? prediction.finishAt * (1 + options.marginRatio) - now : Infinity,
				);
		return Math.round(
			Math.max(options.minAimDelayMs, state.retryAfterMs ?? 0, Math.min(options.maxDelayMs, soon)),
		);
	}
	if (state.role === 'follower' && state.typicalMs && !prior) {
		// A follower of a known model leaves the reading, progress included, to its scouts: their
		// first finish wakes it. Until then it reads only as a safety net, far apart.
		return clamp(
			Math.max(now * options.followerBackoffRatio, state.typicalMs * options.followerTypicalRatio),
		);
	}
	if (prior && !prediction?.confident) {
		// Woken (or first planned) inside the learnt range with no read there yet: read now.
		if (last.at < prior.lowMs && now >= prior.lowMs) return state.retryAfterMs ?? 0;
		if (now >= prior.lowMs && now < prior.highMs) {
			let step = priorDelay(now, prior, options, solo);
			// A task alone steps through the range within the users' loop's allowance (its n-th read
			// no sooner than n loop steps from the start, Balanced: 5 s), but never past the range's
			// end: a kind learnt to take seconds is read about as often as that loop, seen sooner.
			// Only reads that answered count: a refused read is no read.
			if (solo)
				step = Math.max(
					step,
					Math.min(prior.highMs - now, options.coldMinDelayMs * (observations.length + 1) - now),
				);
			return Math.round(
				Math.max(
					options.priorMinStepMs,
					state.retryAfterMs ?? 0,
					Math.min(options.maxDelayMs, step),
				),
			);
		}
		return clamp(priorDelay(now, prior, options, solo));
	}
	let ratio = looksNotStarted(observations) ? options.zeroProgressRatio : options.backoffRatio;
	if (state.role === 'scout') ratio = Math.min(ratio, options.scoutBackoffRatio);
	if (state.role === 'follower') ratio = Math.max(ratio, options.followerBackoffRatio);
	const backoff = now * ratio;
	if (!prediction) return clamp(backoff);

	const target = prediction.finishAt * (1 + options.marginRatio);
	const untilTarget = target - now;
	if (untilTarget <= 0) {
		// Overdue: the task runs longer than predicted; keep the lag a small share of the time.
		return clamp(now * options.marginRatio * 2);
	}
	if (prediction.confident) {
		return Math.round(
			Math.max(
				options.minAimDelayMs,
				state.retryAfterMs ?? 0,
				Math.min(options.maxDelayMs, untilTarget),
			),
		);
	}
	// Not yet trustworthy (an upper bound): read again after a share of the time left, enough
	// for progress to move about `probeRatio` of what remains, which yields a rate. The task may
	// end any moment before that bound (a first read at 2 % bounds nothing useful), so never
	// later than the back-off without progress would read.
	return clamp(Math.min(untilTarget / 2, untilTarget * options.probeRatio, backoff));
}

/**
 * Reads planned from a learnt duration: one at half the earliest finish seen (a task of another
 * kind, or a failure, is not left unseen for long), one at it, then steps through the range,
 * then a back-off that keeps the lag a small share of the time.
 */
function priorDelay(
	now: number,
	prior: DurationPrior,
	options: PollScheduleOptions,
	solo: boolean,
): number {
	const { lowMs, highMs } = prior;
	// The read at half is skipped when it would come less than minDelay before or after another,
	// and for a task alone when it would come before its first read with nothing learnt: a kind
	// learnt to take seconds is then read no more often than the users' loop would read it.
	if (now < lowMs) {
		const half = lowMs / 2;
		const gap = solo ? Math.max(options.minDelayMs, options.coldMinDelayMs) : options.minDelayMs;
		return (half - now >= gap && lowMs - half >= gap ? half : lowMs) - now;
	}
	if (now < highMs) return Math.min(highMs - now, lowMs * options.priorStepRatio);
	return now * options.overdueRatio;
}
