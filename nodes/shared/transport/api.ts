import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	IWebhookFunctions,
} from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { isAllowedBaseUrl } from './baseUrlRule';
import {
	ANSWER_TOO_LARGE,
	classifyError,
	DEFAULT_BACKOFF,
	headerValue,
	isSafeToResubmit,
	isTransientForRead,
	retryAfterFromHeaders,
	retryDelay,
	scrubSecret,
	TransportError,
	type Fault,
} from './faults';
import {
	parseStatusResponse,
	parseSubmitResponse,
	ResponseShapeError,
	taskIdProblem,
	type SubmittedTask,
	type Task,
} from '../task';

export const CREDENTIAL_NAME = 'mediaGenerationApi';

export type ApiContext = IExecuteFunctions | IWebhookFunctions;

export interface ApiCredentials {
	baseUrl: string;
	apiKey: string;
	/** Whether files may come from private, loopback and link-local addresses (default false). */
	allowPrivateFileHosts: boolean;
}

/** This machine by name or address (localhost, *.localhost, 127.x.x.x, ::1, or the any-address). */
export function isLocalHost(host: string): boolean {
	const h = host.replace(/^\[|\]$/g, '').toLowerCase();
	return (
		h === 'localhost' ||
		h.endsWith('.localhost') ||
		h === '0.0.0.0' ||
		h === '::1' ||
		h === '::' ||
		// An IPv4 literal only: a name such as 127.0.0.1.example.com is anyone's host.
		/^127(\.\d{1,3}){3}$/.test(h)
	);
}

/**
 * Trims and drops trailing slashes; rejects anything that is not an http(s) address, and http://
 * to a host that is not this machine.
 */
export function normaliseBaseUrl(raw: unknown): string {
	const text = typeof raw === 'string' ? raw.trim().replace(/\/+$/, '') : '';
	if (!/^https?:\/\/[^\s/]+/i.test(text)) {
		throw new TransportError({
			kind: 'config',
			message: `The credential's Base URL "${String(raw ?? '')}" is not an http(s) address (e.g. https://api.example.com)`,
		});
	}
	const url = new URL(text);
	if (!isAllowedBaseUrl(text)) {
		// http:// to another host: the Bearer key would cross the network in clear text.
		throw new TransportError({
			kind: 'config',
			message: `The credential's Base URL ${url.origin} uses http:// for a host that is not this machine, so the API key would travel unencrypted: nothing was sent. Use https:// (http:// is accepted only for localhost, 127.x.x.x and [::1], written as such)`,
		});
	}
	return text;
}

const credentialCache = new WeakMap<object, Promise<ApiCredentials>>();

/** The credential, read once per node run (each read decrypts it). */
export async function getApiCredentials(ctx: ApiContext): Promise<ApiCredentials> {
	let cached = credentialCache.get(ctx);
	if (!cached) {
		cached = ctx.getCredentials(CREDENTIAL_NAME).then((c) => ({
			baseUrl: normaliseBaseUrl(c.baseUrl),
			apiKey: typeof c.apiKey === 'string' ? c.apiKey.trim() : '',
			allowPrivateFileHosts: c.allowPrivateFileHosts === true,
		}));
		credentialCache.set(ctx, cached);
		cached.catch(() => credentialCache.delete(ctx));
	}
	return await cached;
}

export function cancelSignalOf(ctx: ApiContext): AbortSignal | undefined {
	return 'getExecutionCancelSignal' in ctx ? ctx.getExecutionCancelSignal() : undefined;
}

export interface ApiResponse {
	statusCode: number;
	headers: IDataObject;
	body: unknown;
}

function serviceMessage(body: unknown): string {
	let value = body;
	if (typeof body === 'string') {
		try {
			value = JSON.parse(body);
		} catch {
			return body.slice(0, 200);
		}
	}
	if (value && typeof value === 'object') {
		const record = value as Record<string, unknown>;
		for (const key of ['message', 'msg', 'error', 'detail', 'error_message']) {
			const v = record[key];
			if (typeof v === 'string' && v) return v.slice(0, 300);
			if (v && typeof v === 'object' && typeof (v as IDataObject).message === 'string') {
				return ((v as IDataObject).message as string).slice(0, 300);
			}
		}
	}
	return '';
}

/** Where a redirect points, without its query (which may hold anything), for the message. */
function redirectHint(headers: IDataObject): string {
	const location = headerValue(headers, 'location');
	let target = 'another address';
	if (typeof location === 'string' && location !== '') {
		try {
			const url = new URL(location, 'http://unknown.invalid');
			target = url.host === 'unknown.invalid' ? url.pathname : `${url.origin}${url.pathname}`;
		} catch {
			target = 'an unreadable address';
		}
	}
	return ` (a redirect to ${target}: redirects are not followed, so the API key never goes to another address; if that address is the service, make it the credential's Base URL)`;
}

function httpHint(status: number, path: string): string {
	if (status === 401 || status === 403)
		return ' (check the API key in the Media Generation credential)';
	if (status === 404 && path.includes('/status/'))
		return ' (the service does not know this task_id)';
	if (status === 404) return " (check the credential's Base URL)";
	if (status === 429) return ' (rate limited)';
	return '';
}

/**
 * The largest answer read from the service, in bytes. A genuine answer is a few KB (a status
 * lists a task's files, the Trigger takes at most 20): n8n's client reads any answer whole, so a
 * hostile or broken service could otherwise fill the instance's memory.
 */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

function answerTooLarge(received: number): Fault {
	return {
		kind: 'malformed',
		code: ANSWER_TOO_LARGE,
		message: `the service's answer is larger than ${MAX_ANSWER_BYTES / (1024 * 1024)} MB (${received} bytes received before the node stopped reading); no genuine answer is that large. Not retried`,
	};
}

type AnswerStream = AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => void };

function isStream(body: unknown): body is AnswerStream {
	return (
		typeof body === 'object' &&
		body !== null &&
		typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
	);
}

/**
 * Reads a streamed answer up to MAX_ANSWER_BYTES and within `limitMs`, then parses it as JSON
 * (as n8n's client does with `json: true`: text that is not JSON stays text).
 */
async function readAnswer(body: unknown, limitMs: number): Promise<unknown> {
	if (!isStream(body)) return body;
	const chunks: Uint8Array[] = [];
	let size = 0;
	let fault: Fault | undefined;
	const clock = new AbortController();
	void sleep(limitMs, clock.signal).then(
		() => {
			fault = { kind: 'timeout', message: `the answer did not arrive within ${limitMs} ms` };
			body.destroy?.();
		},
		() => undefined,
	);
	try {
		for await (const chunk of body) {
			if (fault) break;
			size += chunk.length;
			if (size > MAX_ANSWER_BYTES) {
				fault = answerTooLarge(size);
				body.destroy?.();
				break;
			}
			chunks.push(chunk);
		}
	} catch (error) {
		fault ??= classifyError(error);
	} finally {
		clock.abort();
	}
	if (fault) throw new TransportError(fault);
	const text = new TextDecoder().decode(Buffer.concat(chunks));
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return text;
	}
}

/**
 * One authenticated request. Resolves only for 2xx; everything else becomes a TransportError
 * whose message names what happened and never contains the API key.
 */
export async function apiRequest(
	ctx: ApiContext,
	request: { method: IHttpRequestMethods; path: string; body?: IDataObject; timeoutMs?: number },
): Promise<ApiResponse> {
	const credentials = await getApiCredentials(ctx);
	const signal = cancelSignalOf(ctx);
	const options: IHttpRequestOptions = {
		method: request.method,
		url: `${credentials.baseUrl}${request.path}`,
		json: true,
		ignoreHttpStatusErrors: true,
		returnFullResponse: true,
		timeout: request.timeoutMs ?? 60_000,
		// Streamed, so that readAnswer can stop at MAX_ANSWER_BYTES.
		encoding: 'stream',
		// The key is for this service only. A redirect is not followed (it is reported, with
		// where it points, see redirectHint); and were one followed, the key stays behind.
		disableFollowRedirect: true,
		sendCredentialsOnCrossOriginRedirect: false,
		// The execution's Stop ends the request at once (httpRequestWithAuthentication would set
		// it; the plain helper used here does not).
		abortSignal: signal,
	};
	if (request.body) options.body = request.body;
	let response: { statusCode: number; headers?: IDataObject; body: unknown } | undefined;
	let failure: Fault | undefined;
	try {
		// The key read above, sent as the credential's `authenticate` would: letting n8n do it
		// (httpRequestWithAuthentication) resolves the credential once more per request (a
		// database read and a decryption, and in a webhook call a new expression isolate in n8n
		// 2.x), which under a burst of callbacks costs n8n more than the request itself.
		options.headers = { Authorization: `Bearer ${credentials.apiKey}` };
		response = (await ctx.helpers.httpRequest(options)) as typeof response;
		if (response) {
			response.body = await readAnswer(response.body, request.timeoutMs ?? 60_000);
		}
	} catch (error) {
		failure = classifyError(error, signal);
	}
	if (failure || !response) {
		const fault = failure ?? { kind: 'malformed' as const, message: 'no response' };
		fault.message = scrubSecret(`${request.method} ${request.path}: ${fault.message}`, [
			credentials.apiKey,
		]);
		throw new TransportError(fault);
	}
	const headers = (response.headers ?? {}) as IDataObject;
	if (response.statusCode < 200 || response.statusCode >= 300) {
		const redirected = response.statusCode >= 300 && response.statusCode < 400;
		const detail = redirected ? '' : serviceMessage(response.body);
		const hint = redirected ? redirectHint(headers) : httpHint(response.statusCode, request.path);
		throw new TransportError({
			kind: 'http',
			statusCode: response.statusCode,
			retryAfterMs: retryAfterFromHeaders(headers),
			message: scrubSecret(
				`The service answered HTTP ${response.statusCode}${hint}${detail ? `: ${detail}` : ''}`,
				[credentials.apiKey],
			),
		});
	}
	return { statusCode: response.statusCode, headers, body: response.body };
}

/** Runs a body parser; a ResponseShapeError becomes a TransportError with the right kind. */
async function parseOrFault<T>(
	ctx: ApiContext,
	response: ApiResponse,
	parse: (body: unknown) => T,
): Promise<T> {
	let shapeError: unknown;
	try {
		return parse(response.body);
	} catch (error) {
		shapeError = error;
	}
	const { apiKey } = await getApiCredentials(ctx);
	const isShape = shapeError instanceof ResponseShapeError;
	throw new TransportError({
		kind: isShape ? (shapeError as ResponseShapeError).kind : 'malformed',
		statusCode: isShape ? (shapeError as ResponseShapeError).code : undefined,
		retryAfterMs: retryAfterFromHeaders(response.headers),
		message: scrubSecret(shapeError instanceof Error ? shapeError.message : String(shapeError), [
			apiKey,
		]),
	});
}

export interface RetryOptions {
	signal?: AbortSignal;
	/** Retries after the first attempt. */
	retries?: number;
	/**
	 * Epoch ms by which the whole operation must be over. No wait between attempts ends after
	 * it: when the next delay (Retry-After included) would, the last fault is thrown at once.
	 * Each attempt's request timeout is also cut to the time left (see attemptTimeout).
	 */
	deadline?: number;
	/**
	 * Epoch ms until which 429 answers keep being retried without counting against `retries`
	 * (a 429 means "not accepted": safe to repeat for as long as the caller is willing to wait).
	 */
	rateLimitDeadline?: number;
	/**
	 * Total ms the loop may spend waiting between attempts (default MAX_RETRY_WAIT_MS), so that
	 * a long Retry-After fails at once instead of holding the execution.
	 */
	maxWaitMs?: number;
	/** Called before each retry (for logging). */
	onRetry?: (fault: Fault, attempt: number, delayMs: number) => void;
}

/** Default bound of the time withRetries spends waiting between attempts, in total. */
export const MAX_RETRY_WAIT_MS = 60_000;
/** Without a deadline of its own, a status read (with its retries) ends within this. */
export const STATUS_READ_LIMIT_MS = 60_000;
/**
 * How long a submission may wait out rate limits (429) and refused connections, in total: the
 * service is asked again while its Retry-After fits in this, else the item fails at once.
 */
export const SUBMIT_WAIT_LIMIT_MS = 10_000;
/** The request timeout of one status read attempt (cut to the deadline's time left). */
export const STATUS_READ_TIMEOUT_MS = 30_000;
/** An attempt is not started with less time than this left before the deadline. */
const MIN_ATTEMPT_MS = 1_000;

const isRateLimit = (fault: Fault) =>
	(fault.kind === 'http' || fault.kind === 'envelope') && fault.statusCode === 429;

/** The request timeout of one attempt: `normalMs`, cut to the time left before `deadline`. */
export function attemptTimeout(normalMs: number, deadline: number | undefined): number {
	if (deadline === undefined) return normalMs;
	return Math.max(MIN_ATTEMPT_MS, Math.min(normalMs, deadline - Date.now()));
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * Runs `attemptOnce` until it succeeds, the fault is not one `mayRetry` accepts, the retries are
 * spent, the next wait would not fit in the deadline or the wait budget, or the execution is
 * cancelled; backoff honours Retry-After. Throws a TransportError.
 */
export async function withRetries<T>(
	ctx: ApiContext,
	attemptOnce: () => Promise<T>,
	mayRetry: (fault: Fault) => boolean,
	options: RetryOptions,
): Promise<T> {
	const retries = options.retries ?? 5;
	const signal = options.signal ?? cancelSignalOf(ctx);
	const maxWaitMs = options.maxWaitMs ?? MAX_RETRY_WAIT_MS;
	let counted = 0;
	let waited = 0;
	for (let attempt = 0; ; attempt++) {
		let fault: Fault;
		try {
			return await attemptOnce();
		} catch (error) {
			fault = classifyError(error, signal);
		}
		// (Errors are thrown outside the catch blocks: the lint rule wants node errors there.)
		const delay = retryDelay(Math.min(attempt + 1, 8), fault, DEFAULT_BACKOFF);
		const now = Date.now();
		const waitingOutRateLimit =
			isRateLimit(fault) &&
			options.rateLimitDeadline !== undefined &&
			now + delay < options.rateLimitDeadline;
		if (!waitingOutRateLimit) counted++;
		const tried = attempt > 0 ? `after ${attempt + 1} attempts` : '';
		if (fault.kind === 'cancelled' || counted > retries || !mayRetry(fault)) {
			throw new TransportError({
				...fault,
				message: tried ? `${fault.message} (${tried})` : fault.message,
			});
		}
		const left = Math.min(
			maxWaitMs - waited,
			options.deadline === undefined ? Infinity : options.deadline - now - MIN_ATTEMPT_MS,
		);
		if (delay > left) {
			const asked =
				fault.retryAfterMs !== undefined
					? `the service asked to wait ${seconds(fault.retryAfterMs)} s, more than the ${seconds(left)} s left to this operation`
					: 'no time left to this operation for another attempt';
			throw new TransportError({
				...fault,
				message: `${fault.message} (${tried ? `${tried}; ` : ''}${asked})`,
			});
		}
		options.onRetry?.(fault, attempt + 1, delay);
		const slept = await sleep(delay, signal).then(
			() => true,
			() => false,
		);
		waited += delay;
		if (!slept)
			throw new TransportError({ kind: 'cancelled', message: 'The execution was cancelled' });
	}
}

/**
 * Reads a task's status: authenticated, retried on transient faults (429, 5xx, drops, garbage),
 * within `opts.deadline` (default: STATUS_READ_LIMIT_MS from now). The task id is checked
 * first (see taskIdProblem): an implausible one is refused before any request.
 */
export async function getTaskStatus(
	ctx: ApiContext,
	taskId: string,
	opts: RetryOptions = {},
): Promise<Task> {
	const problem = taskIdProblem(taskId);
	if (problem) {
		throw new TransportError({ kind: 'config', message: `The task_id ${problem}` });
	}
	const deadline = opts.deadline ?? Date.now() + STATUS_READ_LIMIT_MS;
	const path = `/api/generate/status/${encodeURIComponent(taskId)}`;
	return await withRetries(
		ctx,
		async () => {
			const response = await apiRequest(ctx, {
				method: 'GET',
				path,
				timeoutMs: attemptTimeout(STATUS_READ_TIMEOUT_MS, deadline),
			});
			return await parseOrFault(ctx, response, parseStatusResponse);
		},
		isTransientForRead,
		{ ...opts, deadline },
	);
}

/**
 * Submits one task. Repeated only while the service cannot have accepted it (429, connection
 * refused), and only within SUBMIT_WAIT_LIMIT_MS (and the caller's deadlines). Any other failure
 * is thrown with a Fault the caller reports as "may have been accepted": re-sending would risk
 * a second, billed task.
 */
export async function submitTask(
	ctx: ApiContext,
	body: IDataObject,
	opts: RetryOptions = {},
): Promise<SubmittedTask> {
	const deadline = Math.min(
		Date.now() + SUBMIT_WAIT_LIMIT_MS,
		opts.deadline ?? Infinity,
		opts.rateLimitDeadline ?? Infinity,
	);
	return await withRetries(
		ctx,
		async () => {
			const response = await apiRequest(ctx, {
				method: 'POST',
				path: '/api/generate/submit',
				body,
				// Not cut to the deadline: a submission cut short may still be accepted (and billed).
				timeoutMs: 60_000,
			});
			return await parseOrFault(ctx, response, parseSubmitResponse);
		},
		isSafeToResubmit,
		{ retries: 4, ...opts, deadline, rateLimitDeadline: deadline },
	);
}
