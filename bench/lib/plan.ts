// What `npm run bench` runs, in one place: bench/run.ts takes its sizes and counts from here,
// and test/engine/bench-quick.test.ts holds every execution of the full plan against the limits
// the node applies (per file, per task, per execution), so that a new limit cannot break the
// full benchmark without failing `npm test` (issue 37: a fixed 4 GiB per-task limit did).
import type { IDataObject } from 'n8n-workflow';

import { memoryPlan, type MemoryPlanEntry } from './memory';
import { BATCH_FILE_BYTES, SMALL_FILE_BYTES, maxFileSizeMbFor } from './workflow';

export interface BenchPlan {
	/** Section 1: `tasks` at once against `serialTasks` one after another, each `taskMs`. */
	batch: { tasks: number; taskMs: number; serialTasks: number };
	/** Section 1b: Max Tasks in Flight = items. */
	largeBatches: Array<{ items: number; taskMs: number }>;
	/** Sections 2 and 2b, checked for real over HTTP: lone tasks, and one batch. */
	pollingChecks: { loneMs: number[]; batch: { tasks: number; taskMs: number; inFlight: number } };
	/** Section 3: one file per task. */
	memory: MemoryPlanEntry[];
	/** Section 4: items at once, tasks of 0 ms. */
	overhead: { items: number };
}

export function benchPlan(quick: boolean): BenchPlan {
	return quick
		? {
				batch: { tasks: 4, taskMs: 500, serialTasks: 1 },
				largeBatches: [{ items: 20, taskMs: 1_000 }],
				pollingChecks: { loneMs: [1_500], batch: { tasks: 4, taskMs: 1_500, inFlight: 2 } },
				memory: memoryPlan(true),
				overhead: { items: 50 },
			}
		: {
				batch: { tasks: 50, taskMs: 5_000, serialTasks: 5 },
				largeBatches: [
					{ items: 1000, taskMs: 20_000 },
					{ items: 1000, taskMs: 60_000 },
				],
				pollingChecks: {
					loneMs: [8_000, 12_000, 20_000],
					batch: { tasks: 12, taskMs: 8_000, inFlight: 6 },
				},
				memory: memoryPlan(false),
				overhead: { items: 1000 },
			};
}

/** One execution of the Media Generation node that the plan runs. */
export interface PlannedExecution {
	bench: string;
	/** Items of the execution: tasks submitted by one node run. */
	items: number;
	filesPerTask: number;
	fileBytes: number;
	taskMs: number;
	/** The node's Options collection, as the benchmark's workflow sets it. */
	options: IDataObject;
}

/** Every execution of the plan, with the options its workflow gives the node. */
export function plannedExecutions(plan: BenchPlan): PlannedExecution[] {
	const run = (
		bench: string,
		items: number,
		taskMs: number,
		fileBytes: number,
		options: IDataObject = {},
	): PlannedExecution => ({ bench, items, filesPerTask: 1, fileBytes, taskMs, options });
	const { batch, largeBatches, pollingChecks, memory, overhead } = plan;
	return [
		run('batch', batch.tasks, batch.taskMs, BATCH_FILE_BYTES),
		run('batch, one at a time', batch.serialTasks, batch.taskMs, BATCH_FILE_BYTES, {
			maxConcurrentTasks: 1,
		}),
		...largeBatches.map((b) =>
			run('large batch', b.items, b.taskMs, SMALL_FILE_BYTES, { maxConcurrentTasks: b.items }),
		),
		...pollingChecks.loneMs.map((ms) => run('polling check', 1, ms, SMALL_FILE_BYTES)),
		run(
			'polling check, batch',
			pollingChecks.batch.tasks,
			pollingChecks.batch.taskMs,
			SMALL_FILE_BYTES,
			{ maxConcurrentTasks: pollingChecks.batch.inFlight },
		),
		...memory.map((m) => run('memory', 1, 0, m.size, { maxFileSizeMb: maxFileSizeMbFor(m.size) })),
		run('overhead', overhead.items, 0, SMALL_FILE_BYTES, { maxConcurrentTasks: overhead.items }),
	];
}
