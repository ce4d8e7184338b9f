/**
 * What a run learns about how long a model's tasks take, shared by the wait loops of a batch.
 *
 * The service reports no duration and no finish time, and often no usable progress. But the
 * tasks of one batch mostly use the same model with the same settings: once the first of them
 * has finished, the others need not probe their way there, they can read around the duration
 * it took. Until one has finished, a few tasks of each kind ("scouts") poll closely and the
 * rest ("followers") read rarely; the first finish wakes the followers.
 *
 * A finish is known only to lie between the last read that saw the task running and the read
 * that saw it finished: each sample is that interval, in ms from the submission.
 *
 * No timers here (pure bookkeeping): the wait loop sleeps, this only tells it when to wake.
 */
import type { DurationPrior } from './schedule';

/** [lowest, highest] ms from submission to finish; learnt at (epoch seconds). */
export type DurationSample = [lo: number, hi: number, learntAt: number];

/** The saved form (node static data): samples per kind of task. */
export type SavedDurations = Record<string, DurationSample[]>;

export type WaitRole = 'solo' | 'scout' | 'follower';

/** Samples kept per kind of task, newest last (older ones are dropped first). */
export const MAX_SAMPLES = 20;
/** Kinds of task kept in static data. */
export const MAX_KEYS = 50;
/** Saved samples older than this are not trusted (the service may have changed). */
export const MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** Tasks of a kind that poll closely while nothing is known about that kind yet. */
export const SCOUTS = 2;
/**
 * Tasks of a kind waiting at once from which two scout for the rest: below it each reads as a
 * lone task does, since the scouts' closer reads would cost more than the followers save (at
 * 60 s, two scouts and three followers read about as often as five users' 5 s loops).
 */
export const SCOUTED_FROM = 6;
/**
 * A kind whose saved samples are full is saved again only when its newest is older than this:
 * otherwise every production execution would rewrite the workflow's static data.
 */
export const RESAVE_AFTER_MS = 60 * 60 * 1000;

/**
 * The typical duration from samples: the midpoints of the intervals (the finish is anywhere in
 * them), widened by a small margin. Wide intervals (a task first read long after it began)
 * say little and are skipped unless nothing else is known.
 */
export function priorFrom(samples: readonly DurationSample[]): DurationPrior | undefined {
	const usable = samples.filter(([lo, hi]) => hi > 0 && lo >= 0 && hi >= lo);
	if (usable.length === 0) return undefined;
	const narrow = usable.filter(([lo, hi]) => hi - lo <= 0.35 * hi);
	const chosen = narrow.length > 0 ? narrow : usable;
	let low = Infinity;
	let high = 0;
	for (const [lo, hi] of chosen) {
		const mid = (lo + hi) / 2;
		low = Math.min(low, mid);
		high = Math.max(high, mid);
	}
	return { lowMs: low * 0.97, highMs: high * 1.03, samples: chosen.length };
}

/**
 * The kind of a task for learning: the model and the settings that plausibly change how long it
 * takes (numbers, booleans, short enum-like words such as "1080p"), never free text, URLs or
 * seeds. Tasks of one kind are expected to take about as long as each other.
 */
export function durationKey(model: string, input: Record<string, unknown> | undefined): string {
	const parts: string[] = [];
	for (const name of Object.keys(input ?? {}).sort()) {
		if (/prompt|url|seed|title|style|lyric|text|name/i.test(name)) continue;
		const value = (input ?? {})[name];
		if (typeof value === 'number' || typeof value === 'boolean') parts.push(`${name}=${value}`);
		else if (typeof value === 'string' && /^[\w.:-]{1,16}$/.test(value))
			parts.push(`${name}=${value}`);
	}
	const key = [model, ...parts].join('|');
	return key.length > 200 ? key.slice(0, 200) : key;
}

interface Kind {
	samples: DurationSample[];
	/** The model's typical duration (ms): the first prior, until a sample is learnt. */
	typicalMs?: number;
	/** Whether a new sample makes the saved ones worth rewriting (see RESAVE_AFTER_MS). */
	worthSaving: boolean;
	/** Waits of this kind in progress, in the order they joined (the first are the scouts). */
	active: Set<DurationWait>;
	/** Wake-up calls of followers asleep now. */
	sleepers: Map<DurationWait, () => void>;
}

/** One task's part in the learner, from the start of its wait to its end. */
export class DurationWait {
	private left = false;

	constructor(
		private readonly learner: DurationLearner,
		private readonly kind: Kind,
	) {}

	/** What is known about this kind of task, if anything. */
	prior(): DurationPrior | undefined {
		return this.learner.priorOf(this.kind);
	}

	/** The model's typical duration (ms), while nothing is learnt about the kind. */
	typicalMs(): number | undefined {
		return this.prior() ? undefined : this.kind.typicalMs;
	}

	/**
	 * `solo` when fewer than SCOUTED_FROM wait, `scout` among the first SCOUTS of more, else
	 * `follower`.
	 */
	role(): WaitRole {
		if (this.kind.active.size < SCOUTED_FROM) return 'solo';
		let rank = 0;
		for (const wait of this.kind.active) {
			if (wait === this) return 'scout';
			if (++rank >= SCOUTS) break;
		}
		return 'follower';
	}

	/** Calls `wake` when something worth re-planning for is learnt; returns the unsubscribe. */
	onWake(wake: () => void): () => void {
		this.kind.sleepers.set(this, wake);
		return () => {
			if (this.kind.sleepers.get(this) === wake) this.kind.sleepers.delete(this);
		};
	}

	/** The task was seen finished: its duration lies in (lo, hi] ms from the submission. */
	finished(lo: number, hi: number, now = Date.now()): void {
		this.learner.record(this.kind, [Math.round(lo), Math.round(hi), Math.round(now / 1000)]);
	}

	/** The wait is over (whatever the outcome). */
	leave(): void {
		if (this.left) return;
		this.left = true;
		const wasScout = this.role() === 'scout';
		this.kind.active.delete(this);
		this.kind.sleepers.delete(this);
		// A scout gone without a result (failed task, timeout): the next in line takes its place
		// and must hear it, or the followers would wait on their slow schedule alone. Only it is
		// woken: waking all for every failed scout would cost n² wake-ups in a failing batch.
		if (wasScout && !this.learner.priorOf(this.kind)) {
			let rank = 0;
			for (const wait of this.kind.active) {
				if (rank++ >= SCOUTS) break;
				const wake = this.kind.sleepers.get(wait);
				if (wake) {
					this.kind.sleepers.delete(wait);
					wake();
				}
			}
		}
	}
}

/** Per execution (and node): the durations of every kind of task, and who waits on them. */
export class DurationLearner {
	private readonly kinds = new Map<string, Kind>();

	private changed = false;

	constructor(saved?: unknown, now = Date.now()) {
		if (!saved || typeof saved !== 'object') return;
		for (const [key, list] of Object.entries(saved as Record<string, unknown>)) {
			if (!Array.isArray(list)) continue;
			const samples = list
				.filter(
					(s): s is DurationSample =>
						Array.isArray(s) &&
						s.length === 3 &&
						s.every((n) => typeof n === 'number' && Number.isFinite(n)) &&
						now - s[2] * 1000 <= MAX_AGE_MS,
				)
				.slice(-MAX_SAMPLES);
			if (samples.length === 0) continue;
			const kind = this.kindOf(key);
			kind.samples.push(...samples);
			const newest = Math.max(...samples.map((sample) => sample[2] * 1000));
			kind.worthSaving = samples.length < MAX_SAMPLES || now - newest > RESAVE_AFTER_MS;
		}
	}

	/** Starts one task's wait on tasks of kind `key`, whose model typically takes `typicalMs`. */
	join(key: string, typicalMs?: number): DurationWait {
		const kind = this.kindOf(key);
		if (typicalMs !== undefined && Number.isFinite(typicalMs) && typicalMs > 0)
			kind.typicalMs ??= typicalMs;
		const wait = new DurationWait(this, kind);
		kind.active.add(wait);
		// The batch just became large enough to scout: the first waits, asleep on a lone task's
		// schedule, are its scouts now and plan again (a lone task's first read comes late).
		if (kind.active.size === SCOUTED_FROM && !this.priorOf(kind)) {
			let rank = 0;
			for (const scout of kind.active) {
				if (rank++ >= SCOUTS) break;
				const wake = kind.sleepers.get(scout);
				if (wake) {
					kind.sleepers.delete(scout);
					wake();
				}
			}
		}
		return wait;
	}

	/** Whether something was learnt that is worth saving (new kinds, or stale saved samples). */
	get hasNews(): boolean {
		return this.changed;
	}

	/** The samples to save (newest kinds last, at most MAX_KEYS of them). */
	toSaved(): SavedDurations {
		const entries = [...this.kinds.entries()]
			.filter(([, kind]) => kind.samples.length > 0)
			.sort((a, b) => newest(a[1]) - newest(b[1]))
			.slice(-MAX_KEYS);
		const saved: SavedDurations = {};
		for (const [key, kind] of entries)
			saved[key] = kind.samples.map((s) => [...s] as DurationSample);
		return saved;
	}

	/** @internal */
	priorOf(kind: Kind): DurationPrior | undefined {
		return priorFrom(kind.samples);
	}

	/** @internal */
	record(kind: Kind, sample: DurationSample): void {
		const first = !priorFrom(kind.samples);
		kind.samples.push(sample);
		if (kind.samples.length > MAX_SAMPLES)
			kind.samples.splice(0, kind.samples.length - MAX_SAMPLES);
		if (kind.worthSaving) this.changed = true;
		// Only the first duration of a kind changes plans wholesale; later ones refine the prior,
		// which every wait reads at its next step (waking all for each finish would cost n² wakes).
		if (first) this.wake(kind);
	}

	/** @internal */
	wake(kind: Kind): void {
		const sleepers = [...kind.sleepers.values()];
		kind.sleepers.clear();
		for (const wake of sleepers) wake();
	}

	private kindOf(key: string): Kind {
		let kind = this.kinds.get(key);
		if (!kind) {
			kind = { samples: [], worthSaving: true, active: new Set(), sleepers: new Map() };
			this.kinds.set(key, kind);
		}
		return kind;
	}
}

function newest(kind: Kind): number {
	return kind.samples.reduce((max, s) => Math.max(max, s[2]), 0);
}
