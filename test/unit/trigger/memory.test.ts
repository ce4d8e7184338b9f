import type { IDataObject } from 'n8n-workflow';

import { DeliveryMemory, UnknownTasks } from '../../../nodes/MediaGenerationTrigger/memory';
import { StatusReadBudget } from '../../../nodes/shared/statusReadBudget';

describe('status reads per trigger: a token bucket', () => {
	it('allows the burst, then the rate, per trigger', () => {
		const budget = new StatusReadBudget({ perSecond: 5, burst: 10 });
		const t0 = 1_000_000;
		const first = Array.from({ length: 1000 }, () => budget.take('wf:a', t0)).filter(Boolean);
		expect(first).toHaveLength(10);
		expect(budget.take('wf:b', t0)).toBe(true);
		expect(budget.waitMs('wf:a')).toBe(200);
		// One second later: five more, not more.
		const later = Array.from({ length: 1000 }, () => budget.take('wf:a', t0 + 1000)).filter(
			Boolean,
		);
		expect(later).toHaveLength(5);
		// Over 60 s of constant flood: burst + 5/s.
		let allowed = 0;
		for (let ms = 0; ms <= 60_000; ms += 10) if (budget.take('wf:c', t0 + ms)) allowed++;
		expect(allowed).toBe(10 + 5 * 60);
	});
});

describe('task ids recently found unknown', () => {
	it('are remembered for the TTL, per trigger, and bounded in number', () => {
		const cache = new UnknownTasks({ ttlMs: 1000, maxEntries: 3 });
		cache.add('wf:a', 'x', 0);
		expect(cache.has('wf:a', 'x', 999)).toBe(true);
		expect(cache.has('wf:b', 'x', 999)).toBe(false);
		expect(cache.has('wf:a', 'x', 1000)).toBe(false);
		for (const id of ['1', '2', '3', '4']) cache.add('wf:a', id, 2000);
		expect(cache.has('wf:a', '1', 2001)).toBe(false);
		expect(cache.has('wf:a', '4', 2001)).toBe(true);
	});
});

describe('duplicate suppression under last-writer-wins static data', () => {
	/** n8n's part: a copy of the stored object per request, the whole copy written back. */
	function database() {
		let stored: IDataObject = {};
		return {
			load: () => JSON.parse(JSON.stringify(stored)) as IDataObject,
			save: (copy: IDataObject) => {
				stored = JSON.parse(JSON.stringify(copy)) as IDataObject;
			},
			get: () => stored,
		};
	}

	it('10 requests loaded together, written back in any order: the last write holds all 10', () => {
		for (const order of [
			[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
			[9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
			[3, 7, 0, 9, 1, 5, 2, 8, 6, 4],
		]) {
			const db = database();
			const memory = new DeliveryMemory();
			const copies = Array.from({ length: 10 }, () => db.load());
			const live = copies.map((copy) => memory.attach('wf:t', copy, 1000));
			copies.forEach((_, i) =>
				expect(memory.take('wf:t', `task-${i}:finished`, 1000 + i)).toBe(true),
			);
			live.forEach((l) => memory.release(l, 2000));
			for (const i of order) db.save(copies[i]);
			expect(Object.keys(db.get()).sort()).toEqual(
				Array.from({ length: 10 }, (_, i) => `task-${i}:finished`).sort(),
			);

			// A restarted process (empty memory) reads the stored union: every replay is a duplicate.
			const restarted = new DeliveryMemory();
			const replays = Array.from({ length: 10 }, () => db.load());
			replays.forEach((copy) => restarted.attach('wf:t', copy, 3000));
			expect(replays.map((_, i) => restarted.take('wf:t', `task-${i}:finished`, 3000))).toEqual(
				Array(10).fill(false),
			);
		}
	});

	it('without the shared memory (the old behaviour) the last writer keeps one of 10', () => {
		const db = database();
		const copies = Array.from({ length: 10 }, () => db.load());
		copies.forEach((copy, i) => (copy[`task-${i}:finished`] = 1000));
		copies.forEach((copy) => db.save(copy));
		expect(Object.keys(db.get())).toHaveLength(1);
	});

	it('a request loaded after others took deliveries gets them too; forget undoes a take', () => {
		const memory = new DeliveryMemory();
		const a: IDataObject = {};
		memory.release(memory.attach('wf:t', a, 0), 0);
		expect(memory.take('wf:t', 'x:finished', 0)).toBe(true);
		const late: IDataObject = {};
		memory.attach('wf:t', late, 10);
		expect(late['x:finished']).toBe(0);
		expect(memory.take('wf:t', 'x:finished', 10)).toBe(false);
		memory.forget('wf:t', 'x:finished');
		expect(late['x:finished']).toBeUndefined();
		expect(memory.take('wf:t', 'x:finished', 20)).toBe(true);
		// Triggers do not share deliveries.
		expect(memory.take('wf:other', 'x:finished', 20)).toBe(true);
	});
});

describe('one run per task, whatever URL brought it (issue 44, item 6)', () => {
	it("knows a task's run from its finished or failed delivery, and from deliveries stored before (keyed with their URL's signature)", () => {
		const memory = new DeliveryMemory();
		const now = 1_000_000;
		expect(memory.taskRun('wf:a', 'task_1', {}, now)).toBeUndefined();
		expect(memory.take('wf:a', 'task_1:failed', now)).toBe(true);
		expect(memory.taskRun('wf:a', 'task_1', undefined, now)).toBe('failed');
		expect(memory.taskRun('wf:b', 'task_1', undefined, now)).toBeUndefined();
		// Stored by an earlier build: <task>:<status>:<12 characters of the URL's signature>.
		const stored: IDataObject = { 'task_2:finished:AbCdEf012_-x': now - 1000 };
		expect(memory.taskRun('wf:a', 'task_2', stored, now)).toBe('finished');
		// Another task whose id only starts like it, and entries past the age limit, are not it.
		expect(memory.taskRun('wf:a', 'task', stored, now)).toBeUndefined();
		expect(memory.taskRun('wf:a', 'task_2', stored, now + 4 * 24 * 3600_000)).toBeUndefined();
		expect(memory.taskRun('wf:a', 'task_3', { 'task_3:finished:short': now }, now)).toBeUndefined();
	});
});
