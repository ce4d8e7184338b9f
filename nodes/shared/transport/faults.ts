/**
 * Classification of what went wrong with one HTTP exchange, and the retry rules built on it.
 * Pure: no n8n context needed, so the rules are unit-tested directly.
 */

export type FaultKind =
	/** Nothing reached the service (connection refused, unknown host): always safe to repeat. */
	| 'refused'
	/** The connection broke or the answer never came: the request may have been processed. */
	| 'network'
	| 'timeout'
	/** The service answered with an HTTP status other than 2xx. */
	| 'http'
	/** HTTP 2xx, but the envelope's `code` says error. */
	| 'envelope'
	/** HTTP 2xx, but the body is not what the spec describes. */
	| 'malformed'
	/** A download ended before Content-Length bytes arrived. */
	| 'truncated'
	/** The user cancelled the execution. */
	| 'cancelled'
	/** The node's own settings are unusable (credential's Base URL, ...). */
	| 'config';

export interface Fault {
	kind: FaultKind;
	message: string;
	statusCode?: number;
	/** From a Retry-After header, when one came with the answer. */
	retryAfterMs?: number;
	/** Low-level code (ECONNRESET, ...) when there was one. */
	code?: string;
}

/** An Error carrying a Fault; what transport functions throw (wrapped by the operations). */
export class TransportError extends Error {
	readonly fault: Fault;

	constructor(fault: Fault) {
		super(fault.message);
		this.name = 'TransportError';
		this.fault = fault;
	}
}

const REFUSED_CODES = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ECONNABORTED', 'ESOCKETTIMEDOUT', 'ERR_TIMEOUT']);
const CANCEL_CODES = new Set(['ERR_CANCELED', 'ABORT_ERR']);

/** Parses Retry-After (seconds or an HTTP date) into milliseconds, bounded to one hour. */
export function parseRetryAfter(value: unknown, now = Date.now()): number | undefined {
	const raw = Array.isArray(value) ? value[0] : value;
	if (typeof raw === 'number' && Number.isFinite(raw))
		return Math.min(3_600_000, Math.max(0, raw * 1000));
	if (typeof raw !== 'string' || raw.trim() === '') return undefined;
	const text = raw.trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Math.min(3_600_000, Number(text) * 1000);
	const date = Date.parse(text);
	if (Number.isNaN(date)) return undefined;
	return Math.min(3_600_000, Math.max(0, date - now));
}

function headerValue(headers: unknown, name: string): unknown {
	if (!headers || typeof headers !== 'object') return undefined;
	const record = headers as Record<string, unknown>;
	const key = Object.keys(record).find((k) => k.toLowerCase() === name);
	return key === undefined ? undefined : record[key];
}

export function retryAfterFromHeaders(headers: unknown): number | undefined {
	return parseRetryAfter(headerValue(headers, 'retry-after'));
}

export { headerValue };

/**
 * Plain words for low-level codes. Messages must not contain the codes themselves: n8n's node
 * errors replace any message containing "ECONNRESET" & co. with a generic sentence.
 */
const CODE_WORDS: Record<string, string> = {
	ECONNREFUSED: 'connection refused',
	ENOTFOUND: 'host name not found',
	GETADDRINFO: 'host name lookup failed',
	EAI_AGAIN: 'host name lookup failed',
	EHOSTUNREACH: 'host unreachable',
	ENETUNREACH: 'network unreachable',
	EADDRNOTAVAIL: 'address not available',
	ERRADDRINUSE: 'address in use',
	ECONNRESET: 'connection reset',
	ECONNABORTED: 'timed out',
	ETIMEDOUT: 'timed out',
	ESOCKETTIMEDOUT: 'timed out',
	EPIPE: 'connection closed while sending',
	ENOENT: 'no such file',
	EISDIR: 'is a directory',
	ENOTDIR: 'not a directory',
	EACCES: 'permission denied',
	EEXIST: 'already exists',
	EPERM: 'operation not permitted',
};

/** Replaces low-level codes in a text by plain words (see CODE_WORDS). */
export function plainWords(text: string): string {
	let result = text;
	for (const [code, words] of Object.entries(CODE_WORDS)) {
		result = result.replace(new RegExp(code, 'gi'), words);
	}
	return result;
}

export function describeCode(code: string | undefined, fallback: string): string {
	return plainWords((code ?? fallback).slice(0, 120));
}

/** Walks an error and its causes for the low-level code and a response, if any. */
function digest(error: unknown): {
	code?: string;
	message: string;
	status?: number;
	headers?: unknown;
	aborted: boolean;
} {
	let code: string | undefined;
	let status: number | undefined;
	let headers: unknown;
	let aborted = false;
	const messages: string[] = [];
	let current: unknown = error;
	for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
		const e = current as {
			code?: unknown;
			message?: unknown;
			name?: unknown;
			response?: { status?: unknown; headers?: unknown };
			cause?: unknown;
		};
		if (!code && typeof e.code === 'string') code = e.code;
		if (e.name === 'AbortError' || e.name === 'CanceledError') aborted = true;
		if (typeof e.message === 'string' && e.message) messages.push(e.message);
		if (status === undefined && e.response && typeof e.response.status === 'number') {
			status = e.response.status;
			headers = e.response.headers;
		}
		current = e.cause;
	}
	return {
		code,
		status,
		headers,
		aborted,
		message: messages[messages.length - 1] ?? String(error),
	};
}

/** The code of a request n8n's own SSRF protection stopped before anything was sent. */
export const SSRF_BLOCKED = 'ERR_SSRF_BLOCKED';

/**
 * A request n8n's SSRF protection stopped (N8N_SSRF_PROTECTION_ENABLED=true; n8n's
 * @n8n/backend-network throws SsrfBlockedIpError or SsrfBlockedHostnameError from its check
 * before the request, from the lookup before connecting, and before a redirect is followed:
 * nothing reaches the target). `host`: the name looked up, when the error names only the
 * address; `hint` goes before "Not retried". Undefined for anything else.
 */
export function ssrfBlock(
	error: unknown,
	{ host: asked, hint = '' }: { host?: string; hint?: string } = {},
): Fault | undefined {
	let current: unknown = error;
	for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
		const e = current as { name?: unknown; ip?: unknown; hostname?: unknown; cause?: unknown };
		const ip = typeof e.ip === 'string' ? e.ip : undefined;
		const host = typeof e.hostname === 'string' ? e.hostname : asked !== ip ? asked : undefined;
		let why: string | undefined;
		if (e.name === 'SsrfBlockedIpError') {
			const target = host && ip ? `${host} (${ip})` : (ip ?? host ?? 'the address');
			why = `${target} is in an address range n8n is set to block`;
		} else if (e.name === 'SsrfBlockedHostnameError') {
			why = `${host ?? 'the host'} is on n8n's blocked host names (N8N_SSRF_BLOCKED_HOSTNAMES)`;
		}
		if (why !== undefined) {
			return {
				kind: 'config',
				code: SSRF_BLOCKED,
				message: `blocked by n8n's SSRF protection (N8N_SSRF_PROTECTION_ENABLED is on): ${why}, so nothing was sent. To reach it, the n8n administrator adds it to N8N_SSRF_ALLOWED_HOSTNAMES (host names) or N8N_SSRF_ALLOWED_IP_RANGES (addresses) and restarts n8n${hint}. Not retried`,
			};
		}
		current = e.cause;
	}
	return undefined;
}

/**
 * Turns anything a request threw into a Fault. `signal` tells a user cancellation apart from a
 * timeout (both surface as aborted requests).
 */
export function classifyError(error: unknown, signal?: AbortSignal): Fault {
	if (error instanceof TransportError) return error.fault;
	const blocked = ssrfBlock(error);
	if (blocked) return blocked;
	const d = digest(error);
	if (signal?.aborted || (d.code && CANCEL_CODES.has(d.code)) || d.aborted) {
		if (signal?.aborted || !(d.code && TIMEOUT_CODES.has(d.code))) {
			return { kind: 'cancelled', message: 'The execution was cancelled', code: d.code };
		}
	}
	if (d.status !== undefined) {
		return {
			kind: 'http',
			statusCode: d.status,
			retryAfterMs: retryAfterFromHeaders(d.headers),
			message: `HTTP ${d.status}`,
			code: d.code,
		};
	}
	if (d.code && REFUSED_CODES.has(d.code)) {
		return {
			kind: 'refused',
			code: d.code,
			message: `could not connect: ${describeCode(d.code, '')}`,
		};
	}
	if ((d.code && TIMEOUT_CODES.has(d.code)) || /timeout/i.test(d.message)) {
		return { kind: 'timeout', code: d.code, message: 'no answer in time' };
	}
	return {
		kind: 'network',
		code: d.code,
		message: `the connection failed (${describeCode(d.code, d.message)})`,
	};
}

/** The code of an answer larger than api.ts's MAX_ANSWER_BYTES. */
export const ANSWER_TOO_LARGE = 'ERR_ANSWER_TOO_LARGE';

/** Whether a status read or a download may be repeated after this fault. */
export function isTransientForRead(fault: Fault): boolean {
	switch (fault.kind) {
		case 'refused':
		case 'network':
		case 'timeout':
		case 'truncated':
			return true;
		case 'malformed':
			// An answer over the size cap would come again: asking again only costs the memory.
			return fault.code !== ANSWER_TOO_LARGE;
		case 'http':
			return fault.statusCode === 429 || fault.statusCode === 408 || (fault.statusCode ?? 0) >= 500;
		case 'envelope':
			// The envelope's code mirrors HTTP statuses in practice: same rule.
			return fault.statusCode === 429 || (fault.statusCode ?? 0) >= 500;
		default:
			return false;
	}
}

/**
 * Whether a submission may be repeated after this fault. Only when the service cannot have
 * accepted it: a 429 (rejected before processing) or a connection that never opened. Anything
 * after the request left (5xx, drop, timeout, garbled answer) may hide an accepted, billed task.
 */
export function isSafeToResubmit(fault: Fault): boolean {
	if (fault.kind === 'refused') return true;
	if (fault.kind === 'http' || fault.kind === 'envelope') return fault.statusCode === 429;
	return false;
}

/** Whether the service may have created (and billed) a task despite this fault. */
export function submitMayHaveBeenAccepted(fault: Fault): boolean {
	if (fault.kind === 'refused' || fault.kind === 'cancelled') return false;
	if (fault.kind === 'http' || fault.kind === 'envelope') {
		// 4xx other than 408 are rejections; 408, 5xx and odd codes are ambiguous.
		const status = fault.statusCode ?? 0;
		return status === 408 || status >= 500 || status < 400;
	}
	return true;
}

export interface BackoffOptions {
	baseMs: number;
	maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 15_000 };

/**
 * Delay before retry number `attempt` (1-based): exponential with "equal jitter", never shorter
 * than a Retry-After the service sent. `random` is injectable for tests.
 */
export function retryDelay(
	attempt: number,
	fault: Fault,
	options: BackoffOptions = DEFAULT_BACKOFF,
	random: () => number = Math.random,
): number {
	const exp = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, attempt - 1));
	const jittered = exp / 2 + (random() * exp) / 2;
	return Math.round(Math.max(jittered, fault.retryAfterMs ?? 0));
}

/**
 * Query parameters whose values are secrets wherever a URL is quoted: the trigger's `secret`,
 * a reference signature (`sig`), n8n's resume URLs (`signature`), and the usual token names.
 * Matched after `?`, `&` or `;`, plain or percent-encoded (a URL quoted inside another URL).
 */
const SECRET_QUERY =
	/((?:[?&;]|%3f|%26)(?:secret|sig|signature|token|access_token|api_key|apikey)(?:=|%3d))(?:(?!%26)[^&\s"'<>#,;)}\]\\])*/gi;

/**
 * Removes secrets from any text before it reaches an error, a log line or an output item: the
 * given values (the API key, a trigger secret), any Bearer token, and the values of secret
 * query parameters (SECRET_QUERY) of any URL the text quotes, such as a service error that
 * repeats the callback_url.
 */
export function scrubSecret(text: string, secrets: Array<string | undefined> = []): string {
	let result = text;
	for (const secret of secrets) {
		if (!secret || secret.length < 4) continue;
		result = result.split(secret).join('***');
	}
	return result.replace(/(Bearer\s+)[^\s"',}]+/gi, '$1***').replace(SECRET_QUERY, '$1***');
}
