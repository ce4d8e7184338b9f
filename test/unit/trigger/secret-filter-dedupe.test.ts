import type { IDataObject } from 'n8n-workflow';
import { deliveryKey, eventWanted, rememberDelivery } from '../../../nodes/shared/callbackBody';
import { queryValue, secretMatches } from '../../../nodes/shared/callbackUrl';

describe('secret from the callback URL', () => {
	it('accepts exactly the configured value', () => {
		expect(secretMatches('s3cret-value', 's3cret-value')).toBe(true);
	});
	it.each([
		['a wrong value', 's3cret-valuf'],
		['a prefix', 's3cret'],
		['a longer value', 's3cret-value-and-more'],
		['an empty value', ''],
		['another case', 'S3CRET-VALUE'],
	])('refuses %s', (_name, provided) => {
		expect(secretMatches(provided, 's3cret-value')).toBe(false);
	});
	it('refuses a missing or repeated parameter', () => {
		expect(secretMatches(undefined, 'x')).toBe(false);
		expect(secretMatches(['x', 'x'], 'x')).toBe(false);
	});
	it('takes the first of repeated query parameters and ignores non-strings', () => {
		expect(queryValue({ ref: ['row-1', 'row-2'] }, 'ref')).toBe('row-1');
		expect(queryValue({ ref: 'row-3' }, 'ref')).toBe('row-3');
		expect(queryValue({ ref: { a: 1 } }, 'ref')).toBeUndefined();
		expect(queryValue(undefined, 'ref')).toBeUndefined();
	});
});

describe('event filter', () => {
	it.each([
		['any', 'finished', true],
		['any', 'failed', true],
		['any', 'pending', false],
		['finished', 'finished', true],
		['finished', 'failed', false],
		['failed', 'failed', true],
		['failed', 'finished', false],
	] as const)('%s lets %s through: %s', (filter, status, wanted) => {
		expect(eventWanted(filter, status)).toBe(wanted);
	});
});

describe('duplicate deliveries', () => {
	const limits = { maxAgeMs: 1000, maxEntries: 3 };

	it('accepts a task+status once, then refuses it', () => {
		const store: IDataObject = {};
		expect(rememberDelivery(store, deliveryKey('t1', 'finished'), 0, limits)).toBe(true);
		expect(rememberDelivery(store, deliveryKey('t1', 'finished'), 10, limits)).toBe(false);
	});

	it('treats another status of the same task as a new delivery', () => {
		const store: IDataObject = {};
		rememberDelivery(store, deliveryKey('t1', 'failed'), 0, limits);
		expect(rememberDelivery(store, deliveryKey('t1', 'finished'), 1, limits)).toBe(true);
	});

	it('forgets entries older than the age limit', () => {
		const store: IDataObject = {};
		rememberDelivery(store, 'old', 0, limits);
		expect(rememberDelivery(store, 'old', 1001, limits)).toBe(true);
	});

	it('keeps at most maxEntries, dropping the oldest', () => {
		const store: IDataObject = {};
		for (const [i, k] of ['a', 'b', 'c', 'd'].entries()) rememberDelivery(store, k, i, limits);
		expect(Object.keys(store).sort()).toEqual(['b', 'c', 'd']);
		expect(rememberDelivery(store, 'a', 5, limits)).toBe(true);
		expect(rememberDelivery(store, 'd', 6, limits)).toBe(false);
	});

	it('stays small with the default limits under a long stream of tasks', () => {
		const store: IDataObject = {};
		for (let i = 0; i < 5000; i++) rememberDelivery(store, deliveryKey(`task-${i}`, 'finished'), i);
		expect(Object.keys(store)).toHaveLength(1000);
		expect(JSON.stringify(store).length).toBeLessThan(64 * 1024);
	});

	it('drops malformed entries left in static data', () => {
		const store: IDataObject = { junk: 'x', other: null };
		rememberDelivery(store, 'k', 0, limits);
		expect(Object.keys(store)).toEqual(['k']);
	});
});
