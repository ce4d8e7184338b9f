// The Trigger's status-read line and read memory (nodes/MediaGenerationTrigger/statusReads.ts)
// and its download line (downloadLine.ts), on their own: who is served first, what is shared,
// what is bounded. The engine tests (test/engine/trigger-flood.test.ts) hold the whole trigger.
import {
	downloadLines,
	DOWNLOAD_LINE_LIMIT,
	TRIGGER_DOWNLOADS,
} from '../../../nodes/MediaGenerationTrigger/downloadLine';
import {
	ReadTurns,
	TaskReads,
	URL_READ_LIMITS,
	UrlAllowances,
	type ReadOutcome,
} from '../../../nodes/MediaGenerationTrigger/statusReads';
import { StatusReadBudget } from '../../../nodes/shared/statusReadBudget';

const task = (id: string): ReadOutcome => ({ task: { task_id: id, status: 'finished' } });

describe('the status-read line', () => {
	it('serves calls already answered 202 first, then first reads one URL at a time', async () => {
		// One token at once, then 20 a second: each grant is a turn.
		const turns = new ReadTurns(new StatusReadBudget({ burst: 1, perSecond: 20 }));
		expect(turns.takeNow('t', Date.now())).toBe(true);
		const order: string[] = [];
		const until = Date.now() + 5_000;
		const wait = (kind: 'retry' | 'first', source: string, name: string) =>
			turns.wait('t', kind, source, until).then((granted) => granted && order.push(name));
		const all = [
			wait('first', 'flooded', 'f1'),
			wait('first', 'flooded', 'f2'),
			wait('first', 'flooded', 'f3'),
			wait('first', 'own-a', 'a'),
			wait('first', 'own-b', 'b'),
			wait('retry', 'own-c', 'retry'),
		];
		// Nobody jumps the line while it holds anyone.
		expect(turns.takeNow('t', Date.now() + 60_000)).toBe(false);
		expect(turns.parked('t')).toBe(5);
		await Promise.all(all);
		expect(order).toEqual(['retry', 'f1', 'a', 'b', 'f2', 'f3']);
		expect(turns.parked('t')).toBe(0);
	});

	it('a call whose limit passes in line is told so, and leaves the line', async () => {
		const turns = new ReadTurns(new StatusReadBudget({ burst: 1, perSecond: 0.5 }));
		expect(turns.takeNow('t', Date.now())).toBe(true);
		expect(await turns.wait('t', 'first', 'u', Date.now() + 100)).toBe(false);
		expect(turns.parked('t')).toBe(0);
	});
});

describe('the reads of one task id', () => {
	it('are shared while in flight, used again within the interval, and a newer one waits for it', async () => {
		const reads = new TaskReads(200);
		let calls = 0;
		const read = async () => {
			calls++;
			return task('x');
		};
		const now = Date.now();
		const first = reads.start('t', 'x', now, read);
		expect(reads.current('t', 'x', undefined, now)).toBe(first);
		await first.result;
		// Settled: used again by a call without a read, not by one that wants a newer read.
		expect(reads.current('t', 'x', undefined, Date.now())).toBe(first);
		expect(reads.current('t', 'x', first.startedAt, Date.now())).toBeUndefined();
		expect(reads.nextAt('t', 'x')).toBe(now + 200);
		expect(reads.found('t', 'x', Date.now())).toBe(true);
		expect(reads.found('t', 'y', Date.now())).toBe(false);
		// Past the interval nothing is used again.
		expect(reads.current('t', 'x', undefined, Date.now() + 1_000)).toBeUndefined();
		expect(calls).toBe(1);
	});
});

describe('the URL allowances, charged per URL and task id (issue 45, finding 2)', () => {
	const own = { key: 'nonce:a', shared: false };
	const other = { key: 'nonce:b', shared: false };

	it('every read a URL causes takes a token, a task id it read before too: 3, then 1 a minute (issue 51, finding 5)', async () => {
		const reads = new TaskReads(0);
		const allowances = new UrlAllowances();
		const t0 = 1_000_000;
		// Found: the id's read answered this very task.
		expect(allowances.charge('t', own, 'real', t0)).toBe(true);
		await reads.start('t', 'real', t0, async () => task('real')).result;
		// The known id read again (a still pending task's callback replayed every 2 s): the
		// burst of 3 is spent by the third read, the fourth is refused (main read it for free).
		expect(allowances.charge('t', own, 'real', t0 + 2_000)).toBe(true);
		expect(allowances.charge('t', own, 'real', t0 + 4_000)).toBe(true);
		expect(allowances.charge('t', own, 'real', t0 + 6_000)).toBe(false);
		expect(allowances.charge('t', own, 'forged', t0 + 6_000)).toBe(false);
		// Another URL has its own allowance.
		expect(allowances.charge('t', other, 'real', t0 + 6_000)).toBe(true);
		// One a minute after the burst.
		expect(allowances.charge('t', own, 'real', t0 + 6_000 + 61_000)).toBe(true);
		expect(allowances.charge('t', own, 'real', t0 + 6_000 + 62_000)).toBe(false);
		expect(URL_READ_LIMITS.own).toEqual({ burst: 3, perSecond: 1 / 60 });
	});

	it('a URL holds at most its places in the line', async () => {
		const turns = new ReadTurns(new StatusReadBudget({ burst: 1, perSecond: 0.1 }));
		expect(turns.takeNow('t', Date.now())).toBe(true);
		const until = Date.now() + 200;
		const waits = [
			turns.wait('t', 'first', 'shared', until),
			turns.wait('t', 'first', 'shared', until),
			turns.wait('t', 'first', 'own', until),
		];
		expect(turns.parkedBy('t', 'shared')).toBe(2);
		expect(turns.parkedBy('t', 'own')).toBe(1);
		expect(turns.parkedBy('t', 'none')).toBe(0);
		await Promise.all(waits);
	});
});

describe('the download line', () => {
	it('has turns per trigger and a bounded line, served in order as turns are released', async () => {
		const until = Date.now() + 60_000;
		const held = await Promise.all(
			Array.from(
				{ length: TRIGGER_DOWNLOADS },
				async () => await downloadLines.take('busy', until),
			),
		);
		expect(held.every((h) => typeof h === 'function')).toBe(true);
		// Another trigger is not held by this one.
		const other = await downloadLines.take('other', until);
		expect(typeof other).toBe('function');
		(other as () => void)();
		// The line: each waiting callback downloads (here: at once releases) when its turn comes.
		const served: number[] = [];
		const waiting = Array.from({ length: DOWNLOAD_LINE_LIMIT }, async (_, i) => {
			const turn = await downloadLines.take('busy', until);
			served.push(i);
			if (typeof turn === 'function') turn();
			return turn;
		});
		expect(await downloadLines.take('busy', until)).toBe('full');
		for (const h of held) (h as () => void)();
		const turns = await Promise.all(waiting);
		expect(turns.every((t) => typeof t === 'function')).toBe(true);
		expect(served).toEqual(Array.from({ length: DOWNLOAD_LINE_LIMIT }, (_, i) => i));
		expect(downloadLines.busy('busy')).toBe(0);
	});

	it('a callback waiting past its deadline gets no turn and leaves the line', async () => {
		const until = Date.now() + 60_000;
		const held = await Promise.all(
			Array.from(
				{ length: TRIGGER_DOWNLOADS },
				async () => await downloadLines.take('slow', until),
			),
		);
		expect(await downloadLines.take('slow', Date.now() + 50)).toBe('late');
		expect(downloadLines.busy('slow')).toBe(TRIGGER_DOWNLOADS);
		for (const h of held) (h as () => void)();
		expect(downloadLines.busy('slow')).toBe(0);
	});
});
