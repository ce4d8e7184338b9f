// `npm run bench:n8n -- --burst`: the callback burst of issue 27 (point 3) in ONE real n8n 2.41.1
// (`n8n start`, SQLite, this package installed as a community package) against the simulator.
// A published Media Generation Trigger (Verify and Download on) receives the callbacks of tasks
// submitted through the Media Generation node (a Webhook → Split → Generate workflow, not
// waiting, Callback URL = the trigger's production URL, so every URL is signed by the node). The
// tasks finish at once; their own callbacks are held back (a fault rule of the simulator), then
// all are sent at the same moment by a sender that delivers once with a 10 s timeout (the
// simulator's sender, as a service that never retries), while CPU burners (busy loops in child
// processes, bounded in time) load the machine's cores. Rounds: 4 burners × 50 callbacks, then
// 16 burners × 100 (`--rounds 16x100,4x50` to choose).
//
// Per round: the answers (200, 202, 503, other, none within 10 s), answer times, and, once the
// runs have settled (a 202 'confirming' starts its run up to 60 s later), the runs started per
// task (none twice) and the tasks without a run; n8n's process tree's memory (the server and
// its task runner) per callback in progress, beside the floor a user would compare with: the
// same callbacks sent to n8n's own Webhook node (answering at once) followed by an HTTP Request
// node reading the task's status. Figures only: nothing here passes or fails.
// Loopback only: n8n, the simulator and the sender run on 127.0.0.1.
//
// `--flood` (issue 35): instead of the rounds, 500 forged callbacks at 50 a second to one
// genuine callback URL (one whose callback was delivered: the attacker has seen it), beside 20
// genuine callbacks sent among them; `--flood-unsigned`: the same with Accept Unsigned Callbacks
// on and every forged callback unsigned. Reports the runs per genuine task, the forged runs, the
// status reads for forged ids and the peak of n8n's process tree; results in n8n-flood.json.
/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply; the CPU burners are child processes of this script */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../test/simulator';
import { createApiKey, executionsOf, newOwner } from '../test/e2e/executions-api';
import { N8nInstance, removeEmptyRunFolder } from '../test/e2e/n8n';
import {
	credentialImport,
	mediaNode,
	splitRows,
	triggerWorkflow,
	webhookNode,
	workflow,
} from '../test/e2e/workflows';
import { npmRun, provenance } from './lib/provenance';
import { round, table } from './lib/stats';
import { regenerateDocs } from '../tools/docs-figures';

const TRIGGER_WF = 'burstTrigger001';
const SUBMIT_WF = 'burstSubmit0001';
const TRIGGER_NODE = 'Media Generation Trigger';
/** The sender delivers each callback once and gives up on an answer after this (a service's timeout). */
export const SENDER_TIMEOUT_MS = 10_000;
/** How long a round waits for runs after the burst: the trigger confirms for up to 60 s. */
const SETTLE_MS = 90_000;
/** Burners stop by themselves after this, whatever happens to this process. */
const BURN_MS = 60_000;

const printed: string[] = [];
function say(line: string) {
	printed.push(line);
	process.stdout.write(`${line}\n`);
}
const load = () =>
	os
		.loadavg()
		.map((l) => l.toFixed(1))
		.join(' ');

interface Round {
	burners: number;
	callbacks: number;
	answers: Record<string, number>;
	answerMs: { median: number; p90: number; max: number };
	runsPerTask: Record<string, number>;
	tasksWithoutRun: number;
	tasksRunTwice: number;
	loadBefore: string;
	loadDuring: string;
	/**
	 * "Database ping failed" lines n8n logged during the round: while its ping fails, n8n answers
	 * every request 503 "Database is not ready!" before any node sees it (see docs/reliability.md).
	 */
	dbPingFailures: number;
	/** Status reads the trigger made: one per callback that reached the trigger's code. */
	statusReads: number;
	/** Callbacks answered 202 "confirming" whose status read then failed: nothing started. */
	unconfirmedAfterAnswer: number;
	/** Webhook calls n8n refused before the trigger's code ran, by n8n's message. */
	refusedByN8n: Record<string, number>;
	/**
	 * The n8n server's resident memory before the round and at its highest (sampled every
	 * 250 ms): n8n 2.x holds an expression isolate for every webhook call in progress.
	 */
	n8nRssMb: { before?: number; peak: number };
	/**
	 * n8n's process tree (the server and its task runner): before the burst, at its peak, and the
	 * difference per callback of the burst (all in progress at once).
	 */
	n8nTreeMb: { before?: number; peak: number; perCallback?: number };
	/**
	 * The floor: the same callbacks sent at once to n8n's own Webhook node (answering at once),
	 * each run reading the task's status with an HTTP Request node, under the same burners.
	 */
	floor?: FloorRound;
	/**
	 * CPU time the n8n server used from the burst to the end of the round (its task runner is a
	 * process of its own, not counted): what the callbacks cost n8n, whatever else loads the
	 * machine.
	 */
	n8nCpuMs?: number;
}

interface FloorRound {
	answers: Record<string, number>;
	runs: number;
	treeMb: { before?: number; peak: number; perCallback?: number };
}

const perCallback = (before: number | undefined, peak: number, callbacks: number) =>
	before === undefined ? undefined : round((peak - before) / callbacks, 1);

const FLOOR_WF = 'burstFloor00001';

/** n8n's own Webhook node (answers at once) → HTTP Request reading the task's status. */
function floorWorkflow(path: string, baseUrl: string, apiKey: string) {
	return workflow(
		FLOOR_WF,
		[
			webhookNode(path, 'onReceived'),
			{
				id: 'n-status',
				name: 'Get Status',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [200, 0],
				parameters: {
					url: `=${baseUrl}/api/generate/status/{{ $json.body.data.task_id }}`,
					sendHeaders: true,
					headerParameters: { parameters: [{ name: 'Authorization', value: `Bearer ${apiKey}` }] },
					options: {},
				},
			},
		],
		{ Webhook: { main: [[{ node: 'Get Status', type: 'main', index: 0 }]] } },
	);
}

/** Sends the round's callbacks to the floor workflow at once and waits for its runs to end. */
async function floorRound(
	n8n: N8nInstance,
	apiKey: string,
	url: string,
	bodies: unknown[],
	burners: number,
): Promise<FloorRound> {
	const before = new Set((await executionsOf(n8n, apiKey, FLOOR_WF, false)).map((e) => e.id));
	const tree = treeSampler(n8n.serverPid);
	const burning = startBurners(burners, BURN_MS);
	const answers: Record<string, number> = {};
	let runs = 0;
	try {
		await new Promise((resolve) => setTimeout(resolve, burners > 0 ? 5_000 : 0));
		const statuses = await Promise.all(
			bodies.map(async (body) =>
				fetch(url, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify(body),
					signal: AbortSignal.timeout(SENDER_TIMEOUT_MS),
				}).then(
					async (res) => (await res.text(), res.status),
					() => 0,
				),
			),
		);
		stopBurners(burning);
		for (const st of statuses) {
			const key = st === 0 ? 'no answer within 10 s' : String(st);
			answers[key] = (answers[key] ?? 0) + 1;
		}
		const deadline = Date.now() + SETTLE_MS;
		while (Date.now() < deadline) {
			const listed = await executionsOf(n8n, apiKey, FLOOR_WF, false).catch(() => undefined);
			const fresh = (listed ?? []).filter((e) => !before.has(e.id));
			runs = fresh.length - unsettled(fresh);
			if (listed && runs >= (answers['200'] ?? 0) && unsettled(fresh) === 0) break;
			await new Promise((resolve) => setTimeout(resolve, 1_000));
		}
	} finally {
		stopBurners(burning);
	}
	const peak = tree.stop();
	return {
		answers,
		runs,
		treeMb: {
			before: tree.before,
			peak,
			perCallback: perCallback(tree.before, peak, bodies.length),
		},
	};
}

/** Answered with a 2xx within the sender's 10 s. */
const answered2xx = (answers: Record<string, number>) =>
	Object.entries(answers)
		.filter(([k]) => /^2\d\d$/.test(k))
		.reduce((s, [, n]) => s + n, 0);

/**
 * The row of issue 51: n8n's own Webhook node (the floor) beside the Trigger in the same round,
 * under the same burners: answers within 10 s, runs per task, and the Trigger's CPU per callback.
 */
function versus(r: Round) {
	const floorAnswered = r.floor ? answered2xx(r.floor.answers) : 0;
	const triggerAnswered = answered2xx(r.answers);
	const ran = Object.entries(r.runsPerTask)
		.filter(([n]) => n !== '0')
		.reduce((s, [, k]) => s + k, 0);
	const triggerRuns = Object.entries(r.runsPerTask).reduce((s, [n, k]) => s + Number(n) * k, 0);
	return {
		floorAnswered,
		triggerAnswered,
		share: floorAnswered > 0 ? round((100 * triggerAnswered) / floorAnswered, 0) : undefined,
		floorRunsPerTask: r.floor ? round(r.floor.runs / r.callbacks, 2) : undefined,
		triggerRunsPerTask: round(triggerRuns / r.callbacks, 2),
		// Callbacks answered 2xx whose task has no run (lost for a sender that does not retry).
		answeredWithoutRun: Math.max(0, triggerAnswered - ran),
		cpuMsPerCallback: r.n8nCpuMs === undefined ? undefined : Math.round(r.n8nCpuMs / r.callbacks),
	};
}

const pingFailures = (n8n: N8nInstance) =>
	(n8n.serverLogText().match(/Database ping failed/g) ?? []).length;
/** The trigger's warning for a callback answered "confirming" whose status read then failed. */
const unconfirmed = (n8n: N8nInstance) =>
	(n8n.serverLogText().match(/could not be confirmed after the callback was answered/g) ?? [])
		.length;

/**
 * n8n's own refusals of webhook calls, by message ("Error in handling webhook request POST
 * /webhook/…: <message>"): the calls n8n ended before the trigger's code ran (a body whose sender
 * had hung up before n8n read it is one: "Request body stream was aborted…").
 */
function webhookErrors(n8n: N8nInstance): Record<string, number> {
	const counts: Record<string, number> = {};
	for (const m of n8n
		.serverLogText()
		.matchAll(/Error in handling webhook request \S+ \S+: ([^\n{]*)/g)) {
		const key = m[1].trim().slice(0, 80);
		counts[key] = (counts[key] ?? 0) + 1;
	}
	return counts;
}
const minus = (now: Record<string, number>, before: Record<string, number>) =>
	Object.fromEntries(
		Object.entries(now)
			.map(([k, n]) => [k, n - (before[k] ?? 0)] as const)
			.filter(([, n]) => n > 0),
	);

/** Executions of the list not yet ended. */
const unsettled = (list: Array<{ status: string }>) =>
	list.filter((e) => ['running', 'new', 'waiting'].includes(e.status)).length;

/** The n8n server's resident memory, in MB (Linux), or undefined. */
function rssMb(pid: number | undefined): number | undefined {
	if (pid === undefined) return undefined;
	try {
		const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
		return m ? Math.round(Number(m[1]) / 1024) : undefined;
	} catch {
		return undefined;
	}
}

/** The resident memory of a process and all its descendants (n8n's task runner), in MB (Linux). */
function treeRssMb(root: number | undefined): number | undefined {
	if (root === undefined) return undefined;
	const children = new Map<number, number[]>();
	for (const name of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(name)) continue;
		try {
			const ppid = Number(
				fs.readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')[1],
			);
			children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
		} catch {
			// Ended meanwhile.
		}
	}
	let total = 0;
	const stack = [root];
	while (stack.length > 0) {
		const pid = stack.pop() as number;
		total += rssMb(pid) ?? 0;
		stack.push(...(children.get(pid) ?? []));
	}
	return total;
}

/** The processes of the tree, with their command and resident memory (MB). */
function treeMembers(
	root: number | undefined,
): Array<{ pid: number; command: string; mb: number }> {
	if (root === undefined) return [];
	const out: Array<{ pid: number; command: string; mb: number }> = [];
	const stack = [root];
	const all = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n));
	while (stack.length > 0) {
		const pid = stack.pop() as number;
		let command = '';
		try {
			command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, 3).join(' ');
		} catch {
			continue;
		}
		out.push({ pid, command: command.slice(-80), mb: rssMb(pid) ?? 0 });
		for (const name of all) {
			try {
				const ppid = Number(
					fs.readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')[1],
				);
				if (ppid === pid) stack.push(Number(name));
			} catch {
				// Ended meanwhile.
			}
		}
	}
	return out;
}

/** Samples the tree's memory every 250 ms; `stop()` gives the peak. */
function treeSampler(pid: number | undefined) {
	const before = treeRssMb(pid);
	let peak = before ?? 0;
	const timer = setInterval(() => {
		peak = Math.max(peak, treeRssMb(pid) ?? 0);
	}, 250);
	return {
		before,
		stop: () => {
			clearInterval(timer);
			return Math.max(peak, treeRssMb(pid) ?? 0);
		},
	};
}

/** CPU time the process has used so far (user + system, all threads), in ms (Linux). */
function cpuMs(pid: number | undefined): number | undefined {
	if (pid === undefined) return undefined;
	try {
		// Fields 14 and 15 of /proc/PID/stat, after the parenthesised command name.
		const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
		return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
	} catch {
		return undefined;
	}
}

function parseRounds(argv: string[]): Array<{ burners: number; callbacks: number }> {
	const i = argv.indexOf('--rounds');
	const text = i >= 0 ? argv[i + 1] : '4x50,16x100';
	return text.split(',').map((r) => {
		const [b, c] = r.split('x').map(Number);
		if (!Number.isInteger(b) || !Number.isInteger(c) || b < 0 || c < 1)
			throw new Error(`--rounds: "${r}" is not BURNERSxCALLBACKS`);
		return { burners: b, callbacks: c };
	});
}

/** A busy loop per burner in its own process, ending by itself after `ms`. */
function startBurners(count: number, ms: number): ChildProcess[] {
	const code = `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x++;`;
	return Array.from({ length: count }, () => {
		const burner = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
		if (burner.pid !== undefined) os.setPriority(burner.pid, 0);
		return burner;
	});
}

function stopBurners(burners: ChildProcess[]) {
	for (const b of burners) if (b.exitCode === null) b.kill('SIGKILL');
}

function percentile(sorted: number[], p: number): number {
	if (sorted.length === 0) return 0;
	return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

/**
 * Tasks submitted through the Media Generation node (the submit workflow), finished at the
 * service when this returns; their own callbacks are held back by the caller's fault rule.
 */
async function submitThroughNode(
	n8n: N8nInstance,
	sim: Simulator,
	submitPath: string,
	rows: Array<{ ref: string; prompt: string }>,
): Promise<string[]> {
	// n8n may answer before it registered the published workflows' webhooks: a 404 is asked
	// again for a minute (nothing was submitted).
	let submitted: Response;
	for (let tries = 0; ; tries++) {
		submitted = await fetch(`${n8n.baseUrl}/webhook/${submitPath}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ rows }),
		});
		if (submitted.status !== 404 || tries >= 30) break;
		await new Promise((resolve) => setTimeout(resolve, 2_000));
	}
	const items = (await submitted.json()) as Array<{ task_id?: string }>;
	if (!submitted.ok || !Array.isArray(items) || items.length !== rows.length)
		throw new Error(`submitting ${rows.length} tasks: HTTP ${submitted.status}`);
	const ids = items.map((i) => String(i.task_id));
	// Finished at the service before the callbacks are sent.
	while (!ids.every((id) => sim.task(id)?.endedAt !== undefined))
		await new Promise((resolve) => setTimeout(resolve, 100));
	return ids;
}

/**
 * The flood's pattern (FLOOD.forged bodies at FLOOD.perSecond, the genuine bodies among them)
 * sent to the floor workflow: what n8n's own Webhook node does with the same traffic, every call
 * starting a run that reads a status.
 */
async function floodFloor(n8n: N8nInstance, apiKey: string, url: string, genuine: unknown[]) {
	const before = new Set((await executionsOf(n8n, apiKey, FLOOR_WF, false)).map((e) => e.id));
	const tree = treeSampler(n8n.serverPid);
	const sent: Array<Promise<number>> = [];
	const post = (body: unknown) =>
		sent.push(
			fetch(url, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
				signal: AbortSignal.timeout(SENDER_TIMEOUT_MS),
			}).then(
				async (res) => (await res.text(), res.status),
				() => 0,
			),
		);
	const every = Math.floor(FLOOD.forged / FLOOD.genuine);
	const started = Date.now();
	let next = 0;
	for (let i = 0; i < FLOOD.forged; i++) {
		const id = `task_${randomUUID().replace(/-/g, '')}`;
		post({ code: 200, data: { task_id: id, status: 'finished' } });
		if (i % every === Math.floor(every / 2) && next < genuine.length) post(genuine[next++]);
		const due = started + ((i + 1) * 1000) / FLOOD.perSecond;
		await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
	}
	const answers: Record<string, number> = {};
	for (const st of await Promise.all(sent)) {
		const key = st === 0 ? 'no answer within 10 s' : String(st);
		answers[key] = (answers[key] ?? 0) + 1;
	}
	let runs = 0;
	const deadline = Date.now() + SETTLE_MS;
	while (Date.now() < deadline) {
		const listed = await executionsOf(n8n, apiKey, FLOOR_WF, false).catch(() => undefined);
		const fresh = (listed ?? []).filter((e) => !before.has(e.id));
		runs = fresh.length - unsettled(fresh);
		if (listed && runs >= (answers['200'] ?? 0) && unsettled(fresh) === 0) break;
		await new Promise((resolve) => setTimeout(resolve, 2_000));
	}
	return { answers, runs, treeMb: { before: tree.before, peak: tree.stop() } };
}

/** Forged callbacks of the flood, genuine ones among them. */
const FLOOD = { forged: 500, perSecond: 50, genuine: 20 };

interface FloodResult {
	unsigned: boolean;
	forged: number;
	genuine: number;
	seconds: number;
	answers: { forged: Record<string, number>; genuine: Record<string, number> };
	runsPerGenuineTask: Record<string, number>;
	forgedRuns: number;
	statusReads: { forged: number; genuine: number };
	treeMb: { before?: number; peak: number };
	/** The n8n server process alone (the tree less its task runner). */
	serverMb: { before?: number; peak: number };
	/** The tree's processes when n8n had started, before any task was submitted. */
	idleTree: Array<{
		pid: number;
		command: string;
		mb: number;
	}> /** The genuine callbacks' bodies (sent again to the floor). */;
	genuineBodies: unknown[];
}

/**
 * The flood of issue 35: the attacker has seen one delivered callback URL (the first genuine
 * task's) and sends FLOOD.forged callbacks with task ids of its making, FLOOD.perSecond a
 * second, to it (or, `unsigned`, to the trigger's bare URL with Accept Unsigned on); the other
 * genuine callbacks come among them, one every FLOOD.forged / FLOOD.genuine forged ones.
 */
async function runFlood(
	n8n: N8nInstance,
	sim: Simulator,
	apiKey: string,
	submitPath: string,
	triggerUrl: string,
	unsigned: boolean,
): Promise<FloodResult> {
	const idleTree = treeMembers(n8n.serverPid);
	const rows = Array.from({ length: FLOOD.genuine }, (_, i) => ({
		ref: `flood-${i}`,
		prompt: `flood ${i} [sim:duration=0]`,
	}));
	const ids = await submitThroughNode(n8n, sim, submitPath, rows);
	const genuine = new Set(ids);
	const before = new Set((await executionsOf(n8n, apiKey, TRIGGER_WF, false)).map((e) => e.id));
	const readsFrom = sim.requests.length;
	const tree = treeSampler(n8n.serverPid);
	const serverBefore = rssMb(n8n.serverPid);
	let serverPeak = serverBefore ?? 0;
	const serverSampler = setInterval(() => {
		serverPeak = Math.max(serverPeak, rssMb(n8n.serverPid) ?? 0);
	}, 250);
	const answers: Array<Promise<{ genuine: boolean; status: number }>> = [];
	const send = (taskId: string, options?: { url: string; body: unknown }) =>
		answers.push(
			sim
				.sendCallback(taskId, options)
				.then((e) => ({ genuine: genuine.has(taskId), status: e.status })),
		);
	// The first genuine callback, delivered: its URL is the one the attacker has seen.
	send(ids[0]);
	await answers[0];
	const target = unsigned ? triggerUrl : sim.task(ids[0])!.callbackUrl!;
	const every = Math.floor(FLOOD.forged / FLOOD.genuine);
	const started = Date.now();
	let next = 1;
	for (let i = 0; i < FLOOD.forged; i++) {
		const id = `task_${randomUUID().replace(/-/g, '')}`;
		send(id, { url: target, body: { code: 200, data: { task_id: id, status: 'finished' } } });
		if (i % every === Math.floor(every / 2) && next < ids.length) send(ids[next++]);
		const due = started + ((i + 1) * 1000) / FLOOD.perSecond;
		await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
	}
	const settled = await Promise.all(answers);
	const seconds = round((Date.now() - started) / 1000, 1);
	const tally = (which: boolean) => {
		const out: Record<string, number> = {};
		for (const a of settled.filter((x) => x.genuine === which)) {
			const key = a.status === 0 ? 'no answer within 10 s' : String(a.status);
			out[key] = (out[key] ?? 0) + 1;
		}
		return out;
	};
	// Runs: until every genuine task has one and nothing is running, or SETTLE_MS.
	const runsOf = new Map<string, number>();
	const deadline = Date.now() + SETTLE_MS;
	for (;;) {
		const listed = await executionsOf(n8n, apiKey, TRIGGER_WF).catch(() => undefined);
		if (listed) {
			const fresh = listed.filter((e) => !before.has(e.id));
			runsOf.clear();
			for (const e of fresh) {
				const item = e.data?.resultData.runData[TRIGGER_NODE]?.[0]?.data?.main[0]?.[0];
				const id = String(item?.json.task_id);
				runsOf.set(id, (runsOf.get(id) ?? 0) + 1);
			}
			if (ids.every((id) => runsOf.has(id)) && unsettled(fresh) === 0) break;
		}
		if (Date.now() > deadline) break;
		await new Promise((resolve) => setTimeout(resolve, 2_000));
	}
	const peak = tree.stop();
	clearInterval(serverSampler);
	const perTask: Record<string, number> = {};
	for (const id of ids) {
		const n = String(runsOf.get(id) ?? 0);
		perTask[n] = (perTask[n] ?? 0) + 1;
	}
	const reads = sim.requests.slice(readsFrom).filter((r) => r.endpoint === 'status');
	return {
		unsigned,
		forged: FLOOD.forged,
		genuine: ids.length,
		seconds,
		answers: { forged: tally(false), genuine: tally(true) },
		runsPerGenuineTask: perTask,
		forgedRuns: [...runsOf.entries()]
			.filter(([id]) => !genuine.has(id))
			.reduce((n, [, runs]) => n + runs, 0),
		statusReads: {
			forged: reads.filter((r) => r.taskId !== undefined && !genuine.has(r.taskId)).length,
			genuine: reads.filter((r) => r.taskId !== undefined && genuine.has(r.taskId)).length,
		},
		treeMb: { before: tree.before, peak },
		serverMb: { before: serverBefore, peak: serverPeak },
		idleTree,
		genuineBodies: ids.slice(1).map((id) => ({ code: 200, data: sim.view(id) })),
	};
}

export async function main(argv: string[]) {
	const rounds = parseRounds(argv);
	// --no-verify: the trigger takes the body's status (no status read before the answer), to
	// tell the status read's share of the answer time from n8n's.
	const verify = !argv.includes('--no-verify');
	// --flood / --flood-unsigned: the flood of issue 35 instead of the rounds (see the top).
	// --floor-only: the rounds' callbacks go to the floor workflow only (n8n's Webhook node +
	// HTTP Request), in an n8n that received nothing else.
	const floorOnly = argv.includes('--floor-only');
	const floors: Array<FloorRound & { burners: number; callbacks: number }> = [];
	const floodUnsigned = argv.includes('--flood-unsigned');
	const flood = floodUnsigned || argv.includes('--flood');
	// --service-first: this process (the simulator and the sender) at a higher CPU priority than
	// n8n and the burners (needs root), as a service on another machine would be.
	const serviceFirst = argv.includes('--service-first');
	// --trigger-version 1: the trigger as workflows made before version 1.1 have it (n8n then
	// evaluates an expression per callback before reading its body); default the current one.
	const versionArg = argv.indexOf('--trigger-version');
	const triggerVersion = versionArg >= 0 ? Number(argv[versionArg + 1]) : 1.1;
	if (![1, 1.1].includes(triggerVersion)) throw new Error('--trigger-version: 1 or 1.1');
	const outArg = argv.indexOf('--out');
	const out =
		outArg >= 0 && argv[outArg + 1]
			? path.resolve(argv[outArg + 1])
			: path.join(
					__dirname,
					'results',
					flood
						? `n8n-flood${floodUnsigned ? '-unsigned' : ''}.json`
						: verify
							? 'n8n-burst.json'
							: 'n8n-burst-no-verify.json',
				);
	say(
		`# bench:n8n --burst ${new Date().toISOString()}, ${os.cpus().length} cores, load ${load()}${verify ? '' : ', Verify off'}${serviceFirst ? ', simulator and sender at priority -10' : ''}, trigger version ${triggerVersion}`,
	);

	// callbackRetries 0: a task's callback is delivered once (the simulator's 10 s timeout).
	const sim = await startSimulator({
		apiKey: `bench-burst-${process.pid}-secret`,
		callbackRetries: 0,
	});
	const n8n = await N8nInstance.create('bench-burst');
	// --n8n-env KEY=VALUE (repeatable): a setting of the n8n server for this run (not of its CLI commands), to compare what n8n's own
	// settings change (e.g. N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE=true).
	const n8nEnv: string[] = [];
	for (const [i, a] of argv.entries()) {
		if (a !== '--n8n-env') continue;
		const [key, ...rest] = (argv[i + 1] ?? '').split('=');
		if (!/^(N8N_[A-Z0-9_]+|NODE_OPTIONS)$/.test(key) || rest.length === 0)
			throw new Error(`--n8n-env: "${argv[i + 1]}" is not N8N_NAME=VALUE`);
		n8nEnv.push(`${key}=${rest.join('=')}`);
	}
	if (n8nEnv.length > 0) say(`n8n settings: ${n8nEnv.join(' ')}`);
	const webhookId = randomUUID();
	const submitPath = `bench-burst-submit-${process.pid}`;
	const floorPath = `bench-burst-floor-${process.pid}`;
	const results: Record<string, unknown> = {
		date: new Date().toISOString(),
		...provenance(npmRun('bench:n8n', argv)),
		cores: os.cpus().length,
	};
	const done: Round[] = [];
	try {
		const triggerUrl = () => `${n8n.baseUrl}/webhook/${webhookId}/media-generation`;
		await n8n.importCredentials([credentialImport(sim.baseUrl, sim.apiKey)]);
		await n8n.importWorkflows([
			triggerWorkflow(
				TRIGGER_WF,
				webhookId,
				{
					event: 'any',
					verify,
					download: true,
					...(floodUnsigned ? { options: { acceptUnsigned: true } } : {}),
				},
				triggerVersion,
			),
			floorWorkflow(floorPath, sim.baseUrl, sim.apiKey),
			workflow(
				SUBMIT_WF,
				[
					webhookNode(submitPath, 'lastNode'),
					splitRows(),
					mediaNode('Submit', {
						resource: 'image',
						operation: 'generate',
						model: 'image-by-id',
						modelId: sim.imageModelId,
						prompt: '={{ $json.prompt }}',
						imageByIdOptions: { size: '1:1', n: 1 },
						waitForCompletion: false,
						options: {
							callbackUrl: triggerUrl(),
							callbackReference: '={{ $json.ref }}',
							maxConcurrentTasks: 10,
						},
					}),
				],
				{
					Webhook: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
					Split: { main: [[{ node: 'Submit', type: 'main', index: 0 }]] },
				},
			),
		]);
		await n8n.cli(['publish:workflow', `--id=${TRIGGER_WF}`], { label: 'publish-trigger' });
		await n8n.cli(['publish:workflow', `--id=${SUBMIT_WF}`], { label: 'publish-submitter' });
		await n8n.cli(['publish:workflow', `--id=${FLOOR_WF}`], { label: 'publish-floor' });
		for (const setting of n8nEnv) {
			const [key, ...rest] = setting.split('=');
			n8n.env[key] = rest.join('=');
		}
		await n8n.start();
		// After n8n started (a child inherits its parent's priority); burners are set back to 0.
		if (serviceFirst) os.setPriority(0, -10);
		const apiKey = (await createApiKey(n8n, newOwner())).key;
		// The tasks' own callbacks are held back; the burst sends them (once each) at one moment.
		sim.faults.add({ endpoint: 'callback', kind: 'drop' });

		if (flood) {
			const f = await runFlood(n8n, sim, apiKey, submitPath, triggerUrl(), floodUnsigned);
			results.flood = { ...f, genuineBodies: undefined };
			say(
				`flood: ${f.forged} forged callbacks in ${f.seconds} s to ${f.unsigned ? "the trigger's unsigned URL (Accept Unsigned on)" : 'a delivered genuine callback URL'}, beside ${f.genuine} genuine: runs per genuine task ${JSON.stringify(f.runsPerGenuineTask)}, forged runs ${f.forgedRuns}; status reads for forged ids ${f.statusReads.forged}, for genuine ones ${f.statusReads.genuine}; forged answered ${JSON.stringify(f.answers.forged)}, genuine ${JSON.stringify(f.answers.genuine)}; n8n's process tree ${f.treeMb.before} MB → peak ${f.treeMb.peak} MB (the server alone ${f.serverMb.before} → ${f.serverMb.peak} MB; when n8n had started: ${f.idleTree.map((p) => `${p.mb} MB ${p.command.split('/').pop()}`).join(', ')})`,
			);
			// The floor under the same flood: n8n's Webhook node + HTTP Request status read.
			const floor = await floodFloor(
				n8n,
				apiKey,
				`${n8n.baseUrl}/webhook/${floorPath}`,
				f.genuineBodies,
			);
			results.floodFloor = floor;
			say(
				`the same flood to n8n's own Webhook node + HTTP Request (the floor): answers ${JSON.stringify(floor.answers)}, ${floor.runs} runs; n8n's process tree ${floor.treeMb.before} → peak ${floor.treeMb.peak} MB`,
			);
		}
		for (const [r, { burners, callbacks }] of (flood ? [] : rounds).entries()) {
			const rows = Array.from({ length: callbacks }, (_, i) => ({
				ref: `r${r}-${i}`,
				prompt: `burst ${r} ${i} [sim:duration=0]`,
			}));
			const ids = await submitThroughNode(n8n, sim, submitPath, rows);
			if (floorOnly) {
				// The floor alone, in an n8n that received nothing else: its memory from a clean start.
				const floor = await floorRound(
					n8n,
					apiKey,
					`${n8n.baseUrl}/webhook/${floorPath}`,
					ids.map((id) => ({ code: 200, data: sim.view(id) })),
					burners,
				);
				floors.push({ burners, callbacks, ...floor });
				say(
					`${burners} burners × ${callbacks} callbacks to n8n's Webhook node + HTTP Request (the floor, alone): answers ${JSON.stringify(floor.answers)}, ${floor.runs} runs; n8n's process tree ${floor.treeMb.before} → peak ${floor.treeMb.peak} MB, ${floor.treeMb.perCallback} MB per callback`,
				);
				continue;
			}
			const before = new Set((await executionsOf(n8n, apiKey, TRIGGER_WF, false)).map((e) => e.id));

			const pingFailuresBefore = pingFailures(n8n);
			const unconfirmedBefore = unconfirmed(n8n);
			const refusedBefore = webhookErrors(n8n);
			const readsBefore = sim.count('status');
			const loadBefore = load();
			const rssBefore = rssMb(n8n.serverPid);
			const tree = treeSampler(n8n.serverPid);
			const cpuBefore = cpuMs(n8n.serverPid);
			let rssPeak = rssBefore ?? 0;
			const sampler = setInterval(() => {
				rssPeak = Math.max(rssPeak, rssMb(n8n.serverPid) ?? 0);
			}, 250);
			const burning = startBurners(burners, BURN_MS);
			let loadDuring = loadBefore;
			try {
				// Let the burners take the cores before the burst.
				await new Promise((resolve) => setTimeout(resolve, burners > 0 ? 5_000 : 0));
				const sent = Date.now();
				const answers = await Promise.all(
					ids.map(async (id) => {
						const entry = await sim.sendCallback(id);
						return { status: entry.status, ms: entry.at - sent };
					}),
				);
				loadDuring = load();
				stopBurners(burning);

				const counts: Record<string, number> = {};
				for (const a of answers) {
					const key = a.status === 0 ? 'no answer within 10 s' : String(a.status);
					counts[key] = (counts[key] ?? 0) + 1;
				}
				const times = answers
					.filter((a) => a.status !== 0)
					.map((a) => a.ms)
					.sort((a, b) => a - b);

				// n8n's CPU time for the burst: until n8n is quiet (under 3 % of a core for 3 s, at
				// most 60 s), before the executions are listed (listing them costs n8n too).
				let cpuSpent: number | undefined;
				if (cpuBefore !== undefined) {
					let last = cpuMs(n8n.serverPid) ?? 0;
					for (let quiet = 0, waited = 0; quiet < 3 && waited < 60; waited++) {
						await new Promise((resolve) => setTimeout(resolve, 1_000));
						const now = cpuMs(n8n.serverPid) ?? last;
						quiet = now - last < 30 ? quiet + 1 : 0;
						last = now;
					}
					cpuSpent = Math.round(last - cpuBefore);
				}

				// Runs: until every task has one, or SETTLE_MS after the burst.
				const runsOf = new Map<string, number>();
				const deadline = Date.now() + SETTLE_MS;
				for (;;) {
					// n8n's API may answer 503 ("Database is not ready") while loaded: asked again.
					const listed = await executionsOf(n8n, apiKey, TRIGGER_WF).catch(() => undefined);
					if (!listed) {
						if (Date.now() > deadline + 60_000)
							throw new Error("n8n's executions API kept failing");
						await new Promise((resolve) => setTimeout(resolve, 2_000));
						continue;
					}
					const fresh = listed.filter(
						(e) => !before.has(e.id) && !['running', 'new', 'waiting'].includes(e.status),
					);
					runsOf.clear();
					for (const e of fresh) {
						const item = e.data?.resultData.runData[TRIGGER_NODE]?.[0]?.data?.main[0]?.[0];
						const id = String(item?.json.task_id);
						runsOf.set(id, (runsOf.get(id) ?? 0) + 1);
					}
					// Every callback either ran or was refused by n8n before the trigger (nothing more
					// can come), or every task ran.
					const refusedNow = Object.values(minus(webhookErrors(n8n), refusedBefore)).reduce(
						(a, b) => a + b,
						0,
					);
					if (ids.every((id) => runsOf.has(id)) || Date.now() > deadline) break;
					if (runsOf.size + refusedNow >= ids.length && unsettled(listed) === 0) break;
					await new Promise((resolve) => setTimeout(resolve, 2_000));
				}
				const perTask: Record<string, number> = {};
				for (const id of ids) {
					const n = String(runsOf.get(id) ?? 0);
					perTask[n] = (perTask[n] ?? 0) + 1;
				}
				const treePeak = tree.stop();
				const triggerReads = sim.count('status') - readsBefore;
				// The floor, with the same callbacks and burners, once the trigger's round is over.
				const floor = await floorRound(
					n8n,
					apiKey,
					`${n8n.baseUrl}/webhook/${floorPath}`,
					ids.map((id) => ({ code: 200, data: sim.view(id) })),
					burners,
				);
				const result: Round = {
					burners,
					callbacks,
					answers: counts,
					answerMs: {
						median: percentile(times, 50),
						p90: percentile(times, 90),
						max: times[times.length - 1] ?? 0,
					},
					runsPerTask: perTask,
					tasksWithoutRun: ids.filter((id) => !runsOf.has(id)).length,
					dbPingFailures: pingFailures(n8n) - pingFailuresBefore,
					statusReads: triggerReads,
					unconfirmedAfterAnswer: unconfirmed(n8n) - unconfirmedBefore,
					refusedByN8n: minus(webhookErrors(n8n), refusedBefore),
					n8nRssMb: { before: rssBefore, peak: rssPeak },
					n8nTreeMb: {
						before: tree.before,
						peak: treePeak,
						perCallback: perCallback(tree.before, treePeak, callbacks),
					},
					floor,
					n8nCpuMs: cpuSpent,
					tasksRunTwice: ids.filter((id) => (runsOf.get(id) ?? 0) > 1).length,
					loadBefore,
					loadDuring,
				};
				done.push(result);
				const vs = versus(result);
				say(
					`${burners} burners × ${callbacks} callbacks, n8n's Webhook node vs the Trigger: answered (2xx) within 10 s ${vs.floorAnswered} vs ${vs.triggerAnswered} (the Trigger ${vs.share ?? '?'} % of the Webhook node's); runs per task ${vs.floorRunsPerTask} vs ${vs.triggerRunsPerTask}; answered without a run ${vs.answeredWithoutRun}; n8n's CPU per callback to the Trigger ${vs.cpuMsPerCallback ?? '?'} ms`,
				);
				say(
					`${burners} burners × ${callbacks} callbacks: answers ${JSON.stringify(counts)}, answer time median ${result.answerMs.median} ms, p90 ${result.answerMs.p90} ms, max ${result.answerMs.max} ms; runs per task ${JSON.stringify(perTask)}; without a run ${result.tasksWithoutRun}, twice ${result.tasksRunTwice}; ${result.statusReads} status reads (callbacks that reached the trigger); ${result.unconfirmedAfterAnswer} answered 202 then not confirmed; refused by n8n before the trigger ran ${JSON.stringify(result.refusedByN8n)}; n8n's memory ${result.n8nRssMb.before} MB → peak ${result.n8nRssMb.peak} MB (process tree ${tree.before} → ${treePeak} MB: ${result.n8nTreeMb.perCallback} MB per callback in progress; the floor, n8n's Webhook node + HTTP Request: ${floor.treeMb.before} → ${floor.treeMb.peak} MB, ${floor.treeMb.perCallback} MB per callback, answers ${JSON.stringify(floor.answers)}, ${floor.runs} runs); n8n's CPU time ${result.n8nCpuMs} ms (${result.n8nCpuMs === undefined ? '?' : Math.round(result.n8nCpuMs / callbacks)} ms per callback); n8n's database ping failed ${result.dbPingFailures} times (load ${loadBefore} → ${loadDuring})`,
				);
			} finally {
				stopBurners(burning);
				clearInterval(sampler);
				tree.stop();
			}
		}
	} finally {
		await n8n.dispose();
		await sim.close();
		removeEmptyRunFolder();
	}
	results.rounds = done;
	if (floors.length > 0) results.floors = floors;
	say('');
	if (done.length > 0)
		say(
			table([
				[
					'burners',
					'callbacks',
					'200',
					'202',
					'503',
					'other',
					'no answer in 10 s',
					'answer p90',
					'without a run',
					'run twice',
					'MB per callback',
					'floor MB per callback',
					'floor 2xx in 10 s',
					'trigger 2xx in 10 s',
					'trigger/floor',
					'CPU ms per callback',
				],
				...done.map((r) => {
					const a = r.answers;
					const other = Object.entries(a)
						.filter(([k]) => !['200', '202', '503', 'no answer within 10 s'].includes(k))
						.reduce((s, [, n]) => s + n, 0);
					return [
						r.burners,
						r.callbacks,
						a['200'] ?? 0,
						a['202'] ?? 0,
						a['503'] ?? 0,
						other,
						a['no answer within 10 s'] ?? 0,
						`${round(r.answerMs.p90 / 1000, 2)} s`,
						r.tasksWithoutRun,
						r.tasksRunTwice,
						r.n8nTreeMb.perCallback ?? '?',
						r.floor?.treeMb.perCallback ?? '?',
						versus(r).floorAnswered,
						versus(r).triggerAnswered,
						`${versus(r).share ?? '?'} %`,
						versus(r).cpuMsPerCallback ?? '?',
					];
				}),
			]),
		);
	fs.mkdirSync(path.dirname(out), { recursive: true });
	fs.writeFileSync(out, `${JSON.stringify(results, null, '\t')}\n`);
	fs.writeFileSync(out.replace(/\.json$/, '.txt'), `${printed.join('\n')}\n`);
	say(`results written to ${path.relative(process.cwd(), out)} and its .txt`);
	regenerateDocs(out);
}
