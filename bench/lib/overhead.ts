// Node overhead per item: 1,000 items, the service answering at once (tasks of 0 ms), with the
// simulator and the measured engine in separate processes.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { startChild } from './child';

export interface OverheadResult {
	items: number;
	wallMs: number;
	/** CPU time of the whole engine process (user + system) during the run. */
	cpuMs: number;
	/** Sampled self time by where the code lives (node = this package's files). */
	selfMs: Record<string, number>;
	/** The node's own code (package files + zod validation) per item. */
	nodeOwnMsPerItem: number;
	/** Everything on the CPU in the engine process, per item: an upper bound. */
	processCpuMsPerItem: number;
	topNodeFunctionsMs: Record<string, number>;
	/** Where the "other" samples came from (packages or files). */
	topOtherMs: Record<string, number>;
}

export async function overheadBenchmark(items = 1000): Promise<OverheadResult> {
	const sim = startChild('sim-server.ts', { SIM_DURATION_MS: '0' });
	try {
		const ready = await sim.next<{ baseUrl: string; apiKey: string }>('ready');
		const child = startChild('overhead-child.ts', {
			BENCH_ITEMS: String(items),
			BENCH_SIM: JSON.stringify({ baseUrl: ready.baseUrl, apiKey: ready.apiKey }),
			MGEN_HARNESS_SOURCE: process.env.MGEN_HARNESS_SOURCE ?? 'dist',
		});
		const m = await Promise.race([
			child.next<Record<string, never>>('result'),
			child.next<{ message: string }>('error').then((e) => {
				throw new Error(`overhead child: ${e.message}`);
			}),
		]);
		await child.exited;
		const selfMs = m.selfMs as Record<string, number>;
		const cpuMs = (m.cpuUserMs as number) + (m.cpuSystemMs as number);
		return {
			items,
			wallMs: m.wallMs,
			cpuMs,
			selfMs,
			nodeOwnMsPerItem: ((selfMs.node ?? 0) + (selfMs.zod ?? 0)) / items,
			processCpuMsPerItem: cpuMs / items,
			topNodeFunctionsMs: m.topNodeFunctionsMs,
			topOtherMs: m.topOtherMs,
		};
	} finally {
		sim.send({ type: 'close' });
		await sim.exited;
	}
}
