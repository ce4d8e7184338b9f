// One download measurement, in a process of its own (started by bench/lib/memory.ts): warms up
// with two small downloads, then records how far the resident set grows above that baseline
// while one file of SIZE bytes is downloaded, and when the download ended.
//   BENCH_MODE=node   the node, in n8n's engine, into n8n's filesystem binary store
//   BENCH_MODE=plain  the baseline: Node's http.get piped into fs.createWriteStream, the same
//                     file from the same server (the least any Node program can do)
//   BENCH_MODE=plain-in-n8n  the same plain stream, in a process that loaded n8n and ran the
//                     node once (n8n's heap is there: what its garbage collections cost)
//   BENCH_MODE=plain-big-heap  the same plain stream in a small process that holds a live heap
//                     of plain objects as large as n8n's (BENCH_HEAP_BYTES): whether the heap's
//                     size alone, not anything n8n changed in the process, makes the stream slow
//   BENCH_MODE=n8n-helpers  the least a node can do through n8n: a test node calling n8n's
//                     httpRequest (encoding: stream) and prepareBinaryData, nothing else
//                     (test/fixtures/DownloadProbe.node.js)
//   BENCH_MODE=node-finished  the node's Task → Download Files of a task that has finished: the
//                     node's download path with no wait before it, as n8n-helpers has none
//   BENCH_MODE=n8n-helpers-after-wait  n8n-helpers, each download after the process idled
//                     BENCH_WAIT_MS, as the node idles waiting for its task before it downloads
//                     (an idle process's heap is shrunk by V8, which makes the next download's
//                     garbage collections more frequent, whoever downloads)
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { PerformanceObserver, constants as perf } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';

const status = () => fs.readFileSync('/proc/self/status', 'utf8');
const kb = (field: string) =>
	Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())?.[1] ?? NaN) * 1024;

interface Sim {
	baseUrl: string;
	apiKey: string;
	/** Modes other than node: file URLs of tasks of 1 MB, 4 MB and SIZE, made by the parent. */
	urls?: string[];
	/** The same tasks' ids (node-finished downloads them with Task → Download Files). */
	taskIds?: string[];
}
const sim = JSON.parse(process.env.BENCH_SIM!) as Sim;
// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
const credentials = {
	mediaGenerationApi: { apiKey: sim.apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
};

async function nodeDownload(size: number) {
	const { runWorkflow } = await import('../test/harness');
	const { GENERATION_NODE, generationWorkflow, maxFileSizeMbFor } = await import('./lib/workflow');
	const result = await runWorkflow(
		generationWorkflow({ options: { maxFileSizeMb: maxFileSizeMbFor(size) } }),
		{
			credentials,
			items: [{ prompt: `memory ${size} [sim:duration=0] [sim:files=1] [sim:size=${size}]` }],
		},
	);
	const endedAt = Date.now();
	const taskId = String(result.outputOf(GENERATION_NODE)[0]?.json.task_id);
	return { ...storedFile(result, GENERATION_NODE), endedAt, taskId };
}

/** Task → Download Files of a finished task: the node's download, no wait before it. */
async function finishedTaskDownload(taskId: string, size: number) {
	const harness = await import('../test/harness');
	const { GENERATION_NODE, maxFileSizeMbFor } = await import('./lib/workflow');
	const result = await harness.runWorkflow(
		harness.chain(
			{ name: 'Start', type: harness.MANUAL_TRIGGER_TYPE },
			{
				name: GENERATION_NODE,
				type: harness.MEDIA_GENERATION_TYPE,
				parameters: {
					resource: 'task',
					operation: 'downloadFiles',
					taskId,
					options: { maxFileSizeMb: maxFileSizeMbFor(size) },
				},
				credentials: harness.mediaCredentials(),
			},
		),
		{ credentials },
	);
	const endedAt = Date.now();
	return { ...storedFile(result, GENERATION_NODE), endedAt, taskId };
}

/** The size of the file a run stored in n8n's binary store (deleted after). */
function storedFile(
	result: Awaited<ReturnType<typeof import('../test/harness').runWorkflow>>,
	node: string,
) {
	const item = result.outputOf(node)[0];
	const file = item && result.binaryPath(item, 'data');
	if (!file) throw new Error(`no file downloaded: ${result.dump().slice(0, 2000)}`);
	const written = fs.statSync(file).size;
	fs.rmSync(file, { force: true });
	fs.rmSync(`${file}.metadata`, { force: true });
	return { written };
}

let probeRegistered = false;
async function helpersDownload(url: string) {
	const harness = await import('../test/harness');
	if (!probeRegistered) {
		probeRegistered = true;
		// The same test-only node the end-to-end layer loads into a real n8n (plain JavaScript).
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const { DownloadProbe } = require('../test/fixtures/DownloadProbe.node.js') as {
			DownloadProbe: new () => import('n8n-workflow').INodeType;
		};
		harness.registerNodeType(new DownloadProbe(), 'bench.downloadProbe');
	}
	const result = await harness.runWorkflow(
		harness.chain(
			{ name: 'Start', type: harness.MANUAL_TRIGGER_TYPE },
			{ name: 'Probe', type: 'bench.downloadProbe', parameters: { url, way: 'helpers' } },
		),
		{},
	);
	const endedAt = Date.now();
	return { ...storedFile(result, 'Probe'), endedAt, taskId: '' };
}

/** Kept alive for the whole process: the heap every garbage collection has to walk. */
const ballast: unknown[] = [];
function holdHeap(bytes: number) {
	// Small linked objects, strings and arrays, like a loaded application's heap (not one big
	// array, which a collector walks at almost no cost).
	for (let i = 0; process.memoryUsage().heapUsed < bytes; i++) {
		for (let j = 0; j < 10_000; j++) {
			const n = i * 10_000 + j;
			ballast.push({ id: n, name: `entry ${n}`, tags: [n, n + 1], parent: ballast[n >> 1] });
		}
	}
}

const plainDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-bench-plain-'));
async function plainDownload(url: string) {
	const out = path.join(plainDir, 'file');
	const startedAt = Date.now();
	await new Promise<void>((resolve, reject) => {
		http
			.get(url, (res) => {
				if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode} for ${url}`));
				pipeline(res, fs.createWriteStream(out)).then(resolve, reject);
			})
			.on('error', reject);
	});
	const endedAt = Date.now();
	const written = fs.statSync(out).size;
	fs.rmSync(out, { force: true });
	return { written, endedAt, startedAt, taskId: '' };
}

async function main() {
	const size = Number(process.env.BENCH_SIZE);
	const mode = process.env.BENCH_MODE ?? 'node';
	if (mode !== 'plain' && mode !== 'plain-big-heap') {
		const { setBinaryMode } = await import('../test/harness');
		await setBinaryMode('filesystem');
	}
	// plain-in-n8n: n8n and the node loaded and run once, then only the plain stream is measured.
	if (mode === 'plain-in-n8n') await nodeDownload(4 * 1024 * 1024);
	if (mode === 'plain-big-heap') holdHeap(Number(process.env.BENCH_HEAP_BYTES));
	const sizes = [1024 * 1024, 4 * 1024 * 1024, size];
	const waitMs = Number(process.env.BENCH_WAIT_MS ?? 0);
	const download = async (n: number) => {
		if (mode === 'node') return await nodeDownload(sizes[n]);
		if (mode === 'node-finished') return await finishedTaskDownload(sim.taskIds![n], sizes[n]);
		if (mode === 'n8n-helpers') return await helpersDownload(sim.urls![n]);
		if (mode === 'n8n-helpers-after-wait') {
			await new Promise((r) => setTimeout(r, waitMs));
			return await helpersDownload(sim.urls![n]);
		}
		return await plainDownload(sim.urls![n]);
	};
	// Warm-up: loads n8n, the node and the HTTP stack, and JIT-compiles the download path.
	await download(0);
	await download(1);
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
	// Garbage collections during the download: how many full (mark-compact) ones, and their pauses.
	const gc = { major: 0, majorMs: 0, minor: 0, minorMs: 0 };
	const observer = new PerformanceObserver((list) => {
		for (const e of list.getEntries()) {
			const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
			if (kind === perf.NODE_PERFORMANCE_GC_MAJOR) {
				gc.major++;
				gc.majorMs += e.duration;
			} else {
				gc.minor++;
				gc.minorMs += e.duration;
			}
		}
	});
	observer.observe({ entryTypes: ['gc'] });
	const startedAt = Date.now();
	const cpuBefore = process.cpuUsage();
	const { written, endedAt, taskId } = await download(2);
	const cpu = process.cpuUsage(cpuBefore);
	await new Promise((r) => setTimeout(r, 50));
	observer.disconnect();
	clearInterval(timer);
	if (gcTimer) clearInterval(gcTimer);
	sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
	fs.rmSync(plainDir, { recursive: true, force: true });
	process.send!({
		type: 'result',
		mode,
		size,
		written,
		durationMs: endedAt - startedAt,
		// CPU time of the whole process (all threads: the main thread, libuv's file writes, V8's
		// garbage collector helpers), less sensitive than wall time to a busy machine.
		cpuMs: (cpu.user + cpu.system) / 1000,
		gc,
		endedAt,
		taskId,
		baseline,
		baselineHeap: base.heapUsed,
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
