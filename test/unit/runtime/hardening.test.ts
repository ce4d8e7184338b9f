// The shared rules behind issue 9's transport fixes, checked directly: the task_id rule, the
// scrubbing of secrets quoted in texts, the expiry rule, the prompt's character count and the
// waits of withRetries under a deadline. The engine layer (test/engine/hardening.test.ts) shows
// the same rules in real workflows over HTTP.
import type { ApiContext } from '../../../nodes/shared/transport/api';
import { attemptTimeout, withRetries } from '../../../nodes/shared/transport/api';
import { scrubSecret, TransportError, type Fault } from '../../../nodes/shared/transport/faults';
import { expiresAt, FILE_VALIDITY_MS } from '../../../nodes/shared/output';
import { isPlausibleTaskId, taskIdProblem } from '../../../nodes/shared/task';
import { characterCount, withinCharacters } from '../../../nodes/MediaGeneration/models/rules';

describe('the plausible task_id rule', () => {
	it.each(['task_0123abcd', '01HZX3', 'a.b', 'x-y_z~1', 'ns:id', 'b64+x=', 'a@b', '1', '...a'])(
		'%s is plausible',
		(id) => {
			expect(taskIdProblem(id)).toBeUndefined();
			expect(isPlausibleTaskId(id)).toBe(true);
		},
	);

	it.each([
		['.', /only dots/],
		['..', /only dots/],
		['....', /only dots/],
		['', /is empty/],
		['a/b', /characters a task_id does not have/],
		['../status', /characters a task_id does not have/],
		['a?b', /characters/],
		['a#b', /characters/],
		['a b', /characters/],
		['%2e%2e', /characters/],
		['a\\b', /characters/],
		['tâche', /characters/],
		['a\u0000', /characters/],
		['x'.repeat(201), /201 characters long/],
	])('%j is refused: %s', (id, why) => {
		const problem = taskIdProblem(id);
		expect(problem).toMatch(why);
		expect(problem).toMatch(/allowed: 1 to 200 letters, digits/);
		expect(isPlausibleTaskId(id)).toBe(false);
	});

	it('refuses what is not a string', () => {
		expect(isPlausibleTaskId(42)).toBe(false);
		expect(isPlausibleTaskId(undefined)).toBe(false);
	});
});

describe('scrubSecret masks secrets in any quoted URL', () => {
	const callback =
		'https://n8n.example.com/webhook/abc/media?ref=row-7&secret=s3cr3t-VALUE&sig=c0ffee99';

	it('the trigger secret and the reference signature, keeping the rest readable', () => {
		const text = `invalid callback_url "${callback}": host not allowed`;
		const scrubbed = scrubSecret(text);
		expect(scrubbed).not.toContain('s3cr3t-VALUE');
		expect(scrubbed).not.toContain('c0ffee99');
		expect(scrubbed).toContain('ref=row-7');
		expect(scrubbed).toContain('secret=***');
		expect(scrubbed).toContain('sig=***');
		expect(scrubbed).toContain('host not allowed');
	});

	it("n8n's resume URL signature, token names, any case, first parameter or not", () => {
		const text =
			'POST http://h/webhook-waiting/12?signature=abc123def&x=1 failed; see https://h/x?TOKEN=tt99&access_token=aa88;api_key=kk77';
		const scrubbed = scrubSecret(text);
		for (const value of ['abc123def', 'tt99', 'aa88', 'kk77'])
			expect(scrubbed).not.toContain(value);
		expect(scrubbed).toContain('x=1');
	});

	it('a URL quoted percent-encoded inside another URL, or inside JSON', () => {
		const encoded = encodeURIComponent(callback);
		expect(scrubSecret(`redirect=${encoded}`)).not.toMatch(/s3cr3t|c0ffee/);
		const json = JSON.stringify({ msg: 'bad callback', callback_url: callback });
		const scrubbed = scrubSecret(json);
		expect(scrubbed).not.toMatch(/s3cr3t|c0ffee/);
		expect(() => JSON.parse(scrubbed)).not.toThrow();
	});

	it('still masks given values and Bearer tokens', () => {
		expect(scrubSecret('key sk-live-1234 Bearer abc.def', ['sk-live-1234'])).toBe(
			'key *** Bearer ***',
		);
	});

	it('leaves texts without secrets alone', () => {
		const text = 'https://files.example.com/v.mp4?expires=123&id=9 (HTTP 404)';
		expect(scrubSecret(text)).toBe(text);
	});
});

describe('expires_at: never later than the service times support', () => {
	const created = Date.parse('2026-01-01T00:00:00.000Z');
	const hours = (n: number) => n * 3600_000;

	it('a task created 20 h before it was first seen finished: creation + 24 h, not now + 24 h', () => {
		// docs/reliability.md cites these: created 20 h ago, the files expire 4 h ahead.
		const AGE_H = 20;
		const EXPIRES_IN_H = 4;
		const seen = created + hours(AGE_H);
		const expiry = expiresAt(
			{ status: 'finished', created_time: new Date(created).toISOString() },
			{ finishedAt: seen },
		);
		expect(expiry).toBe(new Date(created + FILE_VALIDITY_MS).toISOString());
		expect(expiry).toBe(new Date(created + hours(AGE_H) + hours(EXPIRES_IN_H)).toISOString());
	});

	it('a service clock running ahead is capped by the moment the finish was seen', () => {
		const seen = created - hours(1);
		expect(
			expiresAt(
				{ status: 'finished', created_time: new Date(created).toISOString() },
				{ finishedAt: seen },
			),
		).toBe(new Date(seen + FILE_VALIDITY_MS).toISOString());
	});

	it('without created_time: the submission time + 24 h; with neither: null', () => {
		expect(
			expiresAt({ status: 'finished' }, { submittedAt: created, finishedAt: created + 5000 }),
		).toBe(new Date(created + FILE_VALIDITY_MS).toISOString());
		expect(expiresAt({ status: 'finished' }, { finishedAt: created })).toBeNull();
		expect(expiresAt({ status: 'finished', created_time: 'not a date' }, {})).toBeNull();
	});

	it('only a finished task has files that expire', () => {
		for (const status of ['failed', 'processing', 'not_started'])
			expect(expiresAt({ status, created_time: new Date(created).toISOString() })).toBeNull();
	});
});

describe('the prompt is counted in characters as a person counts them', () => {
	const emoji = '😀'; // 2 UTF-16 units, 1 code point, 1 character
	const family = '👨‍👩‍👧'; // 8 UTF-16 units, 5 code points, 1 character
	const eAcute = 'e\u0301'; // 2 code points, 1 character

	it('counts emoji, joined emoji, flags and combining accents as one character each', () => {
		expect(characterCount(emoji.repeat(10))).toBe(10);
		expect(characterCount(family.repeat(3))).toBe(3);
		expect(characterCount('🇫🇷🇩🇪')).toBe(2);
		expect(characterCount(eAcute.repeat(4))).toBe(4);
		expect(characterCount('plain text')).toBe(10);
	});

	it('10,001 emoji are within 20,000 characters; 20,001 are not', () => {
		expect(withinCharacters(emoji.repeat(10_001), 20_000)).toBe(true);
		expect(withinCharacters(emoji.repeat(20_000), 20_000)).toBe(true);
		expect(withinCharacters(emoji.repeat(20_001), 20_000)).toBe(false);
		expect(withinCharacters('a'.repeat(20_001), 20_000)).toBe(false);
		expect(withinCharacters(family.repeat(20_000), 20_000)).toBe(true);
	});

	it('stops counting past the limit on a huge text', () => {
		expect(characterCount(family.repeat(100_000), 20_000)).toBe(20_001);
	});
});

// On jest's fake clock: the waits are measured exactly, so no load on the machine can make a timer
// late enough to break them (a real timer under load can fire hundreds of ms late).
describe('withRetries waits within the deadline, whatever Retry-After says', () => {
	beforeEach(() => {
		jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
	});
	afterEach(() => {
		jest.useRealTimers();
	});

	const ctx = {} as ApiContext;
	const rateLimited = (retryAfterMs: number): Fault => ({
		kind: 'http',
		statusCode: 429,
		retryAfterMs,
		message: 'The service answered HTTP 429 (rate limited)',
	});
	const failing = (fault: Fault) => {
		let calls = 0;
		return {
			attempt: async () => {
				calls++;
				throw new TransportError({ ...fault });
			},
			calls: () => calls,
		};
	};

	/** Runs `work` to its end on the fake clock: what it settled with, and the time it waited. */
	async function onFakeClock(work: () => Promise<unknown>) {
		const started = Date.now();
		let settled = false;
		let outcome: unknown;
		work().then(
			(v) => {
				outcome = v;
				settled = true;
			},
			(e: unknown) => {
				outcome = e;
				settled = true;
			},
		);
		for (let i = 0; i < 100 && !settled; i++) await jest.advanceTimersToNextTimerAsync();
		expect(settled).toBe(true);
		return { outcome, waitedMs: Date.now() - started };
	}

	it('a Retry-After longer than the time left ends at once, naming the wait asked', async () => {
		const f = failing(rateLimited(20_000));
		const { outcome, waitedMs } = await onFakeClock(() =>
			withRetries(ctx, f.attempt, () => true, { deadline: Date.now() + 3000 }),
		);
		expect(waitedMs).toBe(0);
		expect(f.calls()).toBe(1);
		expect(outcome).toBeInstanceOf(TransportError);
		expect((outcome as Error).message).toMatch(/asked to wait 20 s, more than the 2 s left/);
	});

	it('Retry-After: 3600 without any deadline: the default wait budget ends it at once', async () => {
		const f = failing(rateLimited(3_600_000));
		const { outcome, waitedMs } = await onFakeClock(() =>
			withRetries(ctx, f.attempt, () => true, {}),
		);
		expect(waitedMs).toBe(0);
		expect(f.calls()).toBe(1);
		expect((outcome as Error).message).toMatch(/asked to wait 3600 s/);
	});

	it('waits a Retry-After that fits, then stops when the next would not', async () => {
		const f = failing(rateLimited(1200));
		const { outcome, waitedMs } = await onFakeClock(() =>
			withRetries(ctx, f.attempt, () => true, { deadline: Date.now() + 3500 }),
		);
		// Waits of 1.2 s at 0 and 1.2 s; a third would end past 3.5 s - 1 s of attempt time.
		expect(f.calls()).toBe(3);
		expect(waitedMs).toBe(2400);
		expect(outcome).toBeInstanceOf(TransportError);
	});

	it('an attempt timeout is cut to the time left, never below 1 s', () => {
		expect(attemptTimeout(30_000, undefined)).toBe(30_000);
		expect(attemptTimeout(30_000, Date.now() + 5000)).toBeLessThanOrEqual(5000);
		expect(attemptTimeout(30_000, Date.now() - 5000)).toBe(1000);
	});
});
