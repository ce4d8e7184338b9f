// `npm run bench` (tools/run.js builds the package, then runs this under Node 24 with tsx).
// Prints one table per benchmark and writes bench/results/latest.json. Figures only: nothing
// here asserts a time; the targets are printed next to the figures for the reader.
//
//   npm run bench                      all four benchmarks (about 2-3 minutes)
//   npm run bench -- --only polling    a subset: batch, polling, memory, overhead (comma-separated)
//   npm run bench -- --quick           smaller sizes, to check the benchmarks themselves run
//   npm run bench -- --out FILE        write the JSON elsewhere (default bench/results/latest.json)
//   npm run bench -- --only memory --gc-every 50
//                                      diagnostic: force a GC every 50 ms during the download, to
//                                      tell garbage awaiting collection from memory really held
/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { execSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import './lib/env';
import {
	batchBenchmark,
	largeBatchBenchmark,
	validateBatchPollingOverHttp,
	validatePollingOverHttp,
	type BatchCheckRow,
	type BatchResult,
	type LargeBatchResult,
	type PollingCheckRow,
} from './lib/batch';
import { memoryBenchmark, type MemoryRow } from './lib/memory';
import { overheadBenchmark, type OverheadResult } from './lib/overhead';
import { learningBenchmark, pollingBenchmark, type LearningRow, type PollingRow } from './lib/polling';
import { mb, median, round, seconds, table } from './lib/stats';
import { DEFAULT_POLL_SCHEDULE } from '../nodes/shared/schedule';

type Name = 'batch' | 'polling' | 'memory' | 'overhead';
const ALL: Name[] = ['batch', 'polling', 'memory', 'overhead'];

function parseArgs(argv: string[]) {
	let only = ALL;
	let quick = false;
	let out = path.join(__dirname, 'results', 'latest.json');
	let gcEvery = 0;
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (a === '--quick') quick = true;
		else if (a === '--only' || a.startsWith('--only=')) {
			const value = a.includes('=') ? a.slice(7) : argv[++i];
			const names = (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
			const bad = names.filter((n) => !ALL.includes(n as Name));
			if (bad.length || !names.length) throw new Error(`--only: "${value}"; allowed: ${ALL.join(', ')}`);
			only = names as Name[];
		} else if (a === '--out' || a.startsWith('--out=')) {
			out = path.resolve(a.includes('=') ? a.slice(6) : argv[++i]);
		} else if (a === '--gc-every' || a.startsWith('--gc-every=')) {
			const value = a.includes('=') ? a.slice(11) : argv[++i];
			gcEvery = Number(value);
			if (!Number.isInteger(gcEvery) || gcEvery < 1) throw new Error(`--gc-every: "${value}"; allowed: milliseconds, an integer of at least 1`);
		} else throw new Error(`unknown argument "${a}"; use --only, --quick, --out, --gc-every`);
	}
	return { only, quick, out, gcEvery };
}

function machine() {
	const cpus = os.cpus();
	let commit = 'unknown';
	try {
		commit = execSync('git rev-parse --short HEAD', { cwd: __dirname, stdio: ['ignore', 'pipe', 'ignore'] })
			.toString()
			.trim();
	} catch {
		// Not a git checkout: the JSON still says when and where.
	}
	const pkg = (name: string) =>
		(JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
	return {
		date: new Date().toISOString(),
		commit,
		node: process.version,
		n8nCore: pkg('n8n-core'),
		n8nWorkflow: pkg('n8n-workflow'),
		platform: `${os.platform()} ${os.release()} ${os.arch()}`,
		cpu: cpus[0]?.model ?? 'unknown',
		cores: cpus.length,
		memoryGB: round(os.totalmem() / 1024 ** 3, 1),
		loadAverage: os.loadavg().map((l) => round(l, 2)),
	};
}

const say = (text = '') => process.stdout.write(`${text}\n`);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function printBatch(b: BatchResult) {
	say(`\n## 1. Batch: ${b.tasks} tasks of T = ${seconds(b.taskMs)} through the real engine`);
	say(
		table([
			['run', 'tasks', 'wall time', 'per task', 'vs T'],
			[`default limit (${b.defaultConcurrency ?? '?'} in flight)`, b.tasks, seconds(b.concurrentMs), seconds(b.concurrentMs / b.tasks), `${round(b.concurrentOverT)} x T`],
			[`limit 1 (measured on ${b.serialMeasuredTasks} tasks)`, b.serialMeasuredTasks, seconds(b.serialMeasuredMs), seconds(b.serialMeasuredMs / b.serialMeasuredTasks), '-'],
			[`limit 1, extrapolated to ${b.tasks}`, b.tasks, seconds(b.serialExtrapolatedMs), seconds(b.serialExtrapolatedMs / b.tasks), `${round(b.serialExtrapolatedMs / b.taskMs, 1)} x T`],
		]),
	);
	say(`speed-up over one-at-a-time: ${round(b.speedup, 1)} x; batch wall time ${round(b.concurrentOverT)} x T (target <= 1.3 x T)`);
	say(`(one-at-a-time is measured on ${b.serialMeasuredTasks} tasks and scaled: running all ${b.tasks} would take ~${seconds(b.serialExtrapolatedMs)})`);
}

function printLargeBatch(rows: LargeBatchResult[]) {
	say(`\n## 1b. Large batches: Max Tasks in Flight = items, engine in its own process (simulator in another)`);
	say(
		table([
			['items x T', 'in flight', 'wall time', 'vs T', 'engine CPU', 'RSS growth', 'per task in flight', 'V8 heap growth', 'heap held per task (GC at T/2)', 'status reads / task'],
			...rows.map((r) => [
				`${r.items} x ${seconds(r.taskMs)}`,
				r.inFlight,
				seconds(r.wallMs),
				`${round(r.wallOverT)} x T`,
				seconds(r.cpuMs),
				mb(r.rssGrowthBytes),
				`${round(r.bytesPerTaskInFlight / 1024, 1)} kB`,
				mb(r.heapGrowthBytes),
				r.heldHeapPerTaskBytes === null ? '-' : `${round(r.heldHeapPerTaskBytes / 1024, 1)} kB`,
				round(r.statusReads / r.items, 2),
			]),
		]),
	);
	say('targets: wall time <= 1.2 x T, RSS growth <= 300 MB. Growth = peak RSS (kernel VmHWM) minus the RSS after a');
	say('warm-up batch; it includes garbage not yet collected. Every task downloads one 1 kB file (filesystem mode).');
	say('"heap held per task": V8 heap above the baseline after a forced full GC halfway through, divided by the tasks');
	say('in flight: what the engine, the HTTP client and the node really keep per waiting task.');
}

function printLearning(rows: LearningRow[], check?: BatchCheckRow) {
	say('\n## 2b. Polling with learnt durations (simulated clock): ratio = node reads / fixed 2 s reads of the same tasks');
	say(
		table([
			['task', 'progress', 'scenario', 'tasks', 'reads (node)', 'reads (2 s)', 'ratio', 'lag median (node)', 'lag p90 (node)', 'lag / duration'],
			...rows.map((r) => [
				seconds(r.durationMs),
				r.progress,
				r.scenario,
				r.tasks,
				round(r.node.requestsMean, 1),
				round(r.fixed2s.requestsMean, 1),
				round(r.requestRatio, 2),
				seconds(r.node.lagMedianMs),
				seconds(r.node.lagP90Ms),
				pct(r.lagShare),
			]),
		]),
	);
	say('targets: ratio <= 0.33 at 60 s and 300 s (<= 1.0 at 10 s), lag / duration <= 10%. "batch, first run": batches of');
	say('50 tasks of one kind, 50 in flight, nothing known before (the first finishes teach the rest); "next run, alone":');
	say('one task in a later execution, starting from the durations the batch left in node static data;');
	say('"alone, nothing learnt": one task of a kind never seen (no schedule can know its duration).');
	if (check) {
		say(`\nvalidation: a batch of ${check.tasks} tasks of ${seconds(check.taskMs)}, ${check.inFlight} in flight, progress ${check.mode}, for real (engine, HTTP) vs simulated`);
		say(
			table([
				['', 'reads per task (mean)', 'lag median'],
				['real', round(check.real.readsMean, 2), seconds(check.real.lagMedianMs)],
				['simulated', round(check.simulated.readsMean, 2), seconds(check.simulated.lagMedianMs)],
			]),
		);
	}
}

function printPolling(rows: PollingRow[], check?: PollingCheckRow[]) {
	say('\n## 2. Polling cost and completion lag (node schedule vs fixed 2 s polling, simulated clock)');
	say(
		table([
			['task', 'progress', 'samples', 'reads (node)', 'reads (2 s)', 'ratio', 'lag median (node)', 'lag p90 (node)', 'lag median (2 s)', 'lag / duration'],
			...rows.map((r) => [
				seconds(r.durationMs),
				r.progress,
				r.samples,
				round(r.adaptive.requestsMean, 1),
				round(r.fixed2s.requestsMean, 1),
				round(r.requestRatio, 2),
				seconds(r.adaptive.lagMedianMs),
				seconds(r.adaptive.lagP90Ms),
				seconds(r.fixed2s.lagMedianMs),
				pct(r.lagShare),
			]),
		]),
	);
	say('targets: ratio <= 0.33, lag / duration <= 10%. progress: "reported" = rising percentage (the simulator),');
	say('"absent" = no progress field, "zero" = progress stays 0 until the task ends.');
	say('durations vary +-5% around the nominal value; reads = status requests per task (mean).');
	if (check) {
		say('\nvalidation: the same schedule for real (engine, HTTP, wall clock) vs simulated');
		say(
			table([
				['task', 'reads real', 'reads simulated', 'lag real', 'lag simulated'],
				...check.map((c) => [seconds(c.durationMs), c.real.requests, c.simulated.requests, seconds(c.real.lagMs), seconds(c.simulated.lagMs)]),
			]),
		);
	}
}

export interface MemorySummary {
	sizeBytes: number;
	runs: number;
	growthMedian: number;
	growthMax: number;
	buffersMedian: number;
	heapMedian: number;
	durationMedianMs: number;
}

export function summariseMemory(rows: MemoryRow[]): MemorySummary[] {
	const sizes = [...new Set(rows.map((r) => r.sizeBytes))];
	return sizes.map((sizeBytes) => {
		const runs = rows.filter((r) => r.sizeBytes === sizeBytes);
		const growth = runs.map((r) => r.growthHwm ?? r.growthSampled);
		return {
			sizeBytes,
			runs: runs.length,
			growthMedian: median(growth),
			growthMax: Math.max(...growth),
			buffersMedian: median(runs.map((r) => r.atPeak.external)),
			heapMedian: median(runs.map((r) => r.atPeak.heapUsed)),
			durationMedianMs: median(runs.map((r) => r.durationMs)),
		};
	});
}

function printMemory(rows: MemoryRow[], summary: MemorySummary[], gcEvery: number) {
	say('\n## 3. Streaming memory: peak RSS growth while the node downloads one file (filesystem binary mode)');
	if (gcEvery) say(`(diagnostic run: a full GC forced every ${gcEvery} ms; not the normal figure)`);
	say(
		table([
			['file', 'runs', 'peak growth median', 'peak growth max', 'each run', 'of which Buffers (median)', 'of which V8 heap (median)', 'run time (median)'],
			...summary.map((s) => [
				mb(s.sizeBytes),
				s.runs,
				mb(Math.max(0, s.growthMedian)),
				mb(Math.max(0, s.growthMax)),
				rows
					.filter((r) => r.sizeBytes === s.sizeBytes)
					.map((r) => (r.growthHwm ?? r.growthSampled) / 1024 / 1024)
					.map((v) => Math.max(0, v).toFixed(0))
					.join(' / '),
				mb(s.buffersMedian),
				mb(s.heapMedian),
				seconds(s.durationMedianMs),
			]),
		]),
	);
	say('target: flat in the file size, < 64 MB growth. Growth = kernel peak RSS (VmHWM, reset after a warm-up download)');
	say('minus the RSS then; one fresh process per download. "of which": above the baseline at the sampled peak');
	say('(Buffers = memory outside the V8 heap, e.g. network chunks already written and not yet collected).');
}

function printOverhead(o: OverheadResult) {
	say(`\n## 4. Overhead: ${o.items} items, service answering at once (tasks of 0 ms, 1 kB files)`);
	const total = Object.values(o.selfMs).reduce((a, b) => a + b, 0);
	say(
		table([
			['where the CPU went (sampled self time)', 'total', 'per item'],
			...Object.entries(o.selfMs)
				.sort((a, b) => b[1] - a[1])
				.map(([k, v]) => [k, `${round(v, 1)} ms`, `${round(v / o.items, 3)} ms`]),
			['(all samples, idle included)', `${round(total, 1)} ms`, `${round(total / o.items, 3)} ms`],
		]),
	);
	say(`node's own code (package files + zod validation): ${round(o.nodeOwnMsPerItem, 3)} ms per item (target < 1 ms)`);
	say(`whole engine process CPU (engine, HTTP client, binary store, node): ${round(o.processCpuMsPerItem, 3)} ms per item; wall time ${seconds(o.wallMs)} (includes the schedule's ${seconds(DEFAULT_POLL_SCHEDULE.firstDelayMs)} wait before the first status read)`);
	const top = Object.entries(o.topNodeFunctionsMs);
	const other = Object.entries(o.topOtherMs ?? {});
	if (other.length) say(`"other" is mostly: ${other.map(([k, v]) => `${k} ${round(v, 1)} ms`).join('; ')}`);
	if (top.length) say(`hottest functions of the node: ${top.map(([k, v]) => `${k} ${round(v, 1)} ms`).join('; ')}`);
}

async function main() {
	const { only, quick, out, gcEvery } = parseArgs(process.argv.slice(2));
	const info = machine();
	say(`# media-generation benchmarks ${info.date} (${info.commit}), Node ${info.node}, ${info.cpu} x ${info.cores}, load ${info.loadAverage.join(' ')}`);
	if (quick) say('(--quick: reduced sizes; figures are not comparable with a full run)');
	const results: Record<string, unknown> = { machine: info, quick };

	if (only.includes('batch')) {
		const b = quick ? await batchBenchmark(10, 2_000, 2) : await batchBenchmark(50, 5_000, 5);
		results.batch = b;
		printBatch(b);
		const large = quick
			? [await largeBatchBenchmark(200, 5_000)]
			: [await largeBatchBenchmark(1000, 20_000), await largeBatchBenchmark(1000, 60_000)];
		results.largeBatch = large;
		printLargeBatch(large);
	}
	if (only.includes('polling')) {
		const rows = await pollingBenchmark([10_000, 60_000, 300_000], quick ? 21 : 101);
		const check = await validatePollingOverHttp(quick ? [6_000] : [8_000, 12_000, 20_000]);
		results.polling = { rows, validation: check };
		printPolling(rows, check);
		const learning = await learningBenchmark([10_000, 60_000, 300_000], quick ? { samples: 21, batches: 1 } : {});
		const batchCheck = await validateBatchPollingOverHttp(quick ? 6 : 12, 8_000, quick ? 3 : 6);
		results.pollingLearning = { rows: learning, validation: batchCheck };
		printLearning(learning, batchCheck);
	}
	if (only.includes('memory')) {
		const rows = await memoryBenchmark(quick ? [10e6, 50e6] : [10e6, 100e6, 1e9], gcEvery, quick ? 1 : 3);
		const summary = summariseMemory(rows);
		results.memory = { gcEveryMs: gcEvery || null, summary, rows };
		printMemory(rows, summary, gcEvery);
	}
	if (only.includes('overhead')) {
		const o = await overheadBenchmark(quick ? 200 : 1000);
		results.overhead = o;
		printOverhead(o);
	}

	fs.mkdirSync(path.dirname(out), { recursive: true });
	fs.writeFileSync(out, `${JSON.stringify(results, null, '\t')}\n`);
	say(`\nresults written to ${path.relative(process.cwd(), out)}`);
}

main().catch((error) => {
	process.stderr.write(`bench: ${error?.stack ?? error}\n`);
	process.exit(1);
});
