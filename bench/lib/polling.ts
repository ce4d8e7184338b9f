// Polling cost and completion lag on a simulated clock.
//
// Waiting 300 s for real per sample is not an option, so the node's own schedule function
// (nodes/shared/schedule.ts, the code the node runs between status reads) is driven against the
// simulator's own task model: each read advances the simulator's clock to the moment of the
// read and takes the task as the status endpoint would answer then (`sim.view`). The simulated
// loop is checked against one real run over HTTP by `validatePollingOverHttp` (bench/lib/batch.ts).
import {
	DEFAULT_POLL_SCHEDULE,
	nextPollDelay,
	type PollObservation,
} from '../../nodes/shared/schedule';
import { startSimulator, type Simulator } from '../../test/simulator';
import { median, quantile, seeded } from './stats';

export type Schedule = (now: number, observations: PollObservation[]) => number;

/** The node's schedule, called the way the node's wait loop calls it. */
export const adaptiveSchedule: Schedule = (now, observations) =>
	nextPollDelay({ now, observations, originKnown: true }, DEFAULT_POLL_SCHEDULE);

/** The common choice in other nodes and tutorials: a read every 2 s. */
export const fixedSchedule =
	(everyMs: number): Schedule =>
	() =>
		everyMs;

/**
 * What the service says about progress: the simulator's rising percentage; no progress field at
 * all; or a field stuck at 0 until the end (the spec shows no progress semantics beyond 100 when
 * finished, so each is plausible).
 */
export type ProgressMode = 'reported' | 'absent' | 'zero';

export interface PollRun {
	durationMs: number;
	requests: number;
	/** From the task's end on the service to the read that saw it ended. */
	lagMs: number;
}

export interface PollingRow {
	durationMs: number;
	samples: number;
	progress: ProgressMode;
	adaptive: { requestsMedian: number; requestsMean: number; lagMedianMs: number; lagP90Ms: number };
	fixed2s: { requestsMedian: number; requestsMean: number; lagMedianMs: number; lagP90Ms: number };
	/** adaptive mean requests / fixed-2 s mean requests. */
	requestRatio: number;
	/** adaptive median lag / nominal duration. */
	lagShare: number;
}

async function submit(sim: Simulator, durationMs: number): Promise<string> {
	const res = await fetch(`${sim.baseUrl}/api/generate/submit`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${sim.apiKey}`, 'Content-Type': 'application/json' },
		body: JSON.stringify({
			model: sim.videoModelId,
			input: { prompt: `bench polling [sim:duration=${durationMs}]` },
		}),
	});
	const body = (await res.json()) as { data?: { task_id?: string } };
	if (!res.ok || !body.data?.task_id) throw new Error(`submit failed: ${res.status}`);
	return body.data.task_id;
}

/**
 * One task on the simulated clock: reads at the times the schedule asks for, until the status is
 * final, seeing progress as `mode` says.
 */
export async function simulateTask(
	sim: Simulator,
	durationMs: number,
	schedule: Schedule,
	mode: ProgressMode = 'reported',
): Promise<PollRun> {
	const id = await submit(sim, durationMs);
	const task = sim.task(id)!;
	const observations: PollObservation[] = [];
	let now = 0;
	let requests = 0;
	for (;;) {
		now += schedule(now, observations);
		// Move the simulator's clock so that the task has aged exactly `now` ms.
		sim.clock.advance(task.createdAt + now - sim.clock.now());
		const view = sim.view(id)!;
		requests++;
		if (view.status === 'finished' || view.status === 'failed') {
			return { durationMs, requests, lagMs: now - durationMs };
		}
		const progress =
			mode === 'reported' ? (view.progress as number) : mode === 'zero' ? 0 : undefined;
		observations.push({
			at: now,
			status: String(view.status),
			...(progress === undefined ? {} : { progress }),
		});
		if (requests > 100_000) throw new Error('schedule never reached the end of the task');
	}
}

function summarise(runs: PollRun[]) {
	const req = runs.map((r) => r.requests);
	const lag = runs.map((r) => r.lagMs);
	return {
		requestsMedian: median(req),
		requestsMean: req.reduce((a, b) => a + b, 0) / req.length,
		lagMedianMs: median(lag),
		lagP90Ms: quantile(lag, 0.9),
	};
}

/**
 * For each nominal duration D, `samples` tasks with durations spread over D ± 5% (so that fixed
 * polling is not flattered by a duration that is an exact multiple of its interval), each run
 * once with the node's schedule and once with fixed 2 s polling.
 */
export async function pollingBenchmark(
	durations = [10_000, 60_000, 300_000],
	samples = 101,
): Promise<PollingRow[]> {
	const sim = await startSimulator({ seed: 6 });
	try {
		const rows: PollingRow[] = [];
		for (const progress of ['reported', 'absent', 'zero'] as const) {
			for (const D of durations) {
				const random = seeded(D);
				const adaptive: PollRun[] = [];
				const fixed: PollRun[] = [];
				for (let i = 0; i < samples; i++) {
					const d = Math.round(D * (0.95 + 0.1 * random()));
					adaptive.push(await simulateTask(sim, d, adaptiveSchedule, progress));
					fixed.push(await simulateTask(sim, d, fixedSchedule(2_000), progress));
				}
				const a = summarise(adaptive);
				const f = summarise(fixed);
				rows.push({
					durationMs: D,
					samples,
					progress,
					adaptive: a,
					fixed2s: f,
					requestRatio: a.requestsMean / f.requestsMean,
					lagShare: a.lagMedianMs / D,
				});
			}
		}
		return rows;
	} finally {
		await sim.close();
	}
}
