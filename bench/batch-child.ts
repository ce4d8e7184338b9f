// A large batch in a process of its own (started by bench/lib/batch.ts): N items, N in flight,
// tasks of T ms on the simulator (another process), so that the RSS measured here is the engine
// and the node only. Reports wall time, peak RSS growth over the idle baseline, and reads.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';

import { runWorkflow, setBinaryMode } from '../test/harness';
import { GENERATION_NODE, SMALL_FILE_BYTES, generationWorkflow } from './lib/workflow';

/** Kernel's peak RSS of this process (VmHWM), resettable through clear_refs; undefined elsewhere. */
function highWaterMark(): number | undefined {
	try {
		const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
		return m ? Number(m[1]) * 1024 : undefined;
	} catch {
		return undefined;
	}
}

function resetHighWaterMark(): boolean {
	try {
		fs.writeFileSync('/proc/self/clear_refs', '5');
		return true;
	} catch {
		return false;
	}
}

async function main() {
	const items = Number(process.env.BENCH_ITEMS ?? 1000);
	const inFlight = Number(process.env.BENCH_IN_FLIGHT ?? items);
	const taskMs = Number(process.env.BENCH_TASK_MS ?? 20_000);
	const { baseUrl, apiKey } = JSON.parse(process.env.BENCH_SIM!) as {
		baseUrl: string;
		apiKey: string;
	};
	await setBinaryMode('filesystem');
	const run = (n: number, limit: number, ms: number, tag: string) =>
		runWorkflow(generationWorkflow({ concurrency: limit, onError: 'continueErrorOutput' }), {
			// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
			credentials: { mediaGenerationApi: { apiKey, baseUrl, allowPrivateFileHosts: true } },
			items: Array.from({ length: n }, (_, i) => ({
				prompt: `${tag} ${i} [sim:duration=${ms}] [sim:files=1] [sim:size=${SMALL_FILE_BYTES}]`,
			})),
		});
	// Warm-up: loads and JIT-compiles everything once, and fills the HTTP agents' pools.
	await run(100, 100, 500, 'warm-up');
	// The parent reads the simulator's request counts now, then says go.
	const go = new Promise((resolve) => process.once('message', resolve));
	process.send!({ type: 'warm' });
	await go;
	global.gc?.();
	await new Promise((r) => setTimeout(r, 200));
	global.gc?.();
	const baseline = process.memoryUsage();
	const hwmReset = resetHighWaterMark();
	let peakSampled = baseline.rss;
	let peakHeap = baseline.heapUsed;
	const sampler = setInterval(() => {
		const m = process.memoryUsage();
		peakSampled = Math.max(peakSampled, m.rss);
		peakHeap = Math.max(peakHeap, m.heapUsed);
	}, 50);
	// Halfway through the tasks every one is submitted and waiting: a forced full GC then leaves
	// only what is really held per task in flight (the peak above also holds garbage).
	let held: { rss: number; heapUsed: number } | undefined;
	const probe = setTimeout(() => {
		global.gc?.();
		const m = process.memoryUsage();
		held = { rss: m.rss - baseline.rss, heapUsed: m.heapUsed - baseline.heapUsed };
	}, taskMs / 2);
	const cpu0 = process.cpuUsage();
	const t0 = performance.now();
	const result = await run(items, inFlight, taskMs, 'large batch');
	clearTimeout(probe);
	const wallMs = performance.now() - t0;
	const cpu = process.cpuUsage(cpu0);
	clearInterval(sampler);
	const hwm = hwmReset ? highWaterMark() : undefined;
	const ok = result.outputOf(GENERATION_NODE, 0).filter((i) => i.binary?.data).length;
	const errors = result.outputOf(GENERATION_NODE, 1);
	if (ok !== items) {
		throw new Error(
			`${ok} results and ${errors.length} errors for ${items} items: ${JSON.stringify(errors.slice(0, 3).map((e) => e.json))}`,
		);
	}
	process.send!({
		type: 'result',
		items,
		inFlight,
		taskMs,
		wallMs,
		cpuMs: (cpu.user + cpu.system) / 1000,
		baselineRss: baseline.rss,
		peakRssSampled: peakSampled,
		peakRssHwm: hwm ?? null,
		baselineHeap: baseline.heapUsed,
		peakHeap,
		heldRssAfterGc: held?.rss ?? null,
		heldHeapAfterGc: held?.heapUsed ?? null,
	});
}

main().then(
	() => process.exit(0),
	(error: unknown) => {
		process.send!({
			type: 'error',
			message: error instanceof Error ? (error.stack ?? error.message) : String(error),
		});
		process.exit(1);
	},
);
