// Soak: 200 tasks through the Media Generation node (real n8n engine, real HTTP to the
// simulator) while the simulator injects 429s, 5xx, dropped connections, malformed bodies,
// truncated downloads and failed tasks. What a user relies on, checked item by item:
//  - every input item comes out once: a result, or an error that carries its task_id, or (when
//    the answer to its submission was lost) an error saying it may have been accepted;
//  - nothing is paid for twice: after any answer other than a 429 the prompt is never
//    submitted again, and no prompt has two tasks on the service;
//  - the API key appears in no output, error, log line, and in no request to the file host.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import { randomUUID } from 'node:crypto';

import type { INodeExecutionData } from 'n8n-workflow';

import { runWorkflow, type RunResult } from '../harness';
import { startSimulator, type FaultRule, type RequestLogEntry, type Simulator } from '../simulator';
import { GENERATION_NODE, generationWorkflow, pairedIndex } from '../../bench/lib/workflow';
import { seeded } from '../../bench/lib/stats';
import { captureOutput, type Capture } from './capture';

const ITEMS = 200;
const FAILED_SHARE = 0.1;
const FILE_SIZE = 24_000;
const SEED = 20261122;

// Per request, each endpoint fails about 20% of the time in total (rules are tried in order,
// the first that fires answers). Submit faults "before" reject the request before a task
// exists; "after" ones create (and would bill) the task, then lose the answer.
const FAULTS: FaultRule[] = [
	{ endpoint: 'submit', when: 'before', kind: '429', rate: 0.08, retryAfter: 1 },
	{ endpoint: 'submit', when: 'before', kind: '500', rate: 0.03 },
	{ endpoint: 'submit', when: 'after', kind: 'drop', rate: 0.03 },
	{ endpoint: 'submit', when: 'after', kind: 'malformed', rate: 0.03 },
	{ endpoint: 'submit', when: 'after', kind: '502', rate: 0.03 },
	{ endpoint: 'status', kind: '429', rate: 0.05, retryAfter: 1 },
	{ endpoint: 'status', kind: '500', rate: 0.03 },
	{ endpoint: 'status', kind: '502', rate: 0.03 },
	{ endpoint: 'status', kind: '503', rate: 0.03 },
	{ endpoint: 'status', kind: 'drop', rate: 0.03 },
	{ endpoint: 'status', kind: 'malformed', rate: 0.02 },
	{ endpoint: 'status', kind: 'code', rate: 0.02 },
	{ endpoint: 'file', kind: 'truncate', rate: 0.08 },
	{ endpoint: 'file', kind: 'drop', rate: 0.05 },
	{ endpoint: 'file', kind: '503', rate: 0.04 },
	{ endpoint: 'file', kind: '500', rate: 0.03 },
];

const marker = (i: number) => `[item ${i}]`;
const promptOf = (req: RequestLogEntry) =>
	String((req.body as { input?: { prompt?: unknown } } | undefined)?.input?.prompt ?? '');

describe('soak: 200 tasks under injected faults', () => {
	let sim: Simulator;
	let capture: Capture;
	let result: RunResult;
	let failing: Set<number>;
	const apiKey = `soak-key-${randomUUID()}`;

	beforeAll(async () => {
		sim = await startSimulator({ apiKey, seed: SEED });
		const random = seeded(SEED);
		failing = new Set();
		const items = Array.from({ length: ITEMS }, (_, i) => {
			const duration = 300 + Math.round(random() * 2_700);
			const fail = random() < FAILED_SHARE;
			if (fail) failing.add(i);
			const markers = `[sim:duration=${duration}] [sim:files=1] [sim:size=${FILE_SIZE}]`;
			return {
				prompt: `soak ${marker(i)} ${markers}${fail ? ` [sim:fail=soak failure ${i}]` : ''}`,
			};
		});
		for (const rule of FAULTS) sim.faults.add(rule);
		capture = await captureOutput();
		try {
			result = await runWorkflow(generationWorkflow({ onError: 'continueErrorOutput' }), {
				// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
				credentials: {
					mediaGenerationApi: { apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
				},
				items,
			});
		} finally {
			capture.stop();
		}
	}, 240_000);

	afterAll(async () => {
		await sim?.close();
	});

	const outputs = () => ({
		ok: result.outputOf(GENERATION_NODE, 0),
		failed: result.outputOf(GENERATION_NODE, 1),
	});

	it('ran to the end and injected every kind of fault', () => {
		expect(result.error).toBeUndefined();
		expect(result.status).toBe('success');
		// Every kind of fault was injected: a soak that injected nothing would prove nothing.
		const kinds: Record<string, (r: RequestLogEntry) => boolean> = {
			'429': (r) => r.fault === '429',
			'5xx': (r) => ['500', '502', '503'].includes(r.fault ?? ''),
			'dropped connection': (r) => r.fault === 'drop',
			'malformed body': (r) => r.fault === 'malformed' || r.fault === 'code',
			'truncated download': (r) => r.fault === 'truncate',
			'submit answer lost after acceptance': (r) =>
				r.endpoint === 'submit' && r.taskId !== undefined && r.fault !== undefined,
		};
		const counts = Object.fromEntries(
			Object.entries(kinds).map(([name, test]) => [name, sim.requests.filter(test).length]),
		);
		expect(Object.entries(counts).filter(([, n]) => n === 0)).toEqual([]);
		expect(failing.size).toBeGreaterThan(0);
		const faulted = sim.requests.filter((r) => r.fault).length;
		const share = faulted / sim.requests.length;
		process.stdout.write(
			`soak: ${sim.requests.length} requests, ${faulted} faulted (${(share * 100).toFixed(1)}%), ` +
				`${outputs().ok.length} results, ${outputs().failed.length} error items, ${(result.durationMs / 1000).toFixed(1)} s; ` +
				`${failing.size} tasks fail on the service; faults ${JSON.stringify(counts)}\n`,
		);
		expect(share).toBeGreaterThan(0.1);
	});

	it('accounts for every input item exactly once', () => {
		const { ok, failed } = outputs();
		const seen = new Map<number, Array<{ kind: 'ok' | 'error'; item: INodeExecutionData }>>();
		for (const [kind, list] of [
			['ok', ok],
			['error', failed],
		] as const) {
			for (const item of list) {
				const index = pairedIndex(item);
				expect(index).toEqual(expect.any(Number));
				seen.set(index!, [...(seen.get(index!) ?? []), { kind, item }]);
			}
		}
		const missing = Array.from({ length: ITEMS }, (_, i) => i).filter((i) => !seen.has(i));
		expect(missing).toEqual([]);
		const duplicated = [...seen].filter(([, v]) => v.length !== 1).map(([i]) => i);
		expect(duplicated).toEqual([]);
		expect(ok.length + failed.length).toBe(ITEMS);
	});

	it('never submits a prompt again once the service may have accepted it', () => {
		for (let i = 0; i < ITEMS; i++) {
			const submits = sim.requests.filter(
				(r) => r.endpoint === 'submit' && promptOf(r).includes(marker(i)),
			);
			// Every submission but the last was refused with a 429 before a task existed.
			for (const earlier of submits.slice(0, -1)) {
				expect({ item: i, fault: earlier.fault, taskId: earlier.taskId }).toEqual({
					item: i,
					fault: '429',
					taskId: undefined,
				});
			}
			const tasks = sim.tasks().filter((t) => t.prompt.includes(marker(i)));
			expect({ item: i, tasks: tasks.length <= 1 }).toEqual({ item: i, tasks: true });
		}
	});

	it('gives each item the outcome its task had on the service', async () => {
		const { ok, failed } = outputs();
		const byIndex = new Map<number, { kind: 'ok' | 'error'; item: INodeExecutionData }>();
		for (const item of ok) byIndex.set(pairedIndex(item)!, { kind: 'ok', item });
		for (const item of failed) byIndex.set(pairedIndex(item)!, { kind: 'error', item });

		// Every violation is listed, so that one run shows them all.
		const problems: string[] = [];
		const check = (i: number, condition: boolean, what: string, shown: string) => {
			if (!condition) problems.push(`item ${i}: ${what}; got ${shown.slice(0, 400)}`);
		};
		const tally = { results: 0, failedTasks: 0, lostAnswers: 0, rateLimited: 0, otherErrors: 0 };
		for (let i = 0; i < ITEMS; i++) {
			const out = byIndex.get(i)!;
			// All the user sees of an error item: its json (error, details) and any error object.
			const text = JSON.stringify({ json: out.item.json, error: out.item.error });
			const headline = String(out.item.json.error ?? out.item.json.message ?? '');
			const task = sim.tasks().find((t) => t.prompt.includes(marker(i)));
			const submits = sim.requests.filter(
				(r) => r.endpoint === 'submit' && promptOf(r).includes(marker(i)),
			);
			const last = submits[submits.length - 1];

			if (out.kind === 'ok') {
				tally.results++;
				check(
					i,
					task !== undefined && out.item.json.task_id === task.id,
					`result carries its task_id ${task?.id}`,
					text,
				);
				check(i, !failing.has(i), 'a task that failed on the service is not a result', text);
				const onDisk = out.item.binary?.data ? result.binaryPath(out.item, 'data') : undefined;
				check(
					i,
					!!onDisk && fs.statSync(onDisk).size === FILE_SIZE,
					`result has its ${FILE_SIZE}-byte file`,
					JSON.stringify(out.item.binary ?? {}),
				);
			} else if (last?.fault === '429') {
				// Still rate-limited after the node's retries: rejected, nothing was created.
				tally.rateLimited++;
				check(i, task === undefined, 'no task after a final 429', String(task?.id));
				check(i, /429|rate/i.test(text), 'the error names the rate limit', text);
			} else if (!last || last.status !== 200 || last.fault !== undefined) {
				// No task_id reached the node: it must say the task may exist, and that it did not
				// send it again (a generic "retry" headline would invite a double-billed repeat).
				tally.lostAnswers++;
				check(
					i,
					/may have been accepted/i.test(headline),
					'the headline says the submission may have been accepted',
					headline,
				);
				check(
					i,
					/not (been )?(sent|submitted) again|not re-?submitted/i.test(text),
					'the error says it was not sent again',
					text,
				);
			} else if (!task) {
				problems.push(`item ${i}: submit answered 200 but the simulator has no task`);
			} else {
				// Any other error keeps the task_id so the user can pick the task up.
				check(i, text.includes(task.id), `the error carries task_id ${task.id}`, text);
				if (failing.has(i)) {
					tally.failedTasks++;
					check(
						i,
						text.includes(`soak failure ${i}`),
						"the error carries the service's error_message",
						text,
					);
				} else {
					tally.otherErrors++;
				}
			}
		}
		process.stdout.write(`soak outcomes: ${JSON.stringify(tally)}\n`);
		expect(problems).toEqual([]);
		// Reads and downloads are retried: transient faults must not turn many good tasks into errors.
		expect(tally.results).toBeGreaterThan(ITEMS / 2);
	});

	it('never reveals the API key in output, errors, logs or requests to the file host', () => {
		expect(result.dump()).not.toContain(apiKey);
		// The capture is wired: n8n's engine itself logs through it at debug level.
		expect(capture.lines.length).toBeGreaterThan(0);
		const leaked = capture.lines.filter((line) => line.includes(apiKey));
		expect(leaked).toEqual([]);
		const fileRequests = sim.requests.filter((r) => r.origin === 'files');
		expect(fileRequests.length).toBeGreaterThan(0);
		for (const r of fileRequests) {
			expect(JSON.stringify(r.headers)).not.toContain(apiKey);
			expect(r.path).not.toContain(apiKey);
			expect(r.headers.authorization).toBeUndefined();
		}
	});
});
