// The poll schedule is a pure function: these tests replay whole tasks on a virtual clock (no
// timers, no HTTP) and check what the node would do: how many status reads, and how soon after
// the finish it notices. Figures for the benchmark come from bench/, not from here.
import {
	DEFAULT_POLL_SCHEDULE,
	POLL_PACES,
	delayAfterRefusedRead,
	nextPollDelay,
	predictFinish,
	type DurationPrior,
	type PollObservation,
	type PollScheduleOptions,
	type PollState,
} from '../../../nodes/MediaGeneration/polling/schedule';

type Progress = (elapsedMs: number, durationMs: number) => number | undefined;

/** The simulator's curve: 0 for the first quarter (not started, queued), then linear to 99. */
const queuedThenLinear: Progress = (e, d) =>
	e < d * 0.25 ? 0 : Math.min(99, Math.floor(((e - d * 0.25) / (d * 0.75)) * 99));
const linearFloor: Progress = (e, d) => Math.min(99, Math.floor((100 * e) / d));
const noProgress: Progress = () => undefined;

/** Replays one task: returns the number of reads and the lag of the read that saw it finished. */
function replay(
	durationMs: number,
	progress: Progress,
	retryAfterMs?: number,
	extra: Pick<PollState, 'prior' | 'role' | 'typicalMs'> & {
		status?: string;
		options?: PollScheduleOptions;
	} = {},
) {
	const { status, options, ...state } = extra;
	const observations: PollObservation[] = [];
	const delays: number[] = [];
	let now = 0;
	for (let reads = 1; reads < 10_000; reads++) {
		const delay = nextPollDelay({ now, observations, retryAfterMs, ...state }, options);
		delays.push(delay);
		now += delay;
		if (now >= durationMs) return { reads, lagMs: now - durationMs, delays };
		observations.push({ at: now, progress: progress(now, durationMs), status });
	}
	throw new Error('never noticed the finish');
}

describe('poll schedule', () => {
	it('reads first after the configured first delay when scouting for a batch (no closer than a scout reads)', () => {
		for (const options of [DEFAULT_POLL_SCHEDULE, POLL_PACES.sooner, POLL_PACES.fewer]) {
			expect(nextPollDelay({ now: 0, observations: [], role: 'scout' }, options)).toBe(
				Math.max(options.firstDelayMs, options.scoutMinDelayMs),
			);
		}
		expect(POLL_PACES.sooner.firstDelayMs).toBe(1_000);
	});

	it("a lone task of a kind never seen never reads more often than the users' 5-second loop (balanced)", () => {
		// Nothing to aim at: it has made no more reads than a read every 5 s (HTTP Request + Wait
		// 5 s) when it sees the end, whatever the length; the sooner pace, than fixed 2 s polling.
		for (const duration of [1_500, 3_000, 5_200, 7_000, 10_000, 25_000, 60_000, 300_000]) {
			for (const progress of [noProgress, () => 0]) {
				expect(replay(duration, progress).reads).toBeLessThanOrEqual(Math.ceil(duration / 5_000));
				expect(
					replay(duration, progress, undefined, { options: POLL_PACES.sooner }).reads,
				).toBeLessThanOrEqual(Math.ceil(duration / 2_000));
			}
		}
		expect(nextPollDelay({ now: 0, observations: [] })).toBe(
			DEFAULT_POLL_SCHEDULE.coldFirstDelayMs,
		);
	});

	it('never waits longer than the cap, nor less than the minimum unless aiming at a close finish', () => {
		for (const duration of [3_000, 45_000, 600_000, 3_600_000]) {
			for (const progress of [queuedThenLinear, linearFloor, noProgress]) {
				const { delays } = replay(duration, progress);
				for (const d of delays) {
					expect(d).toBeGreaterThanOrEqual(DEFAULT_POLL_SCHEDULE.minAimDelayMs);
					expect(d).toBeLessThanOrEqual(DEFAULT_POLL_SCHEDULE.maxDelayMs);
				}
				// Only the last, aimed read may come sooner than the minimum.
				for (const d of delays.slice(0, -1))
					expect(d).toBeGreaterThanOrEqual(DEFAULT_POLL_SCHEDULE.minDelayMs);
			}
		}
	});

	it('honours Retry-After even when the prediction says the task is about done', () => {
		const observations = [{ at: 9_000, progress: 90 }];
		expect(nextPollDelay({ now: 9_000, observations })).toBeLessThan(7_000);
		expect(nextPollDelay({ now: 9_000, observations, retryAfterMs: 7_000 })).toBe(7_000);
	});

	it('a task seen almost done is read again within a second, whatever its role (issue 46)', () => {
		// One read at 90 %: no confident aim, and a lone task's next step would be 5 s away.
		for (const role of ['solo', 'scout', 'follower'] as const) {
			const delay = nextPollDelay({
				now: 3_000,
				observations: [{ at: 3_000, progress: 97, status: 'processing' }],
				role,
				typicalMs: 10_000,
			});
			expect(delay).toBeLessThanOrEqual(DEFAULT_POLL_SCHEDULE.almostDoneDelayMs);
		}
		// Once: a task that stays at 99 % is read as an overdue one (not every second for ever).
		const stuck = [
			{ at: 60_000, progress: 99 },
			{ at: 61_000, progress: 99 },
		];
		expect(nextPollDelay({ now: 61_000, observations: stuck })).toBeGreaterThan(
			DEFAULT_POLL_SCHEDULE.almostDoneDelayMs,
		);
		// Progress below 90 % leaves the lone task on its 5 s step.
		expect(
			nextPollDelay({ now: 3_000, observations: [{ at: 3_000, progress: 60 }] }),
		).toBeGreaterThanOrEqual(DEFAULT_POLL_SCHEDULE.coldMinDelayMs);
	});

	it('a refused read is a read that did not happen: the next comes at its Retry-After or a short back-off', () => {
		expect(delayAfterRefusedRead(1, 1_000)).toBe(1_000);
		expect(delayAfterRefusedRead(3, 2_000)).toBe(2_000);
		// Without Retry-After: the minimum delay, doubling with each refusal in a row, capped.
		expect([1, 2, 3].map((n) => delayAfterRefusedRead(n, undefined))).toEqual([
			1_000, 2_000, 4_000,
		]);
		expect(delayAfterRefusedRead(20, undefined)).toBe(DEFAULT_POLL_SCHEDULE.maxDelayMs);
		// Far below the lone task's step after a first read refused at 5.5 s.
		expect(delayAfterRefusedRead(1, 1_000)).toBeLessThan(
			nextPollDelay({ now: 5_500, observations: [] }),
		);
	});

	it('a first read planned (or woken) past the low end of a learnt duration is made at once', () => {
		const prior: DurationPrior = { lowMs: 3_000, highMs: 3_600, samples: 1 };
		expect(nextPollDelay({ now: 3_500, observations: [], prior, role: 'follower' })).toBe(0);
		expect(nextPollDelay({ now: 1_000, observations: [], prior })).toBeGreaterThan(0);
	});

	it('a settable cap bounds every wait', () => {
		const options = { ...DEFAULT_POLL_SCHEDULE, maxDelayMs: 5_000 };
		const delay = nextPollDelay({ now: 200_000, observations: [{ at: 200_000 }] }, options);
		expect(delay).toBe(5_000);
	});

	it('without progress, backs off in proportion to the time already waited', () => {
		const early = nextPollDelay({ now: 100_000, observations: [{ at: 100_000 }] });
		const late = nextPollDelay({ now: 500_000, observations: [{ at: 500_000 }] });
		expect(early).toBe(100_000 * DEFAULT_POLL_SCHEDULE.backoffRatio);
		expect(late).toBe(
			Math.min(DEFAULT_POLL_SCHEDULE.maxDelayMs, 500_000 * DEFAULT_POLL_SCHEDULE.backoffRatio),
		);
	});

	it('backs off faster while progress is still 0 than when there is no progress at all', () => {
		const zero = nextPollDelay({ now: 20_000, observations: [{ at: 20_000, progress: 0 }] });
		const none = nextPollDelay({ now: 20_000, observations: [{ at: 20_000 }] });
		expect(zero).toBeGreaterThan(none);
	});

	it('takes 0 % as "not started" only while the status says so', () => {
		const read = (status: string) =>
			nextPollDelay({ now: 100_000, observations: [{ at: 100_000, progress: 0, status }] });
		for (const waiting of ['not_started', 'queued', 'pending'])
			expect(read(waiting)).toBe(
				Math.min(
					DEFAULT_POLL_SCHEDULE.maxDelayMs,
					100_000 * DEFAULT_POLL_SCHEDULE.zeroProgressRatio,
				),
			);
		// A service that leaves progress at 0 while it renders: the lag must stay a small share.
		expect(read('processing')).toBe(100_000 * DEFAULT_POLL_SCHEDULE.backoffRatio);
	});

	it('aims just after the finish extrapolated from steadily rising progress', () => {
		// 20% at 10 s, 40% at 20 s: done at 50 s.
		const observations = [
			{ at: 10_000, progress: 20 },
			{ at: 20_000, progress: 40 },
		];
		const prediction = predictFinish(observations, true);
		expect(prediction?.finishAt).toBeCloseTo(50_000, -2);
		expect(prediction?.confident).toBe(true);
		const delay = nextPollDelay({ now: 20_000, observations });
		expect(20_000 + delay).toBeGreaterThanOrEqual(50_000);
		// ...but never further than the cap in one step.
		expect(delay).toBeLessThanOrEqual(DEFAULT_POLL_SCHEDULE.maxDelayMs);
	});

	it('takes one sample for an upper bound only (the task may have queued first) and probes', () => {
		// 11% after 1 s could be a 9 s task, or a 3 s task that queued for the first 0.75 s.
		const observations = [{ at: 1_000, progress: 11 }];
		const prediction = predictFinish(observations, true);
		expect(prediction?.confident).toBe(false);
		// A scout of a batch (sooner) reads again before the 3 s task would be over...
		expect(
			1_000 + nextPollDelay({ now: 1_000, observations, role: 'scout' }, POLL_PACES.sooner),
		).toBeLessThan(3_000);
		// ...a lone task no sooner than its floor, and not as late as the 9 s bound.
		const delay = nextPollDelay({ now: 1_000, observations });
		expect(delay).toBe(DEFAULT_POLL_SCHEDULE.coldMinDelayMs);
	});

	it('does not trust a single coarse sample: 1% could mean anything from 1% to 2%', () => {
		const prediction = predictFinish([{ at: 3_000, progress: 1 }], true);
		expect(prediction?.confident).toBe(false);
	});

	it('uses the rate between samples when progress started late (queueing)', () => {
		// Progress began at 30 s; 10% at 40 s and 30% at 60 s: 1%/s, done at 130 s.
		const observations = [
			{ at: 20_000, progress: 0 },
			{ at: 40_000, progress: 10 },
			{ at: 60_000, progress: 30 },
		];
		const prediction = predictFinish(observations, true);
		expect(prediction).toBeDefined();
		expect(prediction!.finishAt).toBeGreaterThanOrEqual(125_000);
		expect(prediction!.finishAt).toBeLessThanOrEqual(140_000);
	});

	it('when overdue, re-reads soon instead of waiting a full back-off', () => {
		// 97 % at 190 s, still running at 200 s: a back-off would wait 15 s.
		const observations = [{ at: 190_000, progress: 97 }];
		const delay = nextPollDelay({ now: 200_000, observations });
		expect(delay).toBeLessThanOrEqual(0.05 * 200_000);
	});

	describe('replayed tasks (simulator-like progress)', () => {
		it.each([10_000, 60_000, 300_000])(
			'a %i ms task: at most a third of the reads of fixed 2-second polling (from 60 s up), lag at most 11%% of the duration',
			(duration) => {
				const { reads, lagMs } = replay(duration, queuedThenLinear);
				const fixedReads = Math.ceil(duration / 2_000);
				if (duration >= 60_000) expect(reads).toBeLessThanOrEqual(fixedReads / 3);
				else expect(reads).toBeLessThanOrEqual(fixedReads);
				expect(lagMs).toBeLessThanOrEqual(duration * 0.11);
			},
		);

		it.each([10_000, 60_000, 300_000])(
			'a %i ms task with linear progress: few reads, small lag',
			(duration) => {
				// Until two samples span enough progress to trust a rate, the first one is only an
				// upper bound and the task is read as one without progress: a fifth of fixed polling.
				const { reads, lagMs } = replay(duration, linearFloor);
				expect(reads).toBeLessThanOrEqual(Math.max(4, Math.ceil(duration / 2_000 / 5)));
				expect(lagMs).toBeLessThanOrEqual(duration * 0.05);
			},
		);

		it('without any progress the lag stays a bounded share of the duration', () => {
			for (const duration of [30_000, 120_000, 600_000]) {
				const { lagMs } = replay(duration, noProgress);
				expect(lagMs).toBeLessThanOrEqual(
					Math.max(
						DEFAULT_POLL_SCHEDULE.minDelayMs,
						duration * DEFAULT_POLL_SCHEDULE.backoffRatio * 1.3,
					),
				);
			}
		});
	});

	describe('with durations learnt from earlier tasks of the same kind', () => {
		/** What earlier tasks of D ± 5 % leave (midpoints of their finish intervals, 3 % margin). */
		const learnt = (D: number): DurationPrior => ({
			lowMs: 0.95 * D * 0.97,
			highMs: 1.05 * D * 1.03,
			samples: 10,
		});
		const fixed2s = (d: number) => Math.ceil(d / 2_000);

		it.each([
			[60_000, 1 / 3],
			[300_000, 1 / 3],
			[10_000, 1],
		])(
			'a %i ms kind (± 5 %%), without progress or stuck at 0: reads at most %d of fixed 2 s, lag at most 10 %%',
			(D, share) => {
				for (const progress of [noProgress, () => 0] as Progress[]) {
					for (const d of [0.95 * D, D, 1.05 * D]) {
						const { reads, lagMs } = replay(d, progress, undefined, { prior: learnt(D) });
						expect(reads).toBeLessThanOrEqual(fixed2s(d) * share);
						expect(lagMs).toBeLessThanOrEqual(0.1 * D);
					}
				}
			},
		);

		it('a task of another kind, much shorter than learnt, is still seen by the read at half the learnt time', () => {
			const { reads, lagMs } = replay(20_000, noProgress, undefined, { prior: learnt(120_000) });
			expect(reads).toBeLessThanOrEqual(3);
			expect(20_000 + lagMs).toBeLessThanOrEqual(learnt(120_000).lowMs / 2 + 1);
		});

		it("a lone task of a kind learnt to take seconds: no more reads than the users' 5 s loop (issue 46)", () => {
			const loop = (d: number) => Math.max(1, Math.ceil(d / 5_000));
			let node = 0;
			let users = 0;
			for (const d of [9_500, 9_800, 10_000, 10_200, 10_500]) {
				const { reads, lagMs } = replay(d, noProgress, undefined, { prior: learnt(10_000) });
				node += reads;
				users += loop(d);
				expect(lagMs).toBeLessThanOrEqual(1_000);
			}
			expect(node).toBeLessThanOrEqual(users);
			// In a batch (a role) the read at half stays: it catches a task of another kind early.
			const batch = replay(10_000, noProgress, undefined, {
				prior: learnt(10_000),
				role: 'follower',
			});
			expect(batch.delays[0]).toBeLessThan(learnt(10_000).lowMs);
		});

		it('a task that runs past everything learnt backs off in proportion, lag a small share', () => {
			const { lagMs } = replay(200_000, noProgress, undefined, { prior: learnt(60_000) });
			expect(lagMs).toBeLessThanOrEqual(200_000 * DEFAULT_POLL_SCHEDULE.overdueRatio * 1.2);
		});

		it('rising progress still aims at its own finish: the prior never adds reads there', () => {
			for (const D of [60_000, 300_000]) {
				const withPrior = replay(D, queuedThenLinear, undefined, { prior: learnt(D) });
				const without = replay(D, queuedThenLinear);
				expect(withPrior.reads).toBeLessThanOrEqual(without.reads);
				expect(withPrior.lagMs).toBeLessThanOrEqual(0.1 * D);
			}
		});

		it('a follower woken after the learnt low end reads at once', () => {
			const prior = learnt(60_000);
			const delay = nextPollDelay({
				now: prior.lowMs + 2_000,
				observations: [{ at: 32_000 }],
				prior,
			});
			expect(delay).toBe(0);
		});
	});

	describe("with the model's typical duration as the first prior (nothing learnt yet)", () => {
		// The video and music models' figure (models/*.ts): minutes.
		const typicalMs = 120_000;
		// No progress field, or a field stuck at 0 while the service says it is processing.
		const silent: Array<[Progress, string | undefined]> = [
			[noProgress, undefined],
			[() => 0, 'processing'],
		];

		it("does not space out a lone task's reads: the model's figure says nothing about this task's length", () => {
			for (const [progress, status] of silent) {
				for (const d of [3_000, 10_000, 60_000, 300_000]) {
					expect(replay(d, progress, undefined, { typicalMs, status }).delays).toEqual(
						replay(d, progress, undefined, { status }).delays,
					);
				}
			}
		});

		it('a model of seconds (images) is read as when nothing at all is known', () => {
			for (const d of [3_000, 10_000, 60_000]) {
				expect(replay(d, noProgress, undefined, { typicalMs: 10_000 }).delays).toEqual(
					replay(d, noProgress).delays,
				);
			}
		});

		it("a follower leaves the reading, progress included, to its batch's scouts: a safety net only", () => {
			for (const progress of [noProgress, queuedThenLinear]) {
				const { reads, delays } = replay(60_000, progress, undefined, {
					role: 'follower',
					typicalMs,
				});
				// 2 s, then a quarter of the typical duration (capped) apart, until the scouts wake it.
				expect(reads).toBeLessThanOrEqual(3);
				expect(delays.slice(1).every((d) => d >= Math.min(typicalMs / 4, 30_000))).toBe(true);
			}
			// Without the model's figure, followers keep aiming at their own progress.
			expect(
				replay(60_000, queuedThenLinear, undefined, { role: 'follower' }).reads,
			).toBeGreaterThan(3);
		});

		it('is left aside by a learnt duration, by scouts, and by rising progress once it predicts', () => {
			const prior: DurationPrior = { lowMs: 55_000, highMs: 65_000, samples: 3 };
			expect(replay(60_000, noProgress, undefined, { prior, typicalMs }).delays).toEqual(
				replay(60_000, noProgress, undefined, { prior }).delays,
			);
			expect(replay(60_000, noProgress, undefined, { role: 'scout', typicalMs }).delays).toEqual(
				replay(60_000, noProgress, undefined, { role: 'scout' }).delays,
			);
			for (const D of [60_000, 300_000]) {
				const withTypical = replay(D, queuedThenLinear, undefined, { typicalMs });
				expect(withTypical.reads).toBeLessThanOrEqual(replay(D, queuedThenLinear).reads);
				expect(withTypical.lagMs).toBeLessThanOrEqual(0.1 * D);
			}
		});
	});

	describe('a lone task with nothing to aim at is not seen late, whatever its length', () => {
		// The lag targets (issue 37): median ≤ max(2.5 s, 5 %) and p90 ≤ max(4.5 s, 10 %) of the
		// task's duration, the users' 5 s loop's own lag on short tasks. Without progress nor
		// anything learnt the task may end at any moment, so they must hold over every length,
		// not only where a benchmark happens to look.
		const medianBound = (d: number) => Math.max(2_500, 0.05 * d);
		const p90Bound = (d: number) => Math.max(4_500, 0.1 * d);
		/** Lengths from 1 s to 1 h, log-spaced and dense, so no read pattern hides between them. */
		const SHORTEST_MS = 1_000;
		const LONGEST_MS = 3_600_000;
		const lengths = Array.from({ length: 600 }, (_, i) =>
			Math.round(SHORTEST_MS * (LONGEST_MS / SHORTEST_MS) ** (i / 599)),
		);
		/** The users' HTTP Request + Wait loop: a read every 5 s. */
		const USERS_LOOP_MS = 5_000;
		const silent: Array<[Progress, string | undefined]> = [
			[noProgress, undefined],
			[() => 0, 'processing'],
		];

		it('every task is seen within max(5 s, 10 %) of its end (the 5 s loop: 5 s), at most a tenth past max(4.5 s, 10 %)', () => {
			for (const [progress, status] of silent) {
				const lags = lengths.map((d) => [d, replay(d, progress, undefined, { status }).lagMs]);
				expect(lags.filter(([d, lag]) => lag > Math.max(5_000, 0.1 * d))).toEqual([]);
				const late = lags.filter(([d, lag]) => lag > p90Bound(d));
				expect(late.length / lengths.length).toBeLessThanOrEqual(0.1);
			}
			// The sooner pace: every task within max(2.5 s, 10 %), as issue 30 set.
			for (const [progress, status] of silent) {
				const late = lengths.filter(
					(d) =>
						replay(d, progress, undefined, { status, options: POLL_PACES.sooner }).lagMs >
						Math.max(2_500, 0.1 * d),
				);
				expect(late).toEqual([]);
			}
		});

		it('at least half of them within max(2.5 s, 5 %)', () => {
			for (const [progress, status] of silent) {
				const late = lengths.filter(
					(d) => replay(d, progress, undefined, { status }).lagMs > medianBound(d),
				);
				expect(late.length / lengths.length).toBeLessThanOrEqual(0.5);
			}
		});

		it('a first read at low progress (an upper bound far off) does not delay the next read beyond the back-off', () => {
			// 2 % after 2.5 s bounds the finish at about 2 minutes, but a task that queued first may
			// end in seconds: it is read as one without progress until a rate can be trusted.
			for (const options of [DEFAULT_POLL_SCHEDULE, POLL_PACES.sooner]) {
				for (const at of [2_500, 5_500, 40_000, 120_000]) {
					const withBound = nextPollDelay(
						{ now: at, observations: [{ at, progress: 2 }] },
						options,
					);
					const without = nextPollDelay({ now: at, observations: [{ at }] }, options);
					expect(withBound).toBeLessThanOrEqual(without);
				}
			}
		});

		it('the 300 MB Generate of issue 30: a lone 10 s video whose first read comes 0.6 s late, at low progress, is still seen within 2.5 s', () => {
			// The simulator's curve (queued for the first quarter, then linear); each read lands
			// 0.6 s after the planned moment, as under load. Before issue 30 the first read's upper
			// bound (minutes away) made the next read wait 30 s: 2 reads, seen 23 s late.
			const d = 10_000;
			for (const options of [POLL_PACES.sooner, DEFAULT_POLL_SCHEDULE]) {
				const observations: PollObservation[] = [];
				let now = 0;
				let reads = 0;
				for (;;) {
					now +=
						nextPollDelay({ now, observations, role: 'solo', typicalMs: 120_000 }, options) + 600;
					reads++;
					if (now >= d) break;
					observations.push({ at: now, progress: queuedThenLinear(now, d), status: 'processing' });
				}
				// The sooner pace reads first at low progress, the case of issue 30.
				if (options === POLL_PACES.sooner) expect(observations[0].progress).toBeLessThanOrEqual(10);
				expect(now - d).toBeLessThanOrEqual(2_500);
				expect(reads).toBeLessThanOrEqual(Math.ceil(d / 2_000));
			}
		});

		it("never more reads than the users' 5 s loop, and far fewer on long tasks (the trade-off in docs/performance.md)", () => {
			const loop = (d: number) => Math.ceil(d / USERS_LOOP_MS);
			expect([lengths[0], lengths[lengths.length - 1]]).toEqual([SHORTEST_MS, LONGEST_MS]);
			for (const d of lengths)
				expect(replay(d, noProgress).reads).toBeLessThanOrEqual(Math.ceil(d / USERS_LOOP_MS));
			expect(replay(300_000, noProgress).reads).toBeLessThanOrEqual(0.6 * loop(300_000));
			expect(replay(3_600_000, noProgress).reads).toBeLessThanOrEqual(0.25 * loop(3_600_000));
		});

		it('the paces order reads and lag: sooner reads more and sees sooner, fewer requests the reverse', () => {
			for (const d of [30_000, 60_000, 300_000]) {
				const [sooner, balanced, fewer] = (['sooner', 'balanced', 'fewer'] as const).map((pace) =>
					lengths
						.filter((x) => x >= 0.9 * d && x <= 1.1 * d)
						.map((x) => replay(x, noProgress, undefined, { options: POLL_PACES[pace] })),
				);
				const mean = (runs: typeof sooner, key: 'reads' | 'lagMs') =>
					runs.reduce((sum, r) => sum + r[key], 0) / runs.length;
				expect(mean(sooner, 'reads')).toBeGreaterThan(mean(balanced, 'reads'));
				expect(mean(balanced, 'reads')).toBeGreaterThan(mean(fewer, 'reads'));
				expect(mean(sooner, 'lagMs')).toBeLessThan(mean(fewer, 'lagMs'));
			}
			expect(POLL_PACES.balanced).toBe(DEFAULT_POLL_SCHEDULE);
		});
	});

	describe('roles while nothing is learnt', () => {
		it('a follower reads far less than a lone task; a scout more often, with a smaller lag', () => {
			for (const D of [60_000, 300_000]) {
				const solo = replay(D, noProgress);
				const follower = replay(D, noProgress, undefined, { role: 'follower' });
				const scout = replay(D, noProgress, undefined, { role: 'scout' });
				expect(follower.reads).toBeLessThan(solo.reads * 0.6);
				expect(scout.reads).toBeGreaterThan(solo.reads);
				expect(scout.lagMs).toBeLessThanOrEqual(0.1 * D);
			}
		});
	});
});
