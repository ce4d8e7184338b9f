// The duration learner: what a batch's wait loops share (roles, the first finish waking the
// followers, the prior they plan from), and what is kept in node static data between runs.
import {
	DurationLearner,
	MAX_AGE_MS,
	MAX_SAMPLES,
	RESAVE_AFTER_MS,
	SCOUTED_FROM,
	durationKey,
	priorFrom,
	type DurationSample,
} from '../../../nodes/MediaGeneration/polling/durations';

const now = Date.UTC(2026, 0, 10);
const sec = (ms: number) => Math.round(ms / 1000);

describe('duration learner', () => {
	it('learns nothing from nothing, then a range around the finishes it saw', () => {
		expect(priorFrom([])).toBeUndefined();
		const prior = priorFrom([
			[55_000, 61_000, 0],
			[58_000, 60_000, 0],
		])!;
		// Midpoints 58 s and 59 s, a 3 % margin either side.
		expect(prior.lowMs).toBeCloseTo(58_000 * 0.97, 0);
		expect(prior.highMs).toBeCloseTo(59_000 * 1.03, 0);
		expect(prior.samples).toBe(2);
	});

	it('ignores a wide interval (first read long after the finish) when narrow ones exist', () => {
		const prior = priorFrom([
			[1_000, 60_000, 0],
			[58_000, 60_000, 0],
		])!;
		expect(prior.samples).toBe(1);
		expect(prior.lowMs).toBeGreaterThan(50_000);
	});

	it(`up to ${SCOUTED_FROM - 1} waits are solo; from ${SCOUTED_FROM} on the first two scout and the rest follow`, () => {
		const learner = new DurationLearner();
		const waits = Array.from({ length: SCOUTED_FROM - 1 }, () => learner.join('m'));
		expect(waits.map((w) => w.role())).toEqual(waits.map(() => 'solo'));
		waits.push(learner.join('m'));
		expect(waits.map((w) => w.role())).toEqual([
			'scout',
			'scout',
			...waits.slice(2).map(() => 'follower'),
		]);
		// Other kinds are separate.
		expect(learner.join('other').role()).toBe('solo');
	});

	it(`the ${SCOUTED_FROM}th wait of a kind wakes the first two, asleep as lone tasks: they scout now`, () => {
		const learner = new DurationLearner();
		const woken: number[] = [];
		const waits = Array.from({ length: SCOUTED_FROM - 1 }, (_, i) => {
			const wait = learner.join('m');
			wait.onWake(() => woken.push(i));
			return wait;
		});
		expect(woken).toEqual([]);
		learner.join('m');
		expect(woken).toEqual([0, 1]);
		expect(waits.map((w) => w.role()).slice(0, 3)).toEqual(['scout', 'scout', 'follower']);
		// Once, not for every wait that joins after.
		waits[0].onWake(() => woken.push(10));
		learner.join('m');
		expect(woken).toEqual([0, 1]);
	});

	it("the kind's first finish wakes its sleeping followers once; later finishes do not", () => {
		const learner = new DurationLearner();
		const waits = Array.from({ length: 4 }, () => learner.join('m'));
		const woken: number[] = [];
		waits[2].onWake(() => woken.push(2));
		waits[3].onWake(() => woken.push(3));
		expect(waits[2].prior()).toBeUndefined();
		waits[0].finished(9_000, 10_000, now);
		expect(woken).toEqual([2, 3]);
		expect(waits[3].prior()!.lowMs).toBeLessThan(9_500);
		waits[3].onWake(() => woken.push(33));
		waits[1].finished(9_500, 10_500, now);
		expect(woken).toEqual([2, 3]);
		expect(learner.hasNews).toBe(true);
	});

	it('a scout that leaves without a duration wakes the follower that scouts in its place, only it', () => {
		const learner = new DurationLearner();
		const waits = Array.from({ length: SCOUTED_FROM + 1 }, () => learner.join('m'));
		const woken: number[] = [];
		for (let i = 2; i < waits.length; i++) waits[i].onWake(() => woken.push(i));
		waits[0].leave();
		expect(woken).toEqual([2]);
		expect(waits[2].role()).toBe('scout');
		expect(waits[3].role()).toBe('follower');
		// A follower leaving wakes nobody.
		waits[waits.length - 1].leave();
		expect(woken).toEqual([2]);
	});

	it("holds the model's typical duration as the kind's first prior until a duration is learnt", () => {
		const learner = new DurationLearner();
		const first = learner.join('video-1', 120_000);
		// The first figure given for a kind stays; absent or nonsense figures change nothing.
		const second = learner.join('video-1', 30_000);
		expect(learner.join('video-1').typicalMs()).toBe(120_000);
		expect(learner.join('other', 0).typicalMs()).toBeUndefined();
		expect(learner.join('other', Number.NaN).typicalMs()).toBeUndefined();
		expect(second.typicalMs()).toBe(120_000);
		first.finished(58_000, 61_000, now);
		// Learnt: the kind's own duration replaces the model's figure for every wait of the kind.
		expect(second.prior()).toBeDefined();
		expect(second.typicalMs()).toBeUndefined();
		// Never saved: static data keeps only what was seen.
		expect(learner.toSaved()).toEqual({ 'video-1': [[58_000, 61_000, sec(now)]] });
	});

	it('keeps samples through static data (JSON), newest last, at most MAX_SAMPLES per kind', () => {
		const learner = new DurationLearner();
		const wait = learner.join('m');
		for (let i = 0; i < MAX_SAMPLES + 5; i++) wait.finished(1_000 * i, 1_000 * i + 500, now);
		const saved = JSON.parse(JSON.stringify(learner.toSaved())) as Record<string, DurationSample[]>;
		expect(saved.m).toHaveLength(MAX_SAMPLES);
		expect(saved.m[MAX_SAMPLES - 1][0]).toBe(1_000 * (MAX_SAMPLES + 4));
		const next = new DurationLearner(saved, now);
		expect(next.join('m').prior()).toEqual(priorFrom(saved.m));
		expect(next.hasNews).toBe(false);
	});

	it('drops saved samples that are too old or malformed', () => {
		const saved = {
			m: [
				[50_000, 52_000, sec(now - MAX_AGE_MS - 1_000)],
				[58_000, 60_000, sec(now - 1_000)],
				['x', 1, 2],
				[1, 2],
			],
			broken: 'not a list',
		};
		const learner = new DurationLearner(saved, now);
		expect(learner.join('m').prior()!.samples).toBe(1);
		expect(learner.join('broken').prior()).toBeUndefined();
		expect(new DurationLearner('garbage').join('m').prior()).toBeUndefined();
	});

	it('a kind is the model and its settings that change the duration, never free text or seeds', () => {
		const a = durationKey('video-x', {
			prompt: 'a cat',
			duration: 8,
			resolution: '1080p',
			seed: 3,
		});
		const b = durationKey('video-x', {
			prompt: 'a dog',
			duration: 8,
			resolution: '1080p',
			seed: 9,
		});
		const c = durationKey('video-x', { prompt: 'a cat', duration: 4, resolution: '1080p' });
		expect(a).toBe(b);
		expect(a).not.toBe(c);
		expect(durationKey('video-x', { image_urls: ['https://x/y.png'], aspect_ratio: '16:9' })).toBe(
			'video-x|aspect_ratio=16:9',
		);
	});

	it('rewrites full saved samples at most once per RESAVE_AFTER_MS (not after every execution)', () => {
		const full = (learntAt: number) => ({
			m: Array.from({ length: MAX_SAMPLES }, (): DurationSample => [58_000, 60_000, sec(learntAt)]),
		});
		const fresh = new DurationLearner(full(now - 60_000), now);
		fresh.join('m').finished(58_000, 60_000, now);
		expect(fresh.hasNews).toBe(false);
		const stale = new DurationLearner(full(now - RESAVE_AFTER_MS - 60_000), now);
		stale.join('m').finished(58_000, 60_000, now);
		expect(stale.hasNews).toBe(true);
		// A kind not saved yet is always news.
		const other = new DurationLearner(full(now - 60_000), now);
		other.join('n').finished(8_000, 9_000, now);
		expect(other.hasNews).toBe(true);
	});
});
