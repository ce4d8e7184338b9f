// Batch speed through the real engine, and the check of the simulated polling loop against
// real HTTP. Both run in this process with the simulator in it: they measure wall time of
// I/O-bound waiting, not CPU.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { runWorkflow } from '../../test/harness';
import { startChild } from './child';
import { startSimulator, type Simulator } from '../../test/simulator';
import { adaptiveSchedule, simulateTask } from './polling';
import {
	BATCH_FILE_BYTES,
	GENERATION_NODE,
	SMALL_FILE_BYTES,
	generationWorkflow,
} from './workflow';

export interface BatchResult {
	tasks: number;
	taskMs: number;
	defaultConcurrency: number | undefined;
	/** Wall time of the 50-task batch with the node's default limit. */
	concurrentMs: number;
	concurrentOk: number;
	/** Tasks actually run one after another (concurrency 1), and their wall time. */
	serialMeasuredTasks: number;
	serialMeasuredMs: number;
	/** serialMeasuredMs scaled to the whole batch (measured per task × tasks). */
	serialExtrapolatedMs: number;
	serialOk: number;
	speedup: number;
	concurrentOverT: number;
}

function credentials(sim: Simulator) {
	// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
	return {
		mediaGenerationApi: { apiKey: sim.apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
	};
}

async function runBatch(sim: Simulator, count: number, taskMs: number, concurrency?: number) {
	const items = Array.from({ length: count }, (_, i) => ({
		prompt: `batch ${i} [sim:duration=${taskMs}] [sim:files=1] [sim:size=${BATCH_FILE_BYTES}]`,
	}));
	const result = await runWorkflow(
		generationWorkflow({ concurrency, onError: 'continueErrorOutput' }),
		{
			credentials: credentials(sim),
			items,
		},
	);
	const ok = result
		.outputOf(GENERATION_NODE, 0)
		.filter((item) => item.json.task_id && item.binary?.data);
	if (ok.length !== count) {
		const errors = result.outputOf(GENERATION_NODE, 1).map((e) => e.json.error ?? e.json);
		throw new Error(
			`batch of ${count}: ${ok.length} results; errors: ${JSON.stringify(errors).slice(0, 800)} ${result.error?.message ?? ''}`,
		);
	}
	return { ms: result.durationMs, ok: ok.length };
}

/** The default of the node's concurrency option, read from its description. */
export async function nodeDefaultConcurrency(): Promise<number | undefined> {
	const { nodeTypes, MEDIA_GENERATION_TYPE } = await import('../../test/harness');
	const type = nodeTypes.getByNameAndVersion(MEDIA_GENERATION_TYPE, 1);
	const find = (props: unknown[]): number | undefined => {
		for (const p of props as Array<{
			name?: string;
			default?: unknown;
			options?: unknown[];
			values?: unknown[];
		}>) {
			if (p.name === 'maxConcurrentTasks' && typeof p.default === 'number') return p.default;
			const nested = p.options ?? p.values;
			if (Array.isArray(nested)) {
				const found = find(nested);
				if (found !== undefined) return found;
			}
		}
		return undefined;
	};
	return find(type.description.properties);
}

export async function batchBenchmark(
	tasks = 50,
	taskMs = 5_000,
	serialTasks = 5,
): Promise<BatchResult> {
	const sim = await startSimulator({ seed: 6 });
	try {
		// Warm-up (module loading, JIT) so that neither arm pays it.
		await runBatch(sim, 2, 200);
		const concurrent = await runBatch(sim, tasks, taskMs);
		const serial = await runBatch(sim, serialTasks, taskMs, 1);
		const serialExtrapolatedMs = (serial.ms / serialTasks) * tasks;
		return {
			tasks,
			taskMs,
			defaultConcurrency: await nodeDefaultConcurrency(),
			concurrentMs: concurrent.ms,
			concurrentOk: concurrent.ok,
			serialMeasuredTasks: serialTasks,
			serialMeasuredMs: serial.ms,
			serialExtrapolatedMs,
			serialOk: serial.ok,
			speedup: serialExtrapolatedMs / concurrent.ms,
			concurrentOverT: concurrent.ms / taskMs,
		};
	} finally {
		await sim.close();
	}
}

export interface PollingCheckRow {
	durationMs: number;
	real: { requests: number; lagMs: number };
	simulated: { requests: number; lagMs: number };
}

/**
 * Runs a few tasks for real (node, engine, HTTP, real time) and the same durations on the
 * simulated clock: the request counts should agree, the lags differ by HTTP latency only.
 */
export async function validatePollingOverHttp(
	durations = [8_000, 12_000, 20_000],
): Promise<PollingCheckRow[]> {
	const sim = await startSimulator({ seed: 6 });
	try {
		// One execution per task, run side by side: each task waits alone (a batch would share
		// what it learns, and is checked by validateBatchPollingOverHttp).
		const results = await Promise.all(
			durations.map((d, i) =>
				runWorkflow(generationWorkflow({ onError: 'continueErrorOutput' }), {
					credentials: credentials(sim),
					items: [
						{
							prompt: `polling check ${i} [sim:duration=${d}] [sim:files=1] [sim:size=${SMALL_FILE_BYTES}]`,
						},
					],
				}),
			),
		);
		const real = new Map<number, { requests: number; lagMs: number }>();
		for (const [index, result] of results.entries()) {
			const item = result.outputOf(GENERATION_NODE, 0)[0];
			if (!item) continue;
			const task = sim.task(String(item.json.task_id))!;
			const reads = sim.requests.filter((r) => r.endpoint === 'status' && r.taskId === task.id);
			const seen = reads.find((r) => r.at >= task.createdAt + task.durationMs);
			real.set(index, {
				requests: reads.length,
				lagMs: seen ? seen.at - (task.createdAt + task.durationMs) : Number.NaN,
			});
		}
		const simulated = await startSimulator({ seed: 6 });
		try {
			const rows: PollingCheckRow[] = [];
			for (const [i, d] of durations.entries()) {
				const s = await simulateTask(simulated, d, adaptiveSchedule);
				rows.push({
					durationMs: d,
					real: real.get(i) ?? { requests: Number.NaN, lagMs: Number.NaN },
					simulated: { requests: s.requests, lagMs: s.lagMs },
				});
			}
			return rows;
		} finally {
			await simulated.close();
		}
	} finally {
		await sim.close();
	}
}

export interface LargeBatchResult {
	items: number;
	inFlight: number;
	taskMs: number;
	wallMs: number;
	wallOverT: number;
	/** CPU time (user + system) of the engine process during the batch. */
	cpuMs: number;
	/** Peak RSS of the engine process minus its RSS before the batch (kernel VmHWM when available). */
	rssGrowthBytes: number;
	heapGrowthBytes: number;
	/** rssGrowthBytes / inFlight. */
	bytesPerTaskInFlight: number;
	/** V8 heap held per task in flight after a forced full GC at T/2 (all tasks waiting). */
	heldHeapPerTaskBytes: number | null;
	/** RSS above the baseline at that moment. */
	heldRssBytes: number | null;
	statusReads: number;
	submits: number;
	/** The service's view, from the first submission: when the last one arrived... */
	lastSubmitMs: number;
	/** ...and when the last file was requested. */
	lastFileMs: number;
}

/**
 * `items` tasks of `taskMs` with Max Tasks in Flight = `inFlight`: the engine and the node in one
 * child process, the simulator in another (its memory and CPU are not the node's).
 */
export async function largeBatchBenchmark(
	items = 1000,
	taskMs = 20_000,
	inFlight = items,
): Promise<LargeBatchResult> {
	const sim = startChild('sim-server.ts', { SIM_DURATION_MS: String(taskMs) });
	try {
		const ready = await sim.next<{ baseUrl: string; apiKey: string }>('ready');
		const child = startChild('batch-child.ts', {
			BENCH_ITEMS: String(items),
			BENCH_IN_FLIGHT: String(inFlight),
			BENCH_TASK_MS: String(taskMs),
			BENCH_SIM: JSON.stringify({ baseUrl: ready.baseUrl, apiKey: ready.apiKey }),
			MGEN_HARNESS_SOURCE: process.env.MGEN_HARNESS_SOURCE ?? 'dist',
		});
		const failed = child.next<{ message: string }>('error').then((e) => {
			throw new Error(`large batch child: ${e.message}`);
		});
		await Promise.race([child.next('warm'), failed]);
		sim.send({ type: 'counts' });
		const before = await sim.next<{ submit: number; status: number }>('counts');
		sim.send({ type: 'mark' });
		child.send({ type: 'go' });
		const m = await Promise.race([child.next<Record<string, number>>('result'), failed]);
		await child.exited;
		sim.send({ type: 'counts' });
		const after = await sim.next<{ submit: number; status: number }>('counts');
		sim.send({ type: 'timeline' });
		const timeline = await sim.next<{
			lastSubmitMs: number;
			lastStatusMs: number;
			lastFileMs: number;
		}>('timeline');
		const peak = m.peakRssHwm ?? m.peakRssSampled;
		const rssGrowthBytes = Math.max(peak, m.peakRssSampled) - m.baselineRss;
		return {
			items,
			inFlight,
			taskMs,
			wallMs: m.wallMs,
			wallOverT: m.wallMs / taskMs,
			cpuMs: m.cpuMs,
			rssGrowthBytes,
			heapGrowthBytes: m.peakHeap - m.baselineHeap,
			bytesPerTaskInFlight: rssGrowthBytes / inFlight,
			heldHeapPerTaskBytes: m.heldHeapAfterGc === null ? null : m.heldHeapAfterGc / inFlight,
			heldRssBytes: m.heldRssAfterGc,
			statusReads: after.status - before.status,
			submits: after.submit - before.submit,
			lastSubmitMs: timeline.lastSubmitMs,
			lastFileMs: timeline.lastFileMs,
		};
	} finally {
		sim.send({ type: 'close' });
		await sim.exited;
	}
}

export interface BatchCheckRow {
	mode: 'reported' | 'absent';
	tasks: number;
	taskMs: number;
	inFlight: number;
	real: { readsMean: number; lagMedianMs: number };
	simulated: { readsMean: number; lagMedianMs: number };
}

/**
 * A batch for real (engine, HTTP, wall clock: scouts, followers, the shared learner) and the
 * same durations on the simulated clock: the mean reads should agree, the lags differ by HTTP
 * latency and timer slack only.
 */
export async function validateBatchPollingOverHttp(
	tasks = 12,
	taskMs = 8_000,
	inFlight = 6,
	mode: 'reported' | 'absent' = 'absent',
): Promise<BatchCheckRow> {
	const { simulateBatch } = await import('./polling');
	const { median } = await import('./stats');
	const sim = await startSimulator({ seed: 6 });
	try {
		const items = Array.from({ length: tasks }, (_, i) => ({
			prompt: `batch check ${i} [sim:duration=${taskMs}] [sim:files=1] [sim:size=${SMALL_FILE_BYTES}]${mode === 'absent' ? ' [sim:progress=none]' : ''}`,
		}));
		const result = await runWorkflow(
			generationWorkflow({ concurrency: inFlight, onError: 'continueErrorOutput' }),
			{
				credentials: credentials(sim),
				items,
			},
		);
		const reads: number[] = [];
		const lags: number[] = [];
		for (const item of result.outputOf(GENERATION_NODE, 0)) {
			const task = sim.task(String(item.json.task_id))!;
			const own = sim.requests.filter((r) => r.endpoint === 'status' && r.taskId === task.id);
			const seen = own.find((r) => r.at >= task.createdAt + task.durationMs);
			reads.push(own.length);
			if (seen) lags.push(seen.at - (task.createdAt + task.durationMs));
		}
		if (reads.length !== tasks)
			throw new Error(`batch check: ${reads.length} of ${tasks} tasks finished`);
		const simulated = await simulateBatch(
			sim,
			Array.from({ length: tasks }, () => taskMs),
			{ limit: inFlight, mode, policy: 'node' },
		);
		return {
			mode,
			tasks,
			taskMs,
			inFlight,
			real: {
				readsMean: reads.reduce((a, b) => a + b, 0) / reads.length,
				lagMedianMs: median(lags),
			},
			simulated: {
				readsMean: simulated.reduce((a, b) => a + b.requests, 0) / simulated.length,
				lagMedianMs: median(simulated.map((s) => s.lagMs)),
			},
		};
	} finally {
		await sim.close();
	}
}
