/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import type { IDataObject } from 'n8n-workflow';

import {
	CallbackBodyError,
	MAX_CANDIDATES,
	MAX_OWN_PARSE_BYTES,
	NAMES_PER_OBJECT,
	parseCallbackBody,
} from '../../../nodes/shared/callbackBody';

/** Measured figures go to stdout (printed by jest's runner, read by people, not asserted). */
const report = (line: string) => process.stdout.write(`${line}\n`);

/** Counts every way the parser could look at an object's keys. */
function counted<T extends object>(target: T, counts: { reads: number; enumerations: number }): T {
	return new Proxy(target, {
		ownKeys(t) {
			counts.enumerations++;
			return Reflect.ownKeys(t);
		},
		getOwnPropertyDescriptor(t, k) {
			counts.reads++;
			return Reflect.getOwnPropertyDescriptor(t, k);
		},
		get(t, k, r) {
			counts.reads++;
			return Reflect.get(t, k, r) as unknown;
		},
		has(t, k) {
			counts.reads++;
			return Reflect.has(t, k);
		},
	});
}

function manyKeys(n: number, extra: IDataObject = {}): IDataObject {
	const body: IDataObject = {};
	for (let i = 0; i < n; i++) body[`k${i}`] = i;
	return Object.assign(body, extra);
}

const bound = NAMES_PER_OBJECT * MAX_CANDIDATES * 2;

describe('hostile callback bodies: the work is bounded whatever the body', () => {
	it('never enumerates the keys of a body, and reads a fixed number of names', () => {
		for (const n of [10, 100_000]) {
			const counts = { reads: 0, enumerations: 0 };
			const body = counted(manyKeys(n, { data: { task_id: 't-1', status: 'finished' } }), counts);
			expect(parseCallbackBody(body).taskId).toBe('t-1');
			expect(counts.enumerations).toBe(0);
			expect(counts.reads).toBeLessThanOrEqual(bound);
		}
	});

	it('a body with no task id and 100,000 keys: 400, keys not listed, bounded reads', () => {
		const counts = { reads: 0, enumerations: 0 };
		const body = counted(manyKeys(100_000), counts);
		expect(() => parseCallbackBody(body)).toThrow(/no task id.*not listed/);
		expect(counts.enumerations).toBe(0);
		expect(counts.reads).toBeLessThanOrEqual(bound);
	});

	it('wrappers nested without end: at most MAX_CANDIDATES objects are looked into', () => {
		let inner: IDataObject = { task_id: 'too-deep' };
		for (let i = 0; i < 1000; i++) inner = { data: inner, task: inner, result: inner };
		const counts = { reads: 0, enumerations: 0 };
		expect(() => parseCallbackBody(counted(inner, counts))).toThrow(CallbackBodyError);
		// The proxy only wraps the outer object; the walk stops after MAX_CANDIDATES anyway.
		expect(counts.enumerations).toBe(0);
	});

	it('deeply nested lists get a 400, not a RangeError', () => {
		const depth = 200_000;
		const deep = JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;
		const thrown = (() => {
			try {
				parseCallbackBody(deep);
			} catch (e) {
				return e as Error;
			}
			return undefined;
		})();
		expect(thrown).toBeInstanceOf(CallbackBodyError);
		expect((thrown as CallbackBodyError).httpStatus).toBe(400);
		expect(thrown!.message).toMatch(/not a JSON object \(got a list of 1 entries\)/);
		const deepObject = JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as unknown;
		expect(() => parseCallbackBody(deepObject)).toThrow(/no task id/);
	});

	it('never quotes more than a short excerpt of what it received', () => {
		const huge = 'x'.repeat(5_000_000);
		const cases: Array<[unknown, unknown?]> = [
			[huge],
			[{}, Buffer.from(`{"k":"${huge}"`)],
			[{ [huge]: 1 }, Buffer.from('{}')],
			[[huge]],
			[{ task_id: huge }],
			[{ task_id: 5, status: huge }],
		];
		for (const [body, raw] of cases) {
			let message = '';
			try {
				const parsed = parseCallbackBody(body, raw);
				message = JSON.stringify(parsed.rawStatus ?? '');
			} catch (e) {
				message = (e as Error).message;
			}
			expect(message.length).toBeLessThan(400);
		}
	});

	it('text bodies larger than the trigger parses itself get a 413 without being parsed', () => {
		const text = `{"task_id":"t","pad":"${'x'.repeat(MAX_OWN_PARSE_BYTES)}"}`;
		for (const [body, raw] of [
			[text, undefined],
			[undefined, Buffer.from(text)],
		] as const) {
			try {
				parseCallbackBody(body, raw);
				throw new Error('accepted');
			} catch (e) {
				expect(e).toBeInstanceOf(CallbackBodyError);
				expect((e as CallbackBodyError).httpStatus).toBe(413);
			}
		}
	});

	it("measures (prints) the trigger's own work against JSON.parse of the same body", () => {
		const text = `{${Array.from({ length: 1_000_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
		const raw = Buffer.from(text);
		let t = performance.now();
		const body = JSON.parse(text) as IDataObject;
		const parseMs = performance.now() - t;
		t = performance.now();
		expect(() => parseCallbackBody(body, raw)).toThrow(/no task id/);
		const ownMs = performance.now() - t;
		report(
			`[trigger] ${(raw.length / 1e6).toFixed(1)} MB body, 1,000,000 keys: JSON.parse ${parseMs.toFixed(0)} ms, the trigger's own search ${ownMs.toFixed(2)} ms = ${(ownMs / parseMs).toFixed(4)} × JSON.parse`,
		);
	});

	it('a parsed JSON body is used as it is: the raw bytes are not parsed again', () => {
		const raw = Buffer.from('{"task_id":"from-raw"}');
		expect(parseCallbackBody({ task_id: 'from-body' }, raw).taskId).toBe('from-body');
		// n8n leaves {} for a type it does not parse: then the raw bytes count.
		expect(parseCallbackBody({}, raw).taskId).toBe('from-raw');
	});
});
