import type { IDataObject } from 'n8n-workflow';

import {
	DEDUPE_LIMITS,
	deliveryKey,
	pruneDeliveries,
	rememberDelivery,
	type StatusClass,
} from '../shared/callbackBody';
import { KNOWN_TASK_MS } from './statusReads';

/**
 * What one n8n process remembers between callbacks, per trigger (workflow id + node id): the
 * task ids the service recently called unknown, and the deliveries already taken (the status
 * reads callbacks may cause: statusReads.ts). n8n loads a node module once per process, so these live as long
 * as the process; several processes (queue mode) each have their own.
 */

/**
 * How long a task id the service called unknown (or answered for with another task) is answered
 * from memory, and how many: as long as a URL's payment for a known id lasts (statusReads.ts).
 */
export const UNKNOWN_TASK_LIMITS = { ttlMs: KNOWN_TASK_MS, maxEntries: 10_000 };

/** Task ids recently found unknown: answered 404 again without asking the service. */
export class UnknownTasks {
	private readonly entries = new Map<string, number>();

	constructor(private readonly limits = UNKNOWN_TASK_LIMITS) {}

	has(trigger: string, taskId: string, now: number): boolean {
		const key = `${trigger}\n${taskId}`;
		const until = this.entries.get(key);
		if (until === undefined) return false;
		if (until > now) return true;
		this.entries.delete(key);
		return false;
	}

	add(trigger: string, taskId: string, now: number): void {
		const key = `${trigger}\n${taskId}`;
		this.entries.delete(key);
		// A Map iterates in insertion order: the first entries are the oldest.
		while (this.entries.size >= this.limits.maxEntries) {
			const oldest = this.entries.keys().next().value as string;
			this.entries.delete(oldest);
		}
		this.entries.set(key, now + this.limits.ttlMs);
	}
}

/** The signature part of a delivery key stored before issue 44 (see taskRun). */
const LEGACY_SUFFIX = /^[A-Za-z0-9_-]{12}$/;

/**
 * The task ids being confirmed in this process, and the URL each came to: a task being
 * confirmed on one URL starts nothing on another (it is answered 503, without a status read, and
 * comes again once the first call ended: a duplicate then, or a run if the first did not start).
 */
export class Confirming {
	private readonly entries = new Map<string, { source: string; calls: number }>();

	/** Enters a call; false when the task is being confirmed on another URL. */
	enter(trigger: string, taskId: string, source: string): boolean {
		const key = `${trigger}\n${taskId}`;
		const entry = this.entries.get(key);
		if (entry && entry.source !== source) return false;
		if (entry) entry.calls++;
		else this.entries.set(key, { source, calls: 1 });
		return true;
	}

	leave(trigger: string, taskId: string): void {
		const key = `${trigger}\n${taskId}`;
		const entry = this.entries.get(key);
		if (entry && --entry.calls <= 0) this.entries.delete(key);
	}
}

/** How long a store handed out by n8n may still be written back after webhook() returned. */
const LIVE_STORE_MS = 30_000;

interface LiveStore {
	store: IDataObject;
	releasedAt?: number;
}

/**
 * Duplicate suppression that survives n8n's "last writer wins" static data.
 *
 * n8n gives every webhook call its own copy of the workflow's static data, read fresh from the
 * database, and writes that whole copy back after webhook() returned. Ten callbacks arriving
 * together each add their own delivery to their own copy, and the last copy written back holds
 * only its own. Here every delivery this process takes is also written into every copy it has
 * handed out and not yet seen written back, and into every copy handed out later: whichever
 * write comes last carries the union of everything this process knows.
 */
export class DeliveryMemory {
	private readonly known = new Map<string, IDataObject>();
	private readonly live = new Map<string, LiveStore[]>();

	constructor(private readonly limits = DEDUPE_LIMITS) {}

	/** Takes this request's copy of the stored deliveries; merges what the process knows into it. */
	attach(trigger: string, store: IDataObject, now: number): LiveStore {
		const known = this.knownOf(trigger);
		for (const [key, seenAt] of Object.entries(known)) {
			if (typeof store[key] !== 'number') store[key] = seenAt;
		}
		// What an earlier process wrote (before a restart, or another process) is known from now on.
		for (const [key, seenAt] of Object.entries(store)) {
			if (typeof seenAt === 'number' && typeof known[key] !== 'number') known[key] = seenAt;
		}
		pruneDeliveries(known, now, this.limits);
		pruneDeliveries(store, now, this.limits);
		const entry: LiveStore = { store };
		const list = (this.live.get(trigger) ?? []).filter(
			(e) => e.releasedAt === undefined || now - e.releasedAt < LIVE_STORE_MS,
		);
		list.push(entry);
		this.live.set(trigger, list);
		return entry;
	}

	/** Whether a delivery is known, to this process or in the stored copy (nothing is changed). */
	has(trigger: string, key: string, stored: unknown, now: number): boolean {
		const fresh = (seenAt: unknown) =>
			typeof seenAt === 'number' && now - seenAt <= this.limits.maxAgeMs;
		if (fresh(this.knownOf(trigger)[key])) return true;
		return typeof stored === 'object' && stored !== null && fresh((stored as IDataObject)[key]);
	}

	/**
	 * The status whose run of this task was started, on whatever URL (`undefined`: none): its
	 * finished or failed delivery known to this process or in the stored copy. Deliveries stored
	 * before issue 44 carry the first 12 characters of their URL's signature after the status
	 * (`<task>:<status>:<sig>`): they count too, whichever URL took them.
	 */
	taskRun(trigger: string, taskId: string, stored: unknown, now: number): StatusClass | undefined {
		const sources = [this.knownOf(trigger)];
		if (typeof stored === 'object' && stored !== null) sources.push(stored as IDataObject);
		const fresh = (seenAt: unknown) =>
			typeof seenAt === 'number' && now - seenAt <= this.limits.maxAgeMs;
		for (const status of ['finished', 'failed'] as const) {
			const key = deliveryKey(taskId, status);
			for (const source of sources) {
				if (fresh(source[key])) return status;
				for (const [k, seenAt] of Object.entries(source)) {
					if (
						k.startsWith(`${key}:`) &&
						LEGACY_SUFFIX.test(k.slice(key.length + 1)) &&
						fresh(seenAt)
					) {
						return status;
					}
				}
			}
		}
		return undefined;
	}

	/** Records a delivery; false when it is already known (stored or taken by this process). */
	take(trigger: string, key: string, now: number): boolean {
		const known = this.knownOf(trigger);
		if (!rememberDelivery(known, key, now, this.limits)) return false;
		for (const { store } of this.live.get(trigger) ?? []) {
			if (typeof store[key] !== 'number') store[key] = now;
		}
		return true;
	}

	/** Undoes take() when the delivery could not be handled (the next attempt must run). */
	forget(trigger: string, key: string): void {
		delete this.knownOf(trigger)[key];
		for (const { store } of this.live.get(trigger) ?? []) delete store[key];
	}

	release(entry: LiveStore, now: number): void {
		entry.releasedAt = now;
	}

	private knownOf(trigger: string): IDataObject {
		let known = this.known.get(trigger);
		if (!known) {
			known = {};
			this.known.set(trigger, known);
		}
		return known;
	}
}

/** How long a trigger's signing key is used without reading the credential again. */
export const SIGNING_KEY_TTL_MS = 5 * 60_000;
/**
 * A signature the cached key refuses is checked with the credential as it is now (it may have
 * changed) at most this often per trigger: in between, it is refused without a credential read.
 */
export const SIGNING_KEY_REFRESH_MS = 5_000;

/**
 * The signing key of each trigger's credential (derived from the API key, not the key), so a
 * callback needs no credential read: in a webhook call each read is a database read, a
 * decryption and, in n8n 2.x, an expression isolate of its own, which a flood of callbacks
 * through a leaked URL would otherwise cost n8n on every call. A signature the key refuses is
 * checked against the credential as it is now only when the key was read more than
 * SIGNING_KEY_REFRESH_MS ago, one read per trigger at a time: forged signatures cost at most one
 * credential read per trigger every few seconds, however many arrive.
 */
export class SigningKeys {
	private readonly entries = new Map<string, { key: Buffer; readAt: number }>();
	private readonly reading = new Map<string, Promise<Buffer | undefined>>();
	private readonly misses = new Map<string, { at: number; error?: Error }>();

	private miss(id: string, entry: { at: number; error?: Error }): void {
		this.misses.delete(id);
		while (this.misses.size >= 1_000) {
			this.misses.delete(this.misses.keys().next().value as string);
		}
		this.misses.set(id, entry);
	}

	get(id: string, now: number): Buffer | undefined {
		const entry = this.entries.get(id);
		if (entry && now - entry.readAt < SIGNING_KEY_TTL_MS) return entry.key;
		this.entries.delete(id);
		return undefined;
	}

	/** Whether the key was read so lately that a signature it refuses needs no new read. */
	fresh(id: string, now: number): boolean {
		const entry = this.entries.get(id);
		return entry !== undefined && now - entry.readAt < SIGNING_KEY_REFRESH_MS;
	}

	/**
	 * The key as the credential gives it now: one read shared by the calls that need it at once.
	 * `undefined`: the credential has no key. A failed read is thrown to each of them; either
	 * outcome is given again without a read for SIGNING_KEY_REFRESH_MS (issue 51, finding 6).
	 */
	async read(id: string, load: () => Promise<Buffer | undefined>, now: () => number) {
		// A read that found no key, or failed, lately: its outcome again, without a read (a flood
		// of wrong signatures to a trigger whose credential has no key costs no read per call).
		const miss = this.misses.get(id);
		if (miss && now() - miss.at < SIGNING_KEY_REFRESH_MS) {
			if (miss.error) throw miss.error;
			return undefined;
		}
		let pending = this.reading.get(id);
		if (!pending) {
			pending = load().then(
				(key) => {
					if (key) {
						this.misses.delete(id);
						this.set(id, key, now());
					} else this.miss(id, { at: now() });
					return key;
				},
				(error: unknown) => {
					this.miss(id, { at: now(), error: error as Error });
					throw error;
				},
			);
			this.reading.set(id, pending);
			const done = () => this.reading.delete(id);
			pending.then(done, done);
		}
		return await pending;
	}

	set(id: string, key: Buffer, now: number): void {
		this.entries.delete(id);
		while (this.entries.size >= 1_000) {
			this.entries.delete(this.entries.keys().next().value as string);
		}
		this.entries.set(id, { key, readAt: now });
	}
}

/**
 * The callbacks this process is handling now (from arrival to their run's item, downloads
 * included): under a burst (ANSWER_FIRST_AT) a call is answered before its credential and
 * status reads (verify.ts), since every one of them waits for the others' CPU.
 */
export class CallsInProgress {
	private count = 0;

	enter(): number {
		return ++this.count;
	}

	leave(): void {
		if (this.count > 0) this.count--;
	}

	get now(): number {
		return this.count;
	}
}

export const callsInProgress = new CallsInProgress();
export const signingKeys = new SigningKeys();
export const unknownTasks = new UnknownTasks();
export const deliveries = new DeliveryMemory();
export const confirming = new Confirming();
