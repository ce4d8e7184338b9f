// One streaming-memory measurement, in a process of its own (started by bench/lib/memory.ts):
// warms up with a small download, then records how far the resident set grows above that
// baseline while the node downloads one file of SIZE bytes into n8n's filesystem binary store.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';

import { runWorkflow, setBinaryMode } from '../test/harness';
import { GENERATION_NODE, generationWorkflow } from './lib/workflow';

const status = () => fs.readFileSync('/proc/self/status', 'utf8');
const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())?.[1] ?? NaN) * 1024;

async function download(size: number) {
	const { baseUrl, apiKey } = JSON.parse(process.env.BENCH_SIM!) as { baseUrl: string; apiKey: string };
	const result = await runWorkflow(generationWorkflow(), {
		credentials: { mediaGenerationApi: { apiKey, baseUrl } },
		items: [{ prompt: `memory ${size} [sim:duration=200] [sim:files=1] [sim:size=${size}]` }],
	});
	const item = result.outputOf(GENERATION_NODE)[0];
	const file = item && result.binaryPath(item, 'data');
	if (!file) throw new Error(`no file downloaded: ${result.dump().slice(0, 2000)}`);
	const written = fs.statSync(file).size;
	fs.rmSync(file, { force: true });
	return { written, durationMs: result.durationMs };
}

async function main() {
	const size = Number(process.env.BENCH_SIZE);
	await setBinaryMode('filesystem');
	// Warm-up: loads n8n, the node and the HTTP stack, and JIT-compiles the download path.
	await download(1024 * 1024);
	await download(4 * 1024 * 1024);
	global.gc?.();
	await new Promise((r) => setTimeout(r, 300));
	const baseline = kb('VmRSS');
	// Writing 5 to clear_refs resets the kernel's peak-RSS mark (VmHWM) to the current RSS.
	let hwmReset = true;
	try {
		fs.writeFileSync('/proc/self/clear_refs', '5');
	} catch {
		hwmReset = false;
	}
	let sampledPeak = baseline;
	const base = process.memoryUsage();
	// What the resident set held at its sampled peak, above the baseline: V8 heap, or buffers
	// outside it (network chunks, write queues).
	let atPeak = { heapUsed: 0, external: 0, arrayBuffers: 0 };
	const timer = setInterval(() => {
		const m = process.memoryUsage();
		if (m.rss > sampledPeak) {
			sampledPeak = m.rss;
			atPeak = {
				heapUsed: m.heapUsed - base.heapUsed,
				external: m.external - base.external,
				arrayBuffers: m.arrayBuffers - base.arrayBuffers,
			};
		}
	}, 5);
	// Diagnostic (BENCH_GC_EVERY_MS): collect garbage often, to tell garbage awaiting V8's next
	// collection apart from memory the download really holds.
	const gcEvery = Number(process.env.BENCH_GC_EVERY_MS ?? 0);
	const gcTimer = gcEvery > 0 ? setInterval(() => global.gc?.(), gcEvery) : undefined;
	const { written, durationMs } = await download(size);
	clearInterval(timer);
	if (gcTimer) clearInterval(gcTimer);
	sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
	process.send!({
		type: 'result',
		size,
		written,
		durationMs,
		baseline,
		hwm: hwmReset ? kb('VmHWM') : undefined,
		sampledPeak,
		atPeak,
	});
}

main().then(
	() => process.exit(0),
	(error) => {
		process.send!({ type: 'error', message: String(error?.stack ?? error) });
		process.exit(1);
	},
);
