// `npm run bench` (tools/run.js builds the package, then runs this under Node 24 with tsx).
// Prints one table per benchmark and writes bench/results/latest.json. Figures only: nothing
// here asserts a time; the targets are printed next to the figures for the reader.
//
//   npm run bench                      all four benchmarks (about 7-8 minutes)
//   npm run bench -- --only polling    a subset: batch, polling, faults, memory, overhead (comma-separated)
//   npm run bench -- --quick           tiny sizes (well under a minute), to check the benchmarks run;
//                                      the engine layer runs it (test/engine/bench-quick.test.ts)
//   npm run bench:n8n                  the node against users' HTTP Request loops in a real n8n (bench/n8n.ts)
//   npm run bench -- --table           the table job on 500 and 5,000 rows in a real n8n (bench/table-job.ts)
//   npm run bench -- --out FILE        write the JSON elsewhere (default bench/results/latest.json;
//                                      the printed tables go beside it, .txt)
//   npm run bench -- --only memory --gc-every 50
//                                      diagnostic: force a GC every 50 ms during the download, to
//                                      tell garbage awaiting collection from memory really held
//   BENCH_CHILD_NODE_ARGS="--trace-gc" npm run bench -- --only memory
//                                      diagnostic: Node options for the measuring processes
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
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
import {
	growthOf,
	helpersVerdict,
	memoryBenchmark,
	type DownloadMode,
	type MemoryRow,
} from './lib/memory';
import { overheadBenchmark, type OverheadResult } from './lib/overhead';
import { benchPlan } from './lib/plan';
import { npmRun, provenance } from './lib/provenance';
import { regenerateDocs } from '../tools/docs-figures';
import {
	faultsBenchmark,
	lagTargets,
	READ_BUDGET,
	READ_BUDGET_FROM_MS,
	USUAL_FAULTS,
	type FaultRow,
	learningBenchmark,
	pollingBenchmark,
	tradeoffCurve,
	type TradeoffPoint,
	type LearningRow,
	type PollingRow,
} from './lib/polling';
import { eachMb, mb, median, round, seconds, table } from './lib/stats';
import { DEFAULT_POLL_SCHEDULE, POLL_PACES } from '../nodes/MediaGeneration/polling/schedule';

type Name = 'batch' | 'polling' | 'faults' | 'memory' | 'overhead';
const ALL: Name[] = ['batch', 'polling', 'faults', 'memory', 'overhead'];

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
			const names = (value ?? '')
				.split(',')
				.map((s) => s.trim())
				.filter(Boolean);
			const bad = names.filter((n) => !ALL.includes(n as Name));
			if (bad.length || !names.length)
				throw new Error(`--only: "${value}"; allowed: ${ALL.join(', ')}`);
			only = names as Name[];
		} else if (a === '--out' || a.startsWith('--out=')) {
			out = path.resolve(a.includes('=') ? a.slice(6) : argv[++i]);
		} else if (a === '--gc-every' || a.startsWith('--gc-every=')) {
			const value = a.includes('=') ? a.slice(11) : argv[++i];
			gcEvery = Number(value);
			if (!Number.isInteger(gcEvery) || gcEvery < 1)
				throw new Error(`--gc-every: "${value}"; allowed: milliseconds, an integer of at least 1`);
		} else throw new Error(`unknown argument "${a}"; use --only, --quick, --out, --gc-every`);
	}
	return { only, quick, out, gcEvery };
}

function machine(argv: string[]) {
	const cpus = os.cpus();
	const pkg = (name: string) =>
		(
			JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
				version: string;
			}
		).version;
	return {
		date: new Date().toISOString(),
		...provenance(npmRun('bench', argv)),
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

/** Everything printed, also written next to the JSON (latest.txt): the tables as a reader saw them. */
const printed: string[] = [];
const say = (text = '') => {
	printed.push(text);
	process.stdout.write(`${text}\n`);
};
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function printBatch(b: BatchResult) {
	say(`\n## 1. Batch: ${b.tasks} tasks of T = ${seconds(b.taskMs)} through the real engine`);
	say(
		table([
			['run', 'tasks', 'wall time', 'per task', 'vs T'],
			[
				`default limit (${b.defaultConcurrency ?? '?'} in flight)`,
				b.tasks,
				seconds(b.concurrentMs),
				seconds(b.concurrentMs / b.tasks),
				`${round(b.concurrentOverT)} x T`,
			],
			[
				`limit 1 (measured on ${b.serialMeasuredTasks} tasks)`,
				b.serialMeasuredTasks,
				seconds(b.serialMeasuredMs),
				seconds(b.serialMeasuredMs / b.serialMeasuredTasks),
				'-',
			],
			[
				`limit 1, extrapolated to ${b.tasks}`,
				b.tasks,
				seconds(b.serialExtrapolatedMs),
				seconds(b.serialExtrapolatedMs / b.tasks),
				`${round(b.serialExtrapolatedMs / b.taskMs, 1)} x T`,
			],
		]),
	);
	say(
		`speed-up over one-at-a-time: ${round(b.speedup, 1)} x; batch wall time ${round(b.concurrentOverT)} x T (target <= 1.3 x T)`,
	);
	say(
		`(one-at-a-time is measured on ${b.serialMeasuredTasks} tasks and scaled: running all ${b.tasks} would take ~${seconds(b.serialExtrapolatedMs)})`,
	);
}

function printLargeBatch(rows: LargeBatchResult[]) {
	say(
		`\n## 1b. Large batches: Max Tasks in Flight = items, engine in its own process (simulator in another)`,
	);
	say(
		table([
			[
				'items x T',
				'in flight',
				'wall time',
				'vs T',
				'engine CPU',
				'RSS growth',
				'per task in flight',
				'V8 heap growth',
				'heap held per task (GC at T/2)',
				'status reads / task',
				'last submission',
				'last file request',
			],
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
				`+${seconds(r.lastSubmitMs)}`,
				`+${seconds(r.lastFileMs)}`,
			]),
		]),
	);
	say(
		'targets: wall time <= 1.2 x T, RSS growth <= 300 MB. Growth = peak RSS (kernel VmHWM) minus the RSS after a',
	);
	say(
		'warm-up batch; it includes garbage not yet collected. Every task downloads one 1 kB file (filesystem mode).',
	);
	say(
		'"heap held per task": V8 heap above the baseline after a forced full GC halfway through, divided by the tasks',
	);
	say(
		'in flight: what the engine, the HTTP client and the node really keep per waiting task. "last submission" and',
	);
	say(
		'"last file request": when the service saw them, from the first submission (the last task ends T after its',
	);
	say('submission; the wall time ends after the last file is stored).');
}

const TARGETS_TEXT =
	"lag median <= max(2.5 s, 5%), lag p90 <= max(4.5 s, 10%) at every duration; from 60 s up, reads <= the 5 s loop's on the same tasks for a kind never seen (0.40 nominally; the loop reads 0.41 of tasks of 57-63 s), ratio <= 0.33 once learnt";

/** "met", or what is missed: LATE (a lag target) and/or READS (the ratio, from 60 s up). */
function verdict(
	durationMs: number,
	ratio: number,
	lag: { lagMedianMs: number; lagP90Ms: number },
	readBudget: number,
): string {
	const target = lagTargets(durationMs);
	const missed = [
		lag.lagMedianMs > target.medianMs || lag.lagP90Ms > target.p90Ms ? 'LATE' : '',
		durationMs >= READ_BUDGET_FROM_MS && ratio > readBudget ? 'READS' : '',
	].filter(Boolean);
	return missed.length ? missed.join(' ') : 'met';
}

function printTradeoff(points: TradeoffPoint[]) {
	say(
		'\n## 2c. Trade-off: a lone task with no usable progress and nothing learnt (pure schedule, simulated clock)',
	);
	say(
		table([
			[
				'first read',
				'floor',
				'back-off',
				'',
				...points[0].at.flatMap((a) => [`${seconds(a.durationMs)}: ratio`, 'lag median / p90']),
				'any length, 5 s-10 min: over median / p90 bound',
				'lag targets',
			],
			...points.map((p) => [
				seconds(p.firstMs),
				seconds(p.floorMs),
				`${round(p.backoffRatio * 100, 1)}%`,
				p.label ?? '',
				...p.at.flatMap((a) => [
					round(a.ratio, 2),
					`${seconds(a.lagMedianMs)} / ${seconds(a.lagP90Ms)}`,
				]),
				`${pct(p.sweep.overMedianBound)} / ${pct(p.sweep.overP90Bound)}`,
				p.at.every((a) => a.lagMet) && p.sweep.lagMet ? 'met' : 'LATE',
			]),
		]),
	);
	say(
		'A first read, then reads every "floor", then every "back-off" of the time waited (30 s at most). Ratio = reads /',
	);
	say(
		'fixed 2 s reads; lag targets: median <= max(2.5 s, 5%), p90 <= max(4.5 s, 10%) at 10, 60 and 300 s (+-5%), and over',
	);
	say(
		'tasks of any length at most 50% / 10% of them past those bounds. The 5 s loop sits at those bounds below 50 s (they',
	);
	say(
		'are its own lag): no schedule with fewer reads than it meets them there; past 50 s a share of the time waited does.',
	);
}

/** The points of the trade-off curve: the node's three paces, the users' loop, and others. */
const TRADEOFF_POINTS = [
	...(['sooner', 'balanced', 'fewer'] as const).map((pace) => ({
		firstMs: POLL_PACES[pace].coldFirstDelayMs,
		floorMs: POLL_PACES[pace].coldMinDelayMs,
		backoffRatio: POLL_PACES[pace].backoffRatio,
		label: `<- ${pace === 'fewer' ? 'fewer requests' : pace}${pace === 'balanced' ? ' (default)' : ''}`,
	})),
	{ firstMs: 5_000, floorMs: 5_000, backoffRatio: 0, label: 'the 5 s loop' },
	{ floorMs: 2_000, backoffRatio: 0.06 },
	{ floorMs: 2_500, backoffRatio: 0.1 },
	{ floorMs: 4_000, backoffRatio: 0.1 },
	{ firstMs: 5_000, floorMs: 5_000, backoffRatio: 0.1 },
	{ firstMs: 6_000, floorMs: 5_000, backoffRatio: 0.1 },
	{ firstMs: 6_000, floorMs: 5_500, backoffRatio: 0.096 },
	{ floorMs: 4_000, backoffRatio: 0.2 },
	{ floorMs: 5_000, backoffRatio: 0.25 },
];

function printLearning(rows: LearningRow[], check?: BatchCheckRow) {
	say(
		'\n## 2b. Polling with learnt durations (simulated clock): ratio = node reads / fixed 2 s reads of the same tasks',
	);
	say(
		table([
			[
				'task',
				'progress',
				'scenario',
				'tasks',
				'reads (node)',
				'reads (2 s)',
				'ratio',
				'5 s loop ratio',
				'lag median (node)',
				'lag p90 (node)',
				'lag / duration',
				'targets',
			],
			...rows.map((r) => [
				seconds(r.durationMs),
				r.progress,
				r.scenario,
				r.tasks,
				round(r.node.requestsMean, 1),
				round(r.fixed2s.requestsMean, 1),
				round(r.requestRatio, 2),
				round(r.loopRatio, 2),
				seconds(r.node.lagMedianMs),
				seconds(r.node.lagP90Ms),
				pct(r.lagShare),
				verdict(
					r.durationMs,
					r.requestRatio,
					r.node,
					r.scenario === 'next run, alone'
						? READ_BUDGET.learnt
						: Math.max(READ_BUDGET.neverSeen, r.loopRatio),
				),
			]),
		]),
	);
	say(
		`targets: ${TARGETS_TEXT} ("next run"; the others are of a kind never seen). "batch, first run": batches of`,
	);
	say(
		'50 tasks of one kind, 50 in flight, nothing known before (the first finishes teach the rest); "next run, alone":',
	);
	say(
		'one task in a later execution, starting from the durations the batch left in node static data;',
	);
	say('"alone, nothing learnt": one task of a kind never seen, model unknown (Task operations);');
	say(
		'"alone, video prior": the same, of a video model, starting from its typical duration (120 s) as the first prior.',
	);
	if (check) {
		say(
			`\nvalidation: a batch of ${check.tasks} tasks of ${seconds(check.taskMs)}, ${check.inFlight} in flight, progress ${check.mode}, for real (engine, HTTP) vs simulated`,
		);
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
	say(
		'\n## 2. Polling cost and completion lag (node schedule vs fixed 2 s polling, simulated clock)',
	);
	say(
		table([
			[
				'task',
				'progress',
				'samples',
				'reads (node)',
				'reads (2 s)',
				'ratio',
				'5 s loop ratio',
				'lag median (node)',
				'lag p90 (node)',
				'lag median (2 s)',
				'lag / duration',
				'targets',
			],
			...rows.map((r) => [
				seconds(r.durationMs),
				r.progress,
				r.samples,
				round(r.adaptive.requestsMean, 1),
				round(r.fixed2s.requestsMean, 1),
				round(r.requestRatio, 2),
				round(r.loopRatio, 2),
				seconds(r.adaptive.lagMedianMs),
				seconds(r.adaptive.lagP90Ms),
				seconds(r.fixed2s.lagMedianMs),
				pct(r.lagShare),
				verdict(
					r.durationMs,
					r.requestRatio,
					r.adaptive,
					Math.max(READ_BUDGET.neverSeen, r.loopRatio),
				),
			]),
		]),
	);
	say(
		`targets: ${TARGETS_TEXT} (here: a kind never seen, no model: a Task operation). "5 s loop ratio": the users' loop (a read every 5 s)`,
	);
	say('on the same task ends. progress: "reported" = rising percentage (the simulator),');
	say('"absent" = no progress field, "zero" = progress stays 0 until the task ends.');
	say('durations vary +-5% around the nominal value; reads = status requests per task (mean).');
	if (check) {
		say('\nvalidation: the same schedule for real (engine, HTTP, wall clock) vs simulated');
		say(
			table([
				['task', 'reads real', 'reads simulated', 'lag real', 'lag simulated'],
				...check.map((c) => [
					seconds(c.durationMs),
					c.real.requests,
					c.simulated.requests,
					seconds(c.real.lagMs),
					seconds(c.simulated.lagMs),
				]),
			]),
		);
	}
}

function printFaults(rows: FaultRow[]) {
	say(
		`\n## 2d. Under the service's usual faults (issue 46): each task's first status read 429 (Retry-After ${seconds(USUAL_FAULTS.retryAfterMs)}), first download 502 (simulated clock)`,
	);
	const cell = (r: FaultRow['node']) => [
		round(r.requestsMean, 1),
		`${seconds(r.lagMedianMs)} / ${seconds(r.lagP90Ms)}`,
		`${round(r.timeOverT)} x T`,
	];
	say(
		table([
			[
				'batch',
				'progress',
				'batches',
				'node: reads / task',
				'lag median / p90',
				'time to last file',
				'5 s loop: reads / task',
				'lag median / p90',
				'time to last file',
				'node / loop reads',
				'node, no faults: reads',
				'lag median / p90',
				'time',
				'5 s loop, no faults: reads',
			],
			...rows.map((r) => [
				`${r.tasks} x ${seconds(r.durationMs)}`,
				r.progress,
				r.batches,
				...cell(r.node),
				...cell(r.loop5s),
				round(r.readRatio, 2),
				...cell(r.nodeNoFaults),
				round(r.loop5sNoFaultsReads, 1),
			]),
		]),
	);
	say(
		'All tasks of a batch in flight at once, of a kind never seen (an image model: typical duration 10 s); durations +-5%.',
	);
	say(
		'The refused read counts as a read. Node: its transport asks again at the Retry-After; the 502 costs its first',
	);
	say(
		`download retry (at most ${seconds(USUAL_FAULTS.downloadRetryMs)}). The users' loop (HTTP Request + Wait 5 s, Retry On Fail): first read at 5 s`,
	);
	say(
		`refused, again ${seconds(USUAL_FAULTS.retryAfterMs)} later, then every 5 s; its download retried after ${seconds(USUAL_FAULTS.retryAfterMs)}. Time = last file / T, median of the batches`,
	);
	say('(no file transfer time: tiny files). Target (issue 46): 10 x 3 s within 2.5 x T.');
}

export interface MemorySummary {
	sizeBytes: number;
	runs: number;
	/** The node's download: peak RSS growth (median, max, every run). */
	growthMedian: number;
	growthMax: number;
	growthRuns: number[];
	buffersMedian: number;
	heapMedian: number;
	/** The node's download time (file request to file stored), median. */
	downloadMedianMs: number;
	/** The plain Node stream-to-disk of the same file, same server, same run. */
	plain?: {
		growthMedian: number;
		growthMax: number;
		growthRuns: number[];
		downloadMedianMs: number;
	};
	/** Node download time / plain download time, per pair of back-to-back runs. */
	ratioMedian?: number;
	ratioMax?: number;
	/** Whole workflow run of the node (submit, first status read, download), median. */
	durationMedianMs: number;
	/** CPU time (all threads) of the node's process / of the plain process, medians. */
	cpuMedianMs: number;
	plainCpuMedianMs?: number;
}

/** Memory target of issue 14: peak RSS growth under 64 MB in every run. */
export const MEMORY_TARGET_BYTES = 64 * 1024 * 1024;
/**
 * Issue 14's ratio of the node's download to a plain stream-to-disk in a bare process: printed for
 * information only since issue 22 (the target that counts is HTTP Request's File response in the
 * same n8n, `npm run bench:n8n`).
 */
export const THROUGHPUT_TARGET_RATIO = 1.5;

export function summariseMemory(rows: MemoryRow[]): MemorySummary[] {
	const sizes = [...new Set(rows.map((r) => r.sizeBytes))];
	return sizes.map((sizeBytes) => {
		const runs = rows.filter((r) => r.sizeBytes === sizeBytes && (r.mode ?? 'node') === 'node');
		const plains = rows.filter((r) => r.sizeBytes === sizeBytes && r.mode === 'plain');
		const growth = runs.map(growthOf);
		const ratios = runs
			.map((r) => ({ r, p: plains.find((p) => p.run === r.run) }))
			.filter((x) => x.p && x.p.downloadMs > 0)
			.map((x) => x.r.downloadMs / x.p!.downloadMs);
		return {
			sizeBytes,
			runs: runs.length,
			growthMedian: median(growth),
			growthMax: Math.max(...growth),
			growthRuns: growth,
			buffersMedian: median(runs.map((r) => r.atPeak.external)),
			heapMedian: median(runs.map((r) => r.atPeak.heapUsed)),
			downloadMedianMs: median(runs.map((r) => r.downloadMs)),
			plain: plains.length
				? {
						growthMedian: median(plains.map(growthOf)),
						growthMax: Math.max(...plains.map(growthOf)),
						growthRuns: plains.map(growthOf),
						downloadMedianMs: median(plains.map((r) => r.downloadMs)),
					}
				: undefined,
			ratioMedian: ratios.length ? median(ratios) : undefined,
			ratioMax: ratios.length ? Math.max(...ratios) : undefined,
			durationMedianMs: median(runs.map((r) => r.durationMs)),
			cpuMedianMs: median(runs.map((r) => r.cpuMs)),
			plainCpuMedianMs: plains.length ? median(plains.map((r) => r.cpuMs)) : undefined,
		};
	});
}

function printMemory(rows: MemoryRow[], summary: MemorySummary[], gcEvery: number) {
	say(
		'\n## 3. Downloads: memory and throughput of the node vs a plain Node stream-to-disk (same file, same server, same run)',
	);
	if (gcEvery) say(`(diagnostic run: a full GC forced every ${gcEvery} ms; not the normal figure)`);
	const speed = (bytes: number, ms: number) =>
		`${(bytes / 1024 / 1024 / (ms / 1000)).toFixed(0)} MB/s`;
	say(
		table([
			[
				'file',
				'runs',
				'node: peak growth, each run',
				'max',
				'plain: each run',
				'node download',
				'plain download',
				'node / plain (median, max)',
				'CPU node / plain',
				'of which Buffers',
				'of which V8 heap',
			],
			...summary.map((s) => [
				mb(s.sizeBytes),
				s.runs,
				eachMb(s.growthRuns),
				`${mb(Math.max(0, s.growthMax))}${s.growthMax < MEMORY_TARGET_BYTES ? '' : ' (over)'}`,
				s.plain ? eachMb(s.plain.growthRuns) : '-',
				`${seconds(s.downloadMedianMs)} (${speed(s.sizeBytes, s.downloadMedianMs)})`,
				s.plain
					? `${seconds(s.plain.downloadMedianMs)} (${speed(s.sizeBytes, s.plain.downloadMedianMs)})`
					: '-',
				s.ratioMedian !== undefined ? `${round(s.ratioMedian)} x, ${round(s.ratioMax!)} x` : '-',
				s.plainCpuMedianMs ? `${seconds(s.cpuMedianMs)} / ${seconds(s.plainCpuMedianMs)}` : '-',
				mb(s.buffersMedian),
				mb(s.heapMedian),
			]),
		]),
	);
	say(
		`targets: node peak growth < ${mb(MEMORY_TARGET_BYTES)} in every run (flat in the file size). For information only, no`,
	);
	say(
		`longer a target (issue 22): node download vs ${THROUGHPUT_TARGET_RATIO} x plain; see npm run bench:n8n for HTTP Request's File response.`,
	);
	say(
		'Growth = kernel peak RSS (VmHWM, reset after two warm-up downloads) minus the RSS then; one fresh process per',
	);
	say(
		'download. Download = from the file request reaching the file host to the file complete on disk (node: stored by',
	);
	say(
		"n8n with its metadata and the workflow run ended). Plain = Node's http.get piped into fs.createWriteStream.",
	);
	say(
		"CPU: the process's CPU time (all threads) over the node's whole workflow run / over the plain download.",
	);
	say(
		'"of which": above the baseline at the sampled peak (Buffers = memory outside the V8 heap: chunks not yet collected).',
	);
	const big = summary.filter((s) => s.sizeBytes >= 1e9);
	for (const s of big) {
		const memoryOk = s.growthMax < MEMORY_TARGET_BYTES;
		const speedOk = s.ratioMax !== undefined && s.ratioMax <= THROUGHPUT_TARGET_RATIO;
		say(
			`${mb(s.sizeBytes)}: memory ${memoryOk ? 'met' : 'MISSED'} (max ${mb(s.growthMax)} over ${s.runs} runs); throughput, for information ${s.ratioMax === undefined ? 'not measured' : speedOk ? `within ${THROUGHPUT_TARGET_RATIO}x` : `over ${THROUGHPUT_TARGET_RATIO}x`} (node / plain ${s.ratioMedian !== undefined ? `${round(s.ratioMedian)} median, ${round(s.ratioMax!)} max` : '-'})`,
		);
	}
	// Where the time (and memory) goes, for the sizes measured in every mode.
	const modes: Array<[DownloadMode, string]> = [
		['plain', 'plain Node stream-to-disk, small process'],
		['plain-in-n8n', 'the same plain stream, in a process with n8n loaded'],
		['plain-big-heap', "the same plain stream, small process holding a heap as large as n8n's"],
		['n8n-helpers', "n8n's httpRequest (stream) into prepareBinaryData, no node code"],
		['node-finished', 'the node: Task → Download Files of a finished task (no wait before)'],
		[
			'n8n-helpers-after-wait',
			"n8n's helpers, each download after idling as the node waits for its task",
		],
		['node', 'the node: Generate (waits for its task, then downloads)'],
	];
	for (const size of [
		...new Set(rows.filter((r) => r.mode === 'n8n-helpers').map((r) => r.sizeBytes)),
	]) {
		const of = (mode: DownloadMode) => rows.filter((r) => r.sizeBytes === size && r.mode === mode);
		const plainMs = median(of('plain').map((r) => r.downloadMs));
		say(
			`\nwhere the time goes, ${mb(size)} (medians of ${of('node').length} runs each, same file, same server):`,
		);
		say(
			'(the node: CPU over its whole workflow run. Full GCs: mark-compacts, started by the chunks V8 counts as external',
		);
		say(" memory; each one walks the process's whole heap, n8n's included.)");
		say(
			table([
				[
					'download path',
					'V8 heap held',
					'download',
					'vs plain',
					'CPU (all threads)',
					'full GCs',
					'their pauses',
					'peak growth, each run',
				],
				...modes
					.filter(([mode]) => of(mode).length > 0)
					.map(([mode, label]) => {
						const ms = median(of(mode).map((r) => r.downloadMs));
						const gcs = of(mode).map((r) => r.gc ?? { major: Number.NaN, majorMs: Number.NaN });
						return [
							label,
							mb(median(of(mode).map((r) => r.baselineHeap ?? Number.NaN))),
							seconds(ms),
							`${round(ms / plainMs)} x`,
							seconds(median(of(mode).map((r) => r.cpuMs))),
							String(median(gcs.map((g) => g.major))),
							seconds(median(gcs.map((g) => g.majorMs))),
							eachMb(of(mode).map(growthOf)),
						];
					}),
			]),
		);
		for (const line of helpersVerdict(of, size)) say(line);
	}
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
	say(
		`node's own code (package files + zod validation): ${round(o.nodeOwnMsPerItem, 3)} ms per item (target < 1 ms)`,
	);
	say(
		`whole engine process CPU (engine, HTTP client, binary store, node): ${round(o.processCpuMsPerItem, 3)} ms per item; wall time ${seconds(o.wallMs)} (includes the schedule's ${seconds(Math.max(DEFAULT_POLL_SCHEDULE.firstDelayMs, DEFAULT_POLL_SCHEDULE.scoutMinDelayMs))} wait before a batch's first status read)`,
	);
	const top = Object.entries(o.topNodeFunctionsMs);
	const other = Object.entries(o.topOtherMs ?? {});
	if (other.length)
		say(`"other" is mostly: ${other.map(([k, v]) => `${k} ${round(v, 1)} ms`).join('; ')}`);
	if (top.length)
		say(
			`hottest functions of the node: ${top.map(([k, v]) => `${k} ${round(v, 1)} ms`).join('; ')}`,
		);
}

async function main() {
	const argv = process.argv.slice(2);
	const { only, quick, out, gcEvery } = parseArgs(argv);
	const info = machine(argv);
	say(
		`# media-generation benchmarks ${info.date} (${info.commit}), Node ${info.node}, ${info.cpu} x ${info.cores}, load ${info.loadAverage.join(' ')}`,
	);
	if (quick) say('(--quick: reduced sizes; figures are not comparable with a full run)');
	const results: Record<string, unknown> = { machine: info, quick };
	const plan = benchPlan(quick);

	// Each benchmark measures, then returns how to print what it measured. A full run measures one
	// after another (figures undisturbed); --quick, which only proves that they run, measures all
	// at once and prints in the same order.
	const jobs: Array<() => Promise<() => void>> = [];
	if (only.includes('batch')) {
		jobs.push(async () => {
			const b = await batchBenchmark(plan.batch.tasks, plan.batch.taskMs, plan.batch.serialTasks);
			const large: Array<Awaited<ReturnType<typeof largeBatchBenchmark>>> = [];
			for (const l of plan.largeBatches) large.push(await largeBatchBenchmark(l.items, l.taskMs));
			results.batch = b;
			results.largeBatch = large;
			return () => {
				printBatch(b);
				printLargeBatch(large);
			};
		});
	}
	if (only.includes('polling')) {
		jobs.push(async () => {
			const rows = await pollingBenchmark([10_000, 60_000, 300_000], quick ? 5 : 101);
			const check = await validatePollingOverHttp(plan.pollingChecks.loneMs);
			const learning = await learningBenchmark(
				[10_000, 60_000, 300_000],
				quick ? { samples: 5, batches: 1, batchSize: 10 } : {},
			);
			const { tasks, taskMs, inFlight } = plan.pollingChecks.batch;
			const batchCheck = await validateBatchPollingOverHttp(tasks, taskMs, inFlight);
			results.polling = { rows, validation: check };
			results.pollingLearning = { rows: learning, validation: batchCheck };
			const curve = tradeoffCurve(TRADEOFF_POINTS, [10_000, 60_000, 300_000], quick ? 11 : 101);
			results.pollingTradeoff = curve;
			return () => {
				printPolling(rows, check);
				printLearning(learning, batchCheck);
				printTradeoff(curve);
			};
		});
	}
	if (only.includes('faults')) {
		jobs.push(async () => {
			const rows = await faultsBenchmark(undefined, quick ? 1 : 5);
			results.pollingFaults = rows;
			return () => printFaults(rows);
		});
	}
	if (only.includes('memory')) {
		jobs.push(async () => {
			const rows = await memoryBenchmark(plan.memory, gcEvery, (r) =>
				process.stderr.write(
					`[bench] download ${r.mode} ${mb(r.sizeBytes)} run ${r.run}: ${seconds(r.downloadMs)}, peak growth ${mb(r.growthHwm ?? r.growthSampled)}\n`,
				),
			);
			const summary = summariseMemory(rows);
			results.memory = { gcEveryMs: gcEvery || null, summary, rows };
			return () => printMemory(rows, summary, gcEvery);
		});
	}
	if (only.includes('overhead')) {
		jobs.push(async () => {
			const o = await overheadBenchmark(plan.overhead.items);
			results.overhead = o;
			return () => printOverhead(o);
		});
	}
	if (quick) {
		for (const print of await Promise.all(jobs.map((job) => job()))) print();
	} else {
		for (const job of jobs) (await job())();
	}

	fs.mkdirSync(path.dirname(out), { recursive: true });
	fs.writeFileSync(out, `${JSON.stringify(results, null, '\t')}\n`);
	const text = out.replace(/\.json$/, '') + '.txt';
	fs.writeFileSync(text, `${printed.join('\n')}\n`);
	say(
		`\nresults written to ${path.relative(process.cwd(), out)} and ${path.relative(process.cwd(), text)}`,
	);
	// The docs' generated tables follow the results files they name (tools/docs-figures.ts). A
	// --quick run proves only that the benchmarks run: its figures go into no doc.
	if (!quick) regenerateDocs(out);
}

// `npm run bench:n8n` (bench --n8n): the comparison in a real n8n, a benchmark of its own (bench/n8n.ts).
// `npm run bench -- --table`: the table job on 500 and 5,000 rows in a real n8n (bench/table-job.ts).
const run = process.argv.includes('--n8n')
	? import('./n8n').then((m) => m.main(process.argv.slice(2).filter((a) => a !== '--n8n')))
	: process.argv.includes('--table')
		? import('./table-job').then((m) =>
				m.main(process.argv.slice(2).filter((a) => a !== '--table')),
			)
		: main();
run.catch((error) => {
	process.stderr.write(`bench: ${error?.stack ?? error}\n`);
	process.exit(1);
});
