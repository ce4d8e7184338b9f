import { sleep } from 'n8n-workflow';

import { StatusReadBudget } from '../shared/statusReadBudget';
import type { Task } from '../shared/task';
import type { Fault } from '../shared/transport/faults';

// The status reads callbacks may cost the user's key, per trigger (workflow id + node id) and
// per n8n process. What a flood can cost, and what a genuine callback can count on:
//
// - Every read takes a token of the trigger's budget (TRIGGER_STATUS_READ_LIMITS). When none is
//   left the callback is not refused: it is answered 202 "confirming" and waits in the trigger's
//   line (at most PENDING_LIMIT callbacks), read as tokens come back. Calls already answered 202
//   (a read to retry, a callback waiting in line) are served before any new first read, and the
//   waiting first reads in turn per URL, so one URL cannot take every turn.
// - A task id costs at most one read per READ_INTERVAL_MS, however often it is sent: callbacks
//   for an id being read share that read, and one read shortly before is used again.
// - Every read a URL causes takes a token of that URL's allowance (URL_READ_LIMITS): the URL of
//   one submission (with a nonce) has its own task and a few more; URLs many tasks share (legacy
//   signed ones, one per reference, and unsigned ones) have a larger one. A callback whose URL's
//   allowance is spent is answered 429 at once, with no read: so task ids sent to one URL, forged
//   or known, cost the key at most that URL's allowance, wherever they come from. An id the
//   service called unknown, or answered for with another task, is answered from memory
//   (memory.ts) for KNOWN_TASK_MS.
// - A URL holds at most PENDING_PER_URL places in the trigger's line (then 503 with
//   Retry-After), so no URL can fill the line other URLs' callbacks wait in.

/** All status reads of one trigger: 200 at once (a batch finishing together), then 10 a second. */
export const TRIGGER_STATUS_READ_LIMITS = { perSecond: 10, burst: 200 };

/** The URL of one submission, past its burst: one read of a new task id per this interval. */
export const OWN_URL_READ_INTERVAL_MS = 60_000;

/** Reads of task ids a URL brings for the first time (see above). */
export const URL_READ_LIMITS = {
	/** The URL of one submission: its own task, then 2 more, then 1 a minute. */
	own: { burst: 3, perSecond: 1000 / OWN_URL_READ_INTERVAL_MS },
	/** A URL many tasks share: 40 at once, then 4 a second (240 a minute). */
	shared: { burst: 40, perSecond: 4 },
};

/** Callbacks waiting in one trigger's line for a read, at most (then 503 with Retry-After). */
export const PENDING_LIMIT = 100;

/** Places in that line one URL may hold (then 503 with Retry-After): a quarter of it at most. */
export const PENDING_PER_URL = { own: URL_READ_LIMITS.own.burst, shared: PENDING_LIMIT / 4 };

/**
 * How long a URL's payment for a task id whose read found the task exempts that URL's later
 * reads of it, and (memory.ts) how long an id found unknown is answered from memory: equal, so
 * the exemption never outlives the memory of a refusal.
 */
export const KNOWN_TASK_MS = 10 * 60_000;

/** One status read per task id per this interval, at most. */
export const READ_INTERVAL_MS = 2_000;

export type ReadOutcome = { task: Task } | { fault: Fault };

/** A read of one task id: in flight, or settled with its outcome. */
export interface TaskRead {
	startedAt: number;
	result: Promise<ReadOutcome>;
	settledAt?: number;
	/** Settled with this very task (not unknown, not another task's answer, not a fault). */
	found?: boolean;
}

/** How long a read is remembered (for READ_INTERVAL_MS and the URL allowance), and how many. */
const TASK_READ_LIMITS = { ttlMs: KNOWN_TASK_MS, maxEntries: 10_000 };

/** The reads of each task id: shared while in flight, used again within READ_INTERVAL_MS. */
export class TaskReads {
	private readonly entries = new Map<string, TaskRead>();

	constructor(private readonly intervalMs = READ_INTERVAL_MS) {}

	/**
	 * The read to use instead of a new one: one in flight, or one that started after `after` (the
	 * start of the read whose outcome the caller has already: it wants a newer one) and settled
	 * within the interval.
	 */
	current(trigger: string, taskId: string, after: number | undefined, now: number) {
		const entry = this.entries.get(key(trigger, taskId));
		if (!entry) return undefined;
		if (entry.settledAt === undefined) {
			return after === undefined || entry.startedAt > after ? entry : undefined;
		}
		const fresh = now - entry.settledAt < this.intervalMs;
		return fresh && (after === undefined || entry.startedAt > after) ? entry : undefined;
	}

	/** When the next read of this id may start. */
	nextAt(trigger: string, taskId: string): number {
		const entry = this.entries.get(key(trigger, taskId));
		return entry ? entry.startedAt + this.intervalMs : 0;
	}

	/** Whether this id's last read, lately, found the task (an id the service knows). */
	found(trigger: string, taskId: string, now: number): boolean {
		const entry = this.entries.get(key(trigger, taskId));
		return entry?.found === true && now - entry.startedAt < TASK_READ_LIMITS.ttlMs;
	}

	start(trigger: string, taskId: string, now: number, read: () => Promise<ReadOutcome>): TaskRead {
		const k = key(trigger, taskId);
		this.entries.delete(k);
		// A Map iterates in insertion order: the first entries are the oldest.
		while (this.entries.size >= TASK_READ_LIMITS.maxEntries) {
			this.entries.delete(this.entries.keys().next().value as string);
		}
		const entry: TaskRead = { startedAt: now, result: read() };
		entry.result = entry.result.then((outcome) => {
			entry.settledAt = Date.now();
			entry.found = 'task' in outcome && outcome.task.task_id === taskId;
			return outcome;
		});
		this.entries.set(k, entry);
		return entry;
	}
}

const key = (trigger: string, taskId: string) => `${trigger}\n${taskId}`;

/**
 * The URL allowances: every read a URL causes takes a token of its allowance, whatever the task
 * id (a known one too: issue 51, finding 5, a task id the URL had paid for was read every 2 s
 * for 10 minutes without a token). Reads shared with another call of the id (in flight, or
 * within READ_INTERVAL_MS) take none: the service's retries of a callback cost what they read.
 */
export class UrlAllowances {
	readonly own = new StatusReadBudget(URL_READ_LIMITS.own);
	readonly shared = new StatusReadBudget(URL_READ_LIMITS.shared);

	/** Takes what a read brought by `url` costs; false (429) when it has no token. */
	charge(trigger: string, url: { key: string; shared: boolean }, _taskId: string, now: number) {
		return this.budget(url).take(this.urlKey(trigger, url), now);
	}

	/** Milliseconds until the URL has a token again (for Retry-After). */
	waitMs(trigger: string, url: { key: string; shared: boolean }): number {
		return this.budget(url).waitMs(this.urlKey(trigger, url));
	}

	private budget(url: { shared: boolean }): StatusReadBudget {
		return url.shared ? this.shared : this.own;
	}

	private urlKey(trigger: string, url: { key: string }): string {
		return `${trigger}\n${url.key}`;
	}
}

interface Waiter {
	source: string;
	until: number;
	grant: (granted: boolean) => void;
}

/** One trigger's line: retries of calls answered 202 first, then first reads, per URL in turn. */
interface Line {
	retries: Waiter[];
	/** First reads waiting, by URL; the URL served last moves to the end. */
	firsts: Map<string, Waiter[]>;
	parked: number;
	pumping: boolean;
}

/**
 * The trigger's budget and its line. A read starts at once only when nobody waits ahead of it;
 * otherwise it waits for a token in line, in the order above.
 */
export class ReadTurns {
	private readonly lines = new Map<string, Line>();

	constructor(private readonly budget: StatusReadBudget) {}

	/** A token now, if the line is empty. */
	takeNow(trigger: string, now: number): boolean {
		const line = this.lines.get(trigger);
		if (line && (line.retries.length > 0 || line.parked > 0)) return false;
		return this.budget.take(trigger, now);
	}

	/** First reads waiting in this trigger's line. */
	parked(trigger: string): number {
		return this.lines.get(trigger)?.parked ?? 0;
	}

	/** First reads of one URL waiting in this trigger's line. */
	parkedBy(trigger: string, source: string): number {
		return this.lines.get(trigger)?.firsts.get(source)?.length ?? 0;
	}

	/** Milliseconds until the line has room, roughly (for Retry-After). */
	drainMs(trigger: string): number {
		return Math.ceil((this.parked(trigger) / TRIGGER_STATUS_READ_LIMITS.perSecond) * 1000);
	}

	/** Waits in line for a token: true when granted, false when `until` came first. */
	async wait(trigger: string, kind: 'retry' | 'first', source: string, until: number) {
		let line = this.lines.get(trigger);
		if (!line) {
			line = { retries: [], firsts: new Map(), parked: 0, pumping: false };
			this.lines.set(trigger, line);
		}
		const granted = new Promise<boolean>((grant) => {
			const waiter = { source, until, grant };
			if (kind === 'retry') line.retries.push(waiter);
			else {
				const list = line.firsts.get(source) ?? [];
				list.push(waiter);
				line.firsts.set(source, list);
				line.parked++;
			}
		});
		if (!line.pumping) {
			line.pumping = true;
			void this.pump(trigger, line);
		}
		return await granted;
	}

	/** Hands out tokens as they come back, in order, until the line is empty. */
	private async pump(trigger: string, line: Line): Promise<void> {
		try {
			for (;;) {
				const now = Date.now();
				this.expire(line, now);
				if (line.retries.length === 0 && line.parked === 0) break;
				if (this.budget.take(trigger, now)) {
					this.next(line)?.grant(true);
					continue;
				}
				// Until the next token, or the first wait that ends before it.
				const token = Math.max(20, this.budget.waitMs(trigger));
				await sleep(Math.max(20, Math.min(1_000, token, this.firstUntil(line) - now)));
			}
		} finally {
			line.pumping = false;
			if (line.retries.length === 0 && line.parked === 0) this.lines.delete(trigger);
		}
	}

	/** Takes the next waiter: a retry, else the first read of the URL whose turn it is. */
	private next(line: Line): Waiter | undefined {
		const retry = line.retries.shift();
		if (retry) return retry;
		for (const [source, list] of line.firsts) {
			const waiter = list.shift();
			line.firsts.delete(source);
			// Served: the URL goes to the end of the turn (if it has more waiting).
			if (list.length > 0) line.firsts.set(source, list);
			if (waiter) {
				line.parked--;
				return waiter;
			}
		}
		// Nobody left: the count follows (the pump then stops).
		line.parked = 0;
		return undefined;
	}

	/** When the first wait in line ends. */
	private firstUntil(line: Line): number {
		let first = Number.POSITIVE_INFINITY;
		for (const w of line.retries) first = Math.min(first, w.until);
		for (const list of line.firsts.values()) for (const w of list) first = Math.min(first, w.until);
		return first;
	}

	/** Callbacks whose wait ended without a token are told so. */
	private expire(line: Line, now: number): void {
		line.retries = line.retries.filter((w) => w.until > now || (w.grant(false), false));
		for (const [source, list] of line.firsts) {
			const kept = list.filter((w) => w.until > now || (w.grant(false), false));
			line.parked -= list.length - kept.length;
			if (kept.length > 0) line.firsts.set(source, kept);
			else line.firsts.delete(source);
		}
	}
}

export const triggerBudget = new StatusReadBudget(TRIGGER_STATUS_READ_LIMITS);
export const readTurns = new ReadTurns(triggerBudget);
export const taskReads = new TaskReads();
/** The URL allowances, keyed by trigger and URL, charged per URL and task id. */
export const urlAllowances = new UrlAllowances();
