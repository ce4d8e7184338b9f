// Streaming memory: peak RSS growth of a process that runs the node on one download of 10 MB,
// 100 MB and 1 GB in n8n's filesystem binary mode (one fresh process per download, each size
// repeated: the peak depends on when V8 collects garbage, so one run per size is not enough).
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { startSimulator } from '../../test/simulator';
import { startChild } from './child';

export interface MemoryRow {
	sizeBytes: number;
	/** 1-based repeat of this size. */
	run: number;
	written: number;
	/** Whole workflow run, including the schedule's wait before the first status read. */
	durationMs: number;
	baselineRss: number;
	/** Kernel peak RSS (VmHWM, reset at the baseline) minus the baseline. */
	growthHwm?: number;
	/** Highest RSS sampled every 5 ms minus the baseline (cross-check). */
	growthSampled: number;
	/** Above the baseline at the sampled peak: V8 heap in use, and Buffers outside the heap. */
	atPeak: { heapUsed: number; external: number; arrayBuffers: number };
}

export async function memoryBenchmark(
	sizes = [10e6, 100e6, 1e9],
	gcEveryMs = 0,
	repeats = 3,
): Promise<MemoryRow[]> {
	const sim = await startSimulator({ seed: 6 });
	try {
		const rows: MemoryRow[] = [];
		// Sizes interleaved (10 MB, 100 MB, 1 GB, 10 MB, ...) so that a noisy moment on the
		// machine does not fall on one size only.
		const plan = Array.from({ length: repeats }, (_, r) => sizes.map((size) => ({ size, run: r + 1 }))).flat();
		for (const { size, run } of plan) {
			const child = startChild('memory-child.ts', {
				BENCH_SIZE: String(Math.round(size)),
				BENCH_GC_EVERY_MS: String(gcEveryMs),
				BENCH_SIM: JSON.stringify({ baseUrl: sim.baseUrl, apiKey: sim.apiKey }),
				MGEN_HARNESS_SOURCE: process.env.MGEN_HARNESS_SOURCE ?? 'dist',
			});
			const m = await Promise.race([
				child.next<Record<string, number> & { atPeak: MemoryRow['atPeak'] }>('result'),
				child.next<{ message: string }>('error').then((e) => {
					throw new Error(`memory child (${size} B): ${e.message}`);
				}),
			]);
			await child.exited;
			rows.push({
				sizeBytes: m.size,
				run,
				written: m.written,
				durationMs: m.durationMs,
				baselineRss: m.baseline,
				growthHwm: m.hwm !== undefined ? m.hwm - m.baseline : undefined,
				growthSampled: m.sampledPeak - m.baseline,
				atPeak: m.atPeak,
			});
		}
		return rows;
	} finally {
		await sim.close();
	}
}
