// 200 tasks of 10 simulated minutes: "Park Until Callbacks" against polling in the execution.
//
//   node --expose-gc --import tsx bench/durable.ts      (under Node 24, from the repository root)
//
// What is measured and what is modelled (nothing here waits 10 real minutes):
// - Status reads when polling: the node's own schedule (nodes/MediaGeneration/polling/schedule.ts) driven against
//   the simulator's task model on its simulated clock (bench/lib/polling.ts, the method the
//   polling benchmark uses and validates over HTTP), one run per task, durations 10 min ± 5 %.
// - Time an execution is held when polling: the task durations plus each task's poll lag, laid
//   out the way the node runs them (Max Tasks in Flight workers, default 50, and 200).
// - Status reads when parked: counted by construction of the mode (one read per task when
//   parking, one per callback, none in the finishing node for confirmed tasks); the e2e test
//   (test/e2e/durable-wait.test.ts) checks the same bound on a real n8n with 50 tasks.
// - Time held when parked: 200 real submissions and 200 real status reads over HTTP to the
//   simulator, at the node's concurrencies (50 and 10): the only time the execution runs before
//   it parks. Downloads after the wait cost the same in both modes and are left out of both.
// - Memory held: the heap this process needs to keep 200 waits in flight (the items, their
//   observation lists, one pending timer each), measured with forced GCs, against the bytes of
//   the 200 parked items n8n keeps in its database instead (nothing in any process's memory).
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../test/simulator';
import { provenance } from './lib/provenance';
import { regenerateDocs } from '../tools/docs-figures';
import { adaptiveSchedule, simulateTask } from './lib/polling';
import { seeded, table } from './lib/stats';
import type { PollObservation } from '../nodes/MediaGeneration/polling/schedule';

const TASKS = 200;
const TASK_MS = 10 * 60_000;

const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** When the last of `durations` ends, run by `workers` workers taking items in order. */
function heldWithWorkers(durations: number[], workers: number): number {
	const free = Array.from({ length: Math.min(workers, durations.length) }, () => 0);
	let end = 0;
	for (const d of durations) {
		free.sort((a, b) => a - b);
		free[0] += d;
		end = Math.max(end, free[0]);
	}
	return end;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
	const t0 = performance.now();
	const value = await fn();
	return { ms: performance.now() - t0, value };
}

async function inParallel(count: number, limit: number, fn: (i: number) => Promise<void>) {
	let next = 0;
	await Promise.all(
		Array.from({ length: limit }, async () => {
			while (next < count) await fn(next++);
		}),
	);
}

async function parkedRequests(sim: Simulator): Promise<{ submitMs: number; checkMs: number }> {
	const ids: string[] = [];
	const submit = await timed(() =>
		inParallel(TASKS, 50, async (i) => {
			const res = await fetch(`${sim.baseUrl}/api/generate/submit`, {
				method: 'POST',
				headers: { Authorization: `Bearer ${sim.apiKey}`, 'Content-Type': 'application/json' },
				body: JSON.stringify({
					model: sim.videoModelId,
					input: { prompt: `bench parked ${i} [sim:duration=${TASK_MS}]` },
					callback_url: `http://127.0.0.1:9/webhook-waiting/1?signature=x&mgi=${i}`,
				}),
			});
			const body = (await res.json()) as { data?: { task_id?: string } };
			ids[i] = String(body.data?.task_id);
		}),
	);
	const check = await timed(() =>
		inParallel(TASKS, 10, async (i) => {
			const res = await fetch(`${sim.baseUrl}/api/generate/status/${ids[i]}`, {
				headers: { Authorization: `Bearer ${sim.apiKey}` },
			});
			await res.json();
		}),
	);
	return { submitMs: submit.ms, checkMs: check.ms };
}

function gc() {
	const g = (globalThis as { gc?: () => void }).gc;
	if (g) {
		g();
		g();
	}
}

/** Heap kept alive by 200 in-flight waits: their items, observation lists and timers. */
async function pollingHeap(observationsPerTask: number): Promise<number> {
	gc();
	const before = process.memoryUsage().heapUsed;
	const held: Array<{
		item: Record<string, unknown>;
		observations: PollObservation[];
		timer: NodeJS.Timeout;
	}> = [];
	for (let i = 0; i < TASKS; i++) {
		const observations: PollObservation[] = Array.from({ length: observationsPerTask }, (_, k) => ({
			at: k * 30_000,
			status: 'processing',
			progress: k,
		}));
		held.push({
			item: {
				prompt: `bench parked ${i} [sim:duration=${TASK_MS}]`,
				ref: `row-${i}`,
				task_id: `task_${i.toString(16).padStart(32, '0')}`,
			},
			observations,
			timer: setTimeout(() => undefined, TASK_MS),
		});
	}
	gc();
	const after = process.memoryUsage().heapUsed;
	for (const h of held) clearTimeout(h.timer);
	return Math.max(0, after - before);
}

function parkedItemsBytes(): number {
	const items = Array.from({ length: TASKS }, (_, i) => ({
		json: {
			task_id: `task_${i.toString(16).padStart(32, '0')}`,
			status: 'processing',
			created_time: new Date(0).toISOString(),
			model: 'vidmodel-1.5-pro',
			reference: `row-${i}`,
			submitted_at: new Date(0).toISOString(),
			media_generation_wait: {
				parked: true,
				index: i,
				node: 'Generate',
				taskId: `task_${i.toString(16).padStart(32, '0')}`,
				submittedAt: 0,
				parkedAt: 0,
				deadline: 0,
				// HMAC-SHA256, base64url (parkState.ts).
				seal: 'x'.repeat(43),
			},
		},
		pairedItem: { item: i },
	}));
	return Buffer.byteLength(JSON.stringify(items));
}

async function main() {
	const sim = await startSimulator({ apiKey: 'bench-durable-key', defaultDurationMs: TASK_MS });
	try {
		const random = seeded(12);
		const durations = Array.from({ length: TASKS }, () =>
			Math.round(TASK_MS * (0.95 + random() * 0.1)),
		);
		let pollReads = 0;
		const lagged: number[] = [];
		for (const d of durations) {
			const run = await simulateTask(sim, d, adaptiveSchedule, 'reported');
			pollReads += run.requests;
			lagged.push(d + run.lagMs);
		}
		const held50 = heldWithWorkers(lagged, 50);
		const held200 = heldWithWorkers(lagged, 200);
		sim.reset();

		const { submitMs, checkMs } = await parkedRequests(sim);
		const heap = await pollingHeap(Math.round(pollReads / TASKS));
		const dbBytes = parkedItemsBytes();

		const rows: Array<Array<string | number>> = [
			[
				'200 tasks × 10 min',
				'status reads (total)',
				'reads while waiting',
				'execution held',
				'memory held while waiting',
			],
			[
				'polling, Max Tasks in Flight 50 (default)',
				pollReads,
				pollReads,
				minutes(held50),
				`${kb(heap)} heap in a running n8n process (a worker slot in queue mode)`,
			],
			[
				'polling, Max Tasks in Flight 200',
				pollReads,
				pollReads,
				minutes(held200),
				`${kb(heap)} heap in a running n8n process (a worker slot in queue mode)`,
			],
			[
				'parked until the callbacks',
				TASKS * 2,
				`${TASKS} (1 per callback)`,
				`${((submitMs + checkMs) / 1000).toFixed(2)} s before parking (+ the downloads after)`,
				`0 in any process; ${kb(dbBytes)} in the execution's database row`,
			],
		];
		const machine = {
			date: new Date().toISOString(),
			...provenance(['node', '--expose-gc', '--import', 'tsx', 'bench/durable.ts']),
			node: process.version,
		};
		const notes =
			`Polling: the node's schedule on the simulator's clock, ${(pollReads / TASKS).toFixed(1)} reads per task; held = durations + poll lag laid out on the workers.\n` +
			`Parked: submit ${Math.round(submitMs)} ms + status check ${Math.round(checkMs)} ms measured over HTTP to the simulator; reads counted by the mode's construction (e2e checks the bound).\n` +
			`Heap measured ${typeof (globalThis as { gc?: unknown }).gc === 'function' ? 'with' : 'WITHOUT (run node with --expose-gc)'} forced GC.\n`;
		const printed = [
			`# bench/durable.ts ${machine.date} (${machine.commit}), Node ${machine.node}`,
			'',
			'## Park Until Callbacks against polling in the execution',
			table(rows),
			'',
			notes,
		].join('\n');
		process.stdout.write(`${printed}\n`);
		const out = path.join(__dirname, 'results', 'durable.json');
		const parkedVsPolling = {
			...{ tasks: TASKS, taskMs: TASK_MS, pollReads, held50, held200, submitMs, checkMs },
			...{ heapBytes: heap, parkedItemsBytes: dbBytes },
		};
		fs.writeFileSync(out, `${JSON.stringify({ machine, parkedVsPolling }, null, '\t')}\n`);
		fs.writeFileSync(out.replace(/\.json$/, '.txt'), printed);
		regenerateDocs(out);
	} finally {
		await sim.close();
	}
}

void main();
