// Which faults are retried where. The rule that matters most: a submission is repeated only
// when the service cannot have accepted it, since a repeat may create (and bill) a second task.
import { AxiosError, AxiosHeaders } from 'axios';

import {
	classifyError,
	DEFAULT_BACKOFF,
	isSafeToResubmit,
	isTransientForRead,
	parseRetryAfter,
	plainWords,
	retryDelay,
	scrubSecret,
	submitMayHaveBeenAccepted,
	TransportError,
	type Fault,
} from '../../../nodes/shared/transport/faults';

function networkError(code: string, message = code): Error {
	const error = new AxiosError(message, code);
	return error;
}

function httpError(status: number, headers: Record<string, string> = {}): Error {
	const response = {
		status,
		statusText: '',
		headers: new AxiosHeaders(headers),
		config: { headers: new AxiosHeaders() },
		data: {},
	};
	return new AxiosError(
		`Request failed with status code ${status}`,
		'ERR_BAD_RESPONSE',
		undefined,
		{},
		response as never,
	);
}

/** What n8n's httpRequestWithAuthentication throws: a node error whose cause is the axios one. */
function wrapped(cause: Error): Error {
	return new Error('wrapped by n8n', { cause });
}

describe('classification of what a request threw', () => {
	it.each([
		['ECONNREFUSED', 'refused'],
		['ENOTFOUND', 'refused'],
		['ECONNRESET', 'network'],
		['EPIPE', 'network'],
		['ETIMEDOUT', 'timeout'],
		['ECONNABORTED', 'timeout'],
	])('%s → %s, also when wrapped', (code, kind) => {
		expect(classifyError(networkError(code)).kind).toBe(kind);
		expect(classifyError(wrapped(networkError(code))).kind).toBe(kind);
	});

	it('an HTTP answer carries its status and Retry-After', () => {
		const fault = classifyError(wrapped(httpError(429, { 'retry-after': '3' })));
		expect(fault).toMatchObject({ kind: 'http', statusCode: 429, retryAfterMs: 3000 });
	});

	it('an aborted request is a cancellation when the execution signal fired', () => {
		const controller = new AbortController();
		controller.abort();
		expect(classifyError(networkError('ERR_CANCELED', 'canceled'), controller.signal).kind).toBe(
			'cancelled',
		);
	});

	it('a TransportError keeps its fault', () => {
		const fault: Fault = { kind: 'truncated', message: 'short' };
		expect(classifyError(new TransportError(fault))).toBe(fault);
	});

	it('messages carry words, not the codes n8n would swap for a generic sentence', () => {
		const fault = classifyError(networkError('ECONNRESET'));
		expect(fault.message).not.toMatch(/ECONNRESET/i);
		expect(fault.message).toContain('connection reset');
		expect(plainWords('socket ECONNREFUSED, then ETIMEDOUT')).toBe(
			'socket connection refused, then timed out',
		);
	});
});

describe('retry rules', () => {
	const f = (kind: Fault['kind'], statusCode?: number): Fault => ({
		kind,
		statusCode,
		message: '',
	});

	it('status reads and downloads retry transient faults only', () => {
		for (const fault of [
			f('http', 429),
			f('http', 500),
			f('http', 502),
			f('http', 503),
			f('network'),
			f('timeout'),
			f('refused'),
			f('malformed'),
			f('truncated'),
			f('envelope', 500),
		]) {
			expect(isTransientForRead(fault)).toBe(true);
		}
		for (const fault of [
			f('http', 400),
			f('http', 401),
			f('http', 403),
			f('http', 404),
			f('envelope', 400),
			f('cancelled'),
			f('config'),
		]) {
			expect(isTransientForRead(fault)).toBe(false);
		}
	});

	it('a submission is repeated only after 429 or a refused connection', () => {
		expect(isSafeToResubmit(f('http', 429))).toBe(true);
		expect(isSafeToResubmit(f('envelope', 429))).toBe(true);
		expect(isSafeToResubmit(f('refused'))).toBe(true);
		for (const fault of [
			f('http', 500),
			f('http', 502),
			f('http', 503),
			f('network'),
			f('timeout'),
			f('malformed'),
			f('envelope', 500),
			f('http', 400),
		]) {
			expect(isSafeToResubmit(fault)).toBe(false);
		}
	});

	it('says when a failed submission may still have created a task', () => {
		for (const fault of [
			f('http', 500),
			f('network'),
			f('timeout'),
			f('malformed'),
			f('http', 408),
		]) {
			expect(submitMayHaveBeenAccepted(fault)).toBe(true);
		}
		for (const fault of [
			f('refused'),
			f('http', 400),
			f('http', 401),
			f('http', 429),
			f('cancelled'),
		]) {
			expect(submitMayHaveBeenAccepted(fault)).toBe(false);
		}
	});

	it('backs off exponentially up to a cap, never below Retry-After', () => {
		const noJitter = () => 1;
		expect(retryDelay(1, f('network'), DEFAULT_BACKOFF, noJitter)).toBe(DEFAULT_BACKOFF.baseMs);
		expect(retryDelay(3, f('network'), DEFAULT_BACKOFF, noJitter)).toBe(DEFAULT_BACKOFF.baseMs * 4);
		expect(retryDelay(30, f('network'), DEFAULT_BACKOFF, noJitter)).toBe(DEFAULT_BACKOFF.maxMs);
		expect(
			retryDelay(1, { ...f('http', 429), retryAfterMs: 9000 }, DEFAULT_BACKOFF, noJitter),
		).toBe(9000);
		// Jitter stays within half to all of the exponential step.
		expect(retryDelay(2, f('network'), DEFAULT_BACKOFF, () => 0)).toBe(DEFAULT_BACKOFF.baseMs);
	});

	it('parses Retry-After as seconds or an HTTP date, bounded to an hour', () => {
		const now = Date.parse('2026-01-01T00:00:00Z');
		expect(parseRetryAfter('5', now)).toBe(5000);
		expect(parseRetryAfter(['2'], now)).toBe(2000);
		expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
		expect(parseRetryAfter('999999', now)).toBe(3_600_000);
		expect(parseRetryAfter('soon', now)).toBeUndefined();
		expect(parseRetryAfter(undefined, now)).toBeUndefined();
	});
});

describe('secrets', () => {
	it('removes the API key and any bearer token from a text', () => {
		const text = 'failed with key sk-live-123456 and header Authorization: Bearer sk-other-999';
		const clean = scrubSecret(text, ['sk-live-123456']);
		expect(clean).not.toContain('sk-live-123456');
		expect(clean).not.toContain('sk-other-999');
	});
});
