// A faithful HTTP stand-in for the media-generation service (../shared/spec): submit and
// status endpoints with Bearer auth and the spec's validation, a time-driven task lifecycle,
// result files on a second origin, callbacks, fault injection and a request log.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';

import {
	MEDIA,
	REFERENCE_MIME,
	actualSize,
	mediaChunks,
	referenceChunks,
	referenceSize,
	type MediaKind,
	type ReferenceFormat,
} from './media';
import { prng } from './random';
import { ValidationError, validateSubmission, type ValidationConfig } from './validation';
import {
	ENCODING_FAULTS,
	sendEncoded,
	sendGzipCut,
	sendGzipIncompressible,
	sendStalled,
	type EncodingFault,
} from './encodings';
import {
	DEFAULT_FETCH,
	fetchImage,
	type ImageFetchLogEntry,
	type ImageFetchOptions,
} from './imageFetch';

export * from './media';
export * from './validation';
export {
	FETCH_HEADERS,
	sniffImage,
	type ImageFetchLogEntry,
	type ImageFetchOptions,
} from './imageFetch';

/** `reference`: reference images served for workflows to point the service at (see referenceUrl). */
export type Endpoint = 'submit' | 'status' | 'file' | 'reference' | 'other';
export type TaskStatus = 'not_started' | 'queued' | 'processing' | 'finished' | 'failed';

export interface SimulatorOptions {
	apiKey?: string;
	/** API port, 0 = random. Binds 127.0.0.1 only. */
	port?: number;
	/** File host port, 0 = random. File URLs use http://localhost:<filePort>. */
	filePort?: number;
	imageModelId?: string;
	videoModelId?: string;
	/** Simulated generation time when the prompt sets none. */
	defaultDurationMs?: number;
	/** Body of callback POSTs: the status response, the bare task, or other key names. */
	callbackShape?: 'status' | 'flat' | 'altKeys';
	/** Retries of a callback POST answered non-2xx or not at all. */
	callbackRetries?: number;
	/** Seed of the PRNG behind fault rates. */
	seed?: number;
	/** How an unknown task id is answered: HTTP 404, HTTP 400, or HTTP 200 with envelope code 404. */
	unknownTaskStyle?: '404' | '400' | 'envelope';
	/** HTTP status for a missing or wrong key. */
	badKeyStatus?: 401 | 403;
	/** Name of the 2.0 fast model's audio option (not shown by the spec). */
	fastAudioField?: string;
	/** Whether 2.0 fast requires duration and aspect_ratio (not shown by the spec). */
	fastRequiresDurationAndAspect?: boolean;
	/**
	 * Whether an accepted task fetches every `input.image_urls` item as the service does, and
	 * fails when one cannot be fetched (default on; an object changes the deadline, redirects or
	 * size limit). Off only for a simulator whose tests submit made-up URLs on purpose.
	 */
	fetchImages?: boolean | Partial<ImageFetchOptions>;
}

export interface RequestLogEntry {
	origin: 'api' | 'files';
	endpoint: Endpoint;
	method: string;
	path: string;
	headers: Record<string, string | string[] | undefined>;
	/** HTTP status answered; 0 while pending or when the connection was dropped. */
	status: number;
	taskId?: string;
	at: number;
	body?: unknown;
	fault?: FaultKind;
}

export interface CallbackLogEntry {
	taskId: string;
	url: string;
	body: unknown;
	/** HTTP status the receiver answered, or 0 when the POST failed at network level. */
	status: number;
	error?: string;
	/** 1 for the first try. */
	attempt: number;
	at: number;
	forged: boolean;
}

export interface SimFile {
	index: number;
	kind: MediaKind;
	size: number;
	url: string;
}

export interface SimTask {
	id: string;
	model: string;
	kind: MediaKind;
	input: Record<string, unknown>;
	prompt: string;
	callbackUrl?: string;
	createdAt: number;
	durationMs: number;
	outcome: 'finish' | 'fail' | 'never';
	errorMessage?: string;
	files: SimFile[];
	/** Clock time at which it ended (finished or failed), once it has. */
	endedAt?: number;
	/** While its `image_urls` are being fetched: it cannot end before they are. */
	fetching: boolean;
	/** Failed at once because an input could not be fetched (progress stays 0). */
	inputFailed?: boolean;
	callbackDone: boolean;
}

export type FaultKind =
	| '429'
	| '500'
	| '502'
	| '503'
	| 'drop'
	| 'slow'
	| 'malformed'
	| 'code'
	| 'truncate'
	| 'unknownTask'
	| EncodingFault
	| 'gzipCut'
	| 'gzipMedia'
	| 'stall';

export interface FaultRule {
	endpoint: 'submit' | 'status' | 'file' | 'callback';
	kind: FaultKind;
	/** Probability 0..1 per matching request (default 1). */
	rate?: number;
	/** Maximum number of applications. */
	times?: number;
	/** Seconds, sent as Retry-After with 429 (and 503 when given). */
	retryAfter?: number;
	/** For 'slow': delay before the normal answer. */
	delayMs?: number;
	/** Submit only: fault before the task is created, or after (accepted, answer lost). */
	when?: 'before' | 'after';
	/** Only requests whose prompt or task id contains this. */
	match?: string;
}

export interface FaultController {
	add(rule: FaultRule): string;
	remove(id: string): void;
	clear(): void;
	/** How many times each rule applied. */
	applied(id: string): number;
	list(): Array<FaultRule & { id: string; applied: number }>;
}

/** How the file host serves a reference image (all optional). */
export interface ReferenceOptions {
	/** Bytes of the image (default: the format's minimum). */
	size?: number;
	/** Content-Type to claim instead of the real one; 'none' sends none. */
	type?: string;
	/** Answer HEAD with this status (e.g. 405) instead of the headers. */
	head?: number;
	/** Send no Content-Length (chunked), on HEAD and GET. */
	noLength?: boolean;
	/** Ignore Range headers and send the whole file. */
	ignoreRange?: boolean;
	/** Answer every request with this status instead (e.g. 404, 403). */
	status?: number;
	/** Serve a plain-text body instead of the image (under the type claimed). */
	text?: boolean;
	/** Answer with this many 302 redirects (to the same image) before the image itself. */
	redirects?: number;
	/** Answer with a 302 to itself, forever. */
	redirectLoop?: boolean;
	/** Wait this long before answering at all. */
	delayMs?: number;
}

export interface Simulator {
	baseUrl: string;
	fileBaseUrl: string;
	apiKey: string;
	port: number;
	filePort: number;
	imageModelId: string;
	videoModelId: string;
	requests: RequestLogEntry[];
	count(endpoint: Endpoint): number;
	callbacks: CallbackLogEntry[];
	/** Every fetch of an `image_urls` item, in the order they ended. */
	fetches: ImageFetchLogEntry[];
	tasks(): SimTask[];
	task(id: string): SimTask | undefined;
	/** Status response `data` of a task as the status endpoint would answer now. */
	view(id: string): Record<string, unknown> | undefined;
	faults: FaultController;
	clock: { now(): number; advance(ms: number): void };
	/**
	 * URL of a reference image on the file host, e.g. referenceUrl('start.png', { size: 11e6 }).
	 * The extension picks the format: png, jpg, webp, or gif (a type the service refuses).
	 */
	referenceUrl(name: string, options?: ReferenceOptions): string;
	/** Posts a callback now: by default the task's real body to its callback_url. */
	sendCallback(
		taskId: string,
		options?: { url?: string; body?: unknown },
	): Promise<CallbackLogEntry>;
	/** Resolves when every callback (with its retries) and image fetch under way has settled. */
	idle(): Promise<void>;
	/**
	 * The account's key changed: from now on only `key` is accepted (the tasks stay the
	 * account's). `reset()` brings back the key the simulator started with.
	 */
	rotateKey(key: string): void;
	reset(): void;
	close(): Promise<void>;
}

export const FILE_VALIDITY_MS = 24 * 60 * 60 * 1000;
const MAX_BODY = 5 * 1024 * 1024;

/** Which fault kinds make sense where; a rule outside this table would silently do nothing. */
export const FAULT_KINDS: Record<FaultRule['endpoint'], FaultKind[]> = {
	submit: ['429', '500', '502', '503', 'drop', 'slow', 'malformed', 'code'],
	status: ['429', '500', '502', '503', 'drop', 'slow', 'malformed', 'code', 'unknownTask'],
	file: [
		'429',
		'500',
		'502',
		'503',
		'drop',
		'slow',
		'truncate',
		...ENCODING_FAULTS,
		'gzipCut',
		'gzipMedia',
		'stall',
	],
	callback: ['drop', 'slow', 'malformed'],
};

function checkRule(rule: FaultRule): void {
	const kinds = FAULT_KINDS[rule.endpoint];
	if (!kinds)
		throw new Error(
			`fault endpoint ${JSON.stringify(rule.endpoint)} is invalid; allowed: ${Object.keys(FAULT_KINDS).join(', ')}`,
		);
	if (!kinds.includes(rule.kind))
		throw new Error(
			`fault kind ${JSON.stringify(rule.kind)} does not apply to ${rule.endpoint}; allowed: ${kinds.join(', ')}`,
		);
	if (rule.rate !== undefined && !(rule.rate >= 0 && rule.rate <= 1))
		throw new Error(`fault rate ${rule.rate} is invalid; allowed: 0 to 1`);
	if (rule.times !== undefined && !(Number.isInteger(rule.times) && rule.times >= 0))
		throw new Error(`fault times ${rule.times} is invalid; allowed: an integer >= 0`);
	if (rule.when !== undefined && rule.endpoint !== 'submit')
		throw new Error(`fault when applies to submit only, not to ${rule.endpoint}`);
}

/** Reads `[sim:key=value]` and `[sim:key]` markers from a prompt. */
export function parseMarkers(prompt: string): Record<string, string> {
	const out: Record<string, string> = {};
	for (const m of prompt.matchAll(/\[sim:([a-z]+)(?:=([^\]]*))?\]/gi))
		out[m[1].toLowerCase()] = m[2] ?? '';
	return out;
}

function json(
	res: http.ServerResponse,
	status: number,
	body: unknown,
	headers: http.OutgoingHttpHeaders = {},
) {
	const text = JSON.stringify(body);
	res.writeHead(status, {
		'Content-Type': 'application/json; charset=utf-8',
		'Content-Length': Buffer.byteLength(text),
		...headers,
	});
	res.end(text);
}

function envelopeError(code: number, msg: string) {
	return { code, msg, data: null };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref?.());

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
	const apiKey = options.apiKey ?? 'sim-test-key';
	let currentKey = apiKey;
	const imageModelId = options.imageModelId ?? 'image-1';
	const videoModelId = options.videoModelId ?? 'video-1';
	const defaultDurationMs = options.defaultDurationMs ?? 300;
	const callbackShape = options.callbackShape ?? 'status';
	const callbackRetries = options.callbackRetries ?? 3;
	const unknownTaskStyle = options.unknownTaskStyle ?? '404';
	const badKeyStatus = options.badKeyStatus ?? 401;
	const cfg: ValidationConfig = {
		imageModelId,
		videoModelId,
		fastAudioField: options.fastAudioField ?? 'generate_audio',
		fastRequiresDurationAndAspect: options.fastRequiresDurationAndAspect ?? false,
	};
	let random = prng(options.seed ?? 42);
	const fetchOptions: ImageFetchOptions | undefined =
		options.fetchImages === false
			? undefined
			: { ...DEFAULT_FETCH, ...(options.fetchImages === true ? {} : options.fetchImages) };

	const requests: RequestLogEntry[] = [];
	const callbacks: CallbackLogEntry[] = [];
	const fetches: ImageFetchLogEntry[] = [];
	// Replaced on reset, aborted on close: no fetch outlives the test that caused it.
	let fetchAbort = new AbortController();
	const tasks = new Map<string, SimTask>();
	const timers = new Set<NodeJS.Timeout>();
	const pending = new Set<Promise<unknown>>();
	let offset = 0;
	let closed = false;
	const clock = {
		now: () => Date.now() + offset,
		advance(ms: number) {
			offset += ms;
			for (const t of tasks.values()) settle(t);
		},
	};

	// ---- faults ----
	type Rule = FaultRule & { id: string; applied: number };
	let rules: Rule[] = [];
	let ruleSeq = 0;
	const faults: FaultController = {
		add(rule) {
			checkRule(rule);
			const id = `fault-${++ruleSeq}`;
			rules.push({ ...rule, id, applied: 0 });
			return id;
		},
		remove(id) {
			rules = rules.filter((r) => r.id !== id);
		},
		clear() {
			rules = [];
		},
		applied: (id) => rules.find((r) => r.id === id)?.applied ?? 0,
		list: () => rules.map((r) => ({ ...r })),
	};
	/** The first rule that fires for this request, counted as applied. */
	function fault(
		endpoint: FaultRule['endpoint'],
		subject: string,
		when?: 'before' | 'after',
	): Rule | undefined {
		for (const r of rules) {
			if (r.endpoint !== endpoint) continue;
			if (endpoint === 'submit' && (r.when ?? 'before') !== when) continue;
			if (r.times !== undefined && r.applied >= r.times) continue;
			if (r.match !== undefined && !subject.includes(r.match)) continue;
			if (random() >= (r.rate ?? 1)) continue;
			r.applied++;
			return r;
		}
		return undefined;
	}
	/**
	 * Answers with the fault, or returns false when the request should proceed normally
	 * (after the delay, for 'slow').
	 */
	async function applyFault(
		rule: Rule | undefined,
		res: http.ServerResponse,
		entry: RequestLogEntry,
	): Promise<boolean> {
		if (!rule) return false;
		entry.fault = rule.kind;
		switch (rule.kind) {
			case 'slow':
				await sleep(rule.delayMs ?? 2000);
				return false;
			case 'drop':
				entry.status = 0;
				res.socket?.destroy();
				return true;
			case '429':
				json(res, 429, envelopeError(429, 'rate limit exceeded'), {
					'Retry-After': String(rule.retryAfter ?? 1),
				});
				return true;
			case '500':
				json(res, 500, envelopeError(500, 'internal server error'));
				return true;
			case '502': {
				// Gateways answer in HTML, not in the service's envelope.
				const html = '<html><body><h1>502 Bad Gateway</h1></body></html>';
				res.writeHead(502, {
					'Content-Type': 'text/html',
					'Content-Length': Buffer.byteLength(html),
				});
				res.end(html);
				return true;
			}
			case '503':
				json(
					res,
					503,
					envelopeError(503, 'service unavailable'),
					rule.retryAfter !== undefined ? { 'Retry-After': String(rule.retryAfter) } : {},
				);
				return true;
			case 'malformed': {
				const text = '{"code":200,"data":{"task_id":';
				res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': text.length });
				res.end(text);
				return true;
			}
			case 'code':
				json(res, 200, envelopeError(500, 'internal error, please retry'));
				return true;
			case 'unknownTask':
				unknownTask(res);
				return true;
			case 'truncate':
			case 'gzip':
			case 'deflate':
			case 'br':
			case 'gzipCut':
			case 'gzipMedia':
			case 'stall':
				return false; // handled by the file endpoint while streaming
		}
	}

	function unknownTask(res: http.ServerResponse) {
		if (unknownTaskStyle === 'envelope')
			return json(res, 200, envelopeError(404, 'task not found'));
		if (unknownTaskStyle === '400')
			return json(res, 400, envelopeError(400, 'task_id: task not found'));
		return json(res, 404, envelopeError(404, 'task not found'));
	}

	// ---- tasks ----
	// Status from elapsed clock time: the first 10 % of the duration `not_started`, up to 25 %
	// `queued`, then `processing` with progress 0..99, then the outcome. A failed task keeps the
	// progress it had reached (99 at the end of a run, 0 when it failed at once).
	function statusOf(t: SimTask, now = clock.now()): { status: TaskStatus; progress: number } {
		const e = now - t.createdAt;
		const d = t.durationMs;
		// No result before the inputs have arrived, however short the generation.
		if (t.fetching && e >= d) return { status: 'processing', progress: 99 };
		if (t.outcome === 'finish' && e >= d) return { status: 'finished', progress: 100 };
		if (t.outcome === 'fail' && e >= d)
			return { status: 'failed', progress: d > 0 && !t.inputFailed ? 99 : 0 };
		if (e < d * 0.1) return { status: 'not_started', progress: 0 };
		if (e < d * 0.25) return { status: 'queued', progress: 0 };
		const p = Math.floor(((e - d * 0.25) / (d * 0.75)) * 99);
		return { status: 'processing', progress: Math.max(0, Math.min(99, p)) };
	}

	function view(t: SimTask): Record<string, unknown> {
		const { status, progress } = statusOf(t);
		const data: Record<string, unknown> = {
			task_id: t.id,
			status,
			progress,
			created_time: new Date(t.createdAt).toISOString(),
			error_message: status === 'failed' ? t.errorMessage : null,
		};
		if (status === 'finished')
			data.files = t.files.map((f) => ({ file_url: f.url, file_type: f.kind }));
		// [sim:progress=none] / [sim:progress=zero]: a service that sends no progress field, or
		// leaves it at 0 until the end (the spec only says 100 when finished).
		const progressMarker = parseMarkers(t.prompt).progress;
		if (progressMarker === 'none') delete data.progress;
		else if (progressMarker === 'zero' && status !== 'finished') data.progress = 0;
		return data;
	}

	function callbackBody(t: SimTask): unknown {
		const data = view(t);
		if (callbackShape === 'flat') return data;
		if (callbackShape === 'altKeys')
			return {
				taskId: data.task_id,
				state: data.status,
				progress: data.progress,
				outputs: ((data.files as Array<{ file_url: string; file_type: string }>) ?? []).map(
					(f) => ({
						url: f.file_url,
						type: f.file_type,
					}),
				),
				error: data.error_message,
			};
		return { code: 200, data };
	}

	/** Marks a task ended once its time has come, and sends its callback once. */
	function settle(t: SimTask) {
		if (t.endedAt !== undefined || t.outcome === 'never' || t.fetching) return;
		if (clock.now() - t.createdAt < t.durationMs) return;
		t.endedAt = t.createdAt + t.durationMs;
		if (t.callbackUrl && !t.callbackDone) {
			t.callbackDone = true;
			track(deliver(t.id, t.callbackUrl, callbackBody(t), false));
		}
	}

	function track<T>(p: Promise<T>): Promise<T> {
		pending.add(p);
		void p.finally(() => pending.delete(p)).catch(() => undefined);
		return p;
	}

	function post(
		url: string,
		text: string,
		slowMs = 0,
	): Promise<{ status: number; error?: string }> {
		return new Promise((resolve) => {
			const run = () => {
				const req = http.request(
					url,
					{
						method: 'POST',
						headers: {
							'Content-Type': 'application/json',
							'Content-Length': Buffer.byteLength(text),
							'User-Agent': 'media-generation-simulator',
						},
						timeout: 10000,
					},
					(res) => {
						res.resume();
						res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
						res.on('error', (e) => resolve({ status: res.statusCode ?? 0, error: e.message }));
					},
				);
				req.on('timeout', () => req.destroy(new Error('callback timed out')));
				req.on('error', (e) => resolve({ status: 0, error: e.message }));
				req.end(text);
			};
			if (slowMs) sleep(slowMs).then(run);
			else run();
		});
	}

	async function deliver(
		taskId: string,
		url: string,
		body: unknown,
		forged: boolean,
	): Promise<CallbackLogEntry> {
		let last: CallbackLogEntry | undefined;
		const attempts = forged ? 1 : callbackRetries + 1;
		for (let attempt = 1; attempt <= attempts; attempt++) {
			const rule = forged ? undefined : fault('callback', taskId);
			if (rule?.kind === 'drop') {
				last = {
					taskId,
					url,
					body,
					status: 0,
					error: 'dropped by fault rule',
					attempt,
					at: Date.now(),
					forged,
				};
				callbacks.push(last);
				return last;
			}
			const text =
				rule?.kind === 'malformed' ? JSON.stringify(body).slice(0, 20) : JSON.stringify(body);
			const r = await post(url, text, rule?.kind === 'slow' ? (rule.delayMs ?? 2000) : 0);
			last = {
				taskId,
				url,
				body,
				status: r.status,
				error: r.error,
				attempt,
				at: Date.now(),
				forged,
			};
			callbacks.push(last);
			if (r.status >= 200 && r.status < 300) return last;
			if (attempt < attempts) await sleep(50 * 2 ** (attempt - 1));
			// A closed simulator stops retrying, so no request outlives the test that made it.
			if (closed) break;
		}
		return last!;
	}

	function createTask(sub: ReturnType<typeof validateSubmission>): SimTask {
		const prompt = String(sub.input.prompt ?? '');
		const mk = parseMarkers(prompt);
		const id = `task_${randomUUID().replace(/-/g, '')}`;
		const kind = sub.kind;
		const count = mk.files !== undefined ? Math.max(0, Number(mk.files) | 0) : sub.defaultFiles;
		const size = actualSize(kind, mk.size !== undefined ? Number(mk.size) : undefined);
		const token = randomUUID().slice(0, 8);
		// [sim:failonce=Reason]: the first task of this prompt fails, later ones (a retry) finish.
		const failing =
			mk.fail !== undefined ||
			(mk.failonce !== undefined && ![...tasks.values()].some((t) => t.prompt === prompt));
		const files: SimFile[] = Array.from({ length: count }, (_, index) => ({
			index,
			kind,
			size,
			url: `${fileBaseUrl}/files/${id}/${index}-${token}.${MEDIA[kind].ext}`,
		}));
		const task: SimTask = {
			id,
			model: sub.model,
			kind,
			input: sub.input,
			prompt,
			callbackUrl: sub.callbackUrl,
			createdAt: clock.now(),
			durationMs:
				mk.duration !== undefined ? Math.max(0, Number(mk.duration) || 0) : defaultDurationMs,
			outcome: mk.never !== undefined ? 'never' : failing ? 'fail' : 'finish',
			errorMessage: failing ? mk.fail || mk.failonce || 'generation failed' : undefined,
			files,
			callbackDone: false,
			fetching: false,
		};
		tasks.set(id, task);
		fetchInputs(task);
		if (task.outcome !== 'never') {
			const timer = setTimeout(() => {
				timers.delete(timer);
				settle(task);
			}, task.durationMs + 5);
			timer.unref?.();
			timers.add(timer);
		}
		return task;
	}

	/**
	 * Fetches the task's `image_urls` (all at once), then lets it end: failed at once, naming
	 * each URL that could not be fetched and why, or as planned when every image arrived.
	 */
	function fetchInputs(task: SimTask) {
		const urls = task.input.image_urls;
		if (!fetchOptions || !Array.isArray(urls) || urls.length === 0) return;
		task.fetching = true;
		const signal = fetchAbort.signal;
		const all = Promise.all(
			urls.map((url, index) =>
				fetchImage(task.id, index, String(url), fetchOptions, signal, clock.now()).then((f) => {
					if (!signal.aborted) fetches.push(f);
					return f;
				}),
			),
		).then((results) => {
			if (signal.aborted) return;
			task.fetching = false;
			const elapsed = clock.now() - task.createdAt;
			const failed = results.filter((f) => !f.ok);
			if (failed.length > 0) {
				task.outcome = 'fail';
				task.inputFailed = true;
				task.errorMessage = failed
					.map((f) => `image_urls[${f.index}] could not be fetched from ${f.url}: ${f.reason}`)
					.join('; ');
				task.durationMs = Math.min(task.durationMs, elapsed);
			} else if (task.outcome !== 'never' && elapsed > task.durationMs) {
				// The images took longer than the generation: it ends now.
				task.durationMs = elapsed;
			}
			settle(task);
		});
		track(all);
	}

	// ---- HTTP ----
	function readBody(req: http.IncomingMessage): Promise<Buffer | 'too-large'> {
		return new Promise((resolve, reject) => {
			const parts: Buffer[] = [];
			let size = 0;
			req.on('data', (c: Buffer) => {
				size += c.length;
				if (size <= MAX_BODY) parts.push(c);
			});
			req.on('end', () => resolve(size > MAX_BODY ? 'too-large' : Buffer.concat(parts)));
			req.on('error', reject);
		});
	}

	function logEntry(
		origin: 'api' | 'files',
		endpoint: Endpoint,
		req: http.IncomingMessage,
		res: http.ServerResponse,
	) {
		const entry: RequestLogEntry = {
			origin,
			endpoint,
			method: req.method ?? '',
			path: req.url ?? '',
			headers: { ...req.headers },
			status: 0,
			at: Date.now(),
		};
		requests.push(entry);
		res.on('finish', () => {
			if (entry.fault !== 'drop') entry.status = res.statusCode;
		});
		return entry;
	}

	async function handleApi(req: http.IncomingMessage, res: http.ServerResponse) {
		const url = new URL(req.url ?? '/', 'http://x');
		const statusMatch = /^\/api\/generate\/status\/([^/]*)$/.exec(url.pathname);
		const endpoint: Endpoint =
			url.pathname === '/api/generate/submit' ? 'submit' : statusMatch ? 'status' : 'other';
		const entry = logEntry('api', endpoint, req, res);
		const raw = await readBody(req);

		const auth = req.headers.authorization;
		const m = typeof auth === 'string' ? /^Bearer\s+(.+)$/i.exec(auth) : null;
		if (!m)
			return json(
				res,
				badKeyStatus,
				envelopeError(badKeyStatus, 'missing API key: send Authorization: Bearer <API_KEY>'),
			);
		if (m[1] !== currentKey)
			return json(res, badKeyStatus, envelopeError(badKeyStatus, 'invalid API key'));

		if (endpoint === 'submit') {
			if (req.method !== 'POST')
				return json(res, 405, envelopeError(405, 'method not allowed: use POST'), {
					Allow: 'POST',
				});
			if (raw === 'too-large') return json(res, 413, envelopeError(413, 'body: too large'));
			let body: unknown;
			try {
				body = JSON.parse(raw.toString('utf8'));
			} catch {
				return json(res, 400, envelopeError(400, 'body: not valid JSON'));
			}
			entry.body = body;
			const ct = String(req.headers['content-type'] ?? '');
			if (!/application\/json/i.test(ct))
				return json(
					res,
					400,
					envelopeError(
						400,
						`Content-Type: ${JSON.stringify(ct)} is invalid; send application/json`,
					),
				);
			const subject = JSON.stringify(
				(body as { input?: { prompt?: unknown } })?.input?.prompt ?? '',
			);
			if (await applyFault(fault('submit', subject, 'before'), res, entry)) return;
			let sub;
			try {
				sub = validateSubmission(body, cfg);
			} catch (e) {
				const invalid = e instanceof ValidationError;
				const msg = invalid ? e.message : `simulator bug: ${(e as Error).message}`;
				return json(res, invalid ? 400 : 500, envelopeError(invalid ? 400 : 500, msg));
			}
			const task = createTask(sub);
			entry.taskId = task.id;
			if (await applyFault(fault('submit', `${subject} ${task.id}`, 'after'), res, entry)) return;
			return json(res, 200, {
				code: 200,
				msg: 'success',
				data: {
					task_id: task.id,
					status: 'not_started',
					created_time: new Date(task.createdAt).toISOString(),
				},
			});
		}
		if (endpoint === 'status') {
			if (req.method !== 'GET')
				return json(res, 405, envelopeError(405, 'method not allowed: use GET'), { Allow: 'GET' });
			const id = decodeURIComponent(statusMatch![1]);
			entry.taskId = id;
			const task = tasks.get(id);
			if (await applyFault(fault('status', `${id} ${task?.prompt ?? ''}`), res, entry)) return;
			if (!task) return unknownTask(res);
			settle(task);
			return json(res, 200, { code: 200, msg: 'success', data: view(task) });
		}
		return json(res, 404, envelopeError(404, `no such endpoint: ${req.method} ${url.pathname}`));
	}

	async function handleReference(
		req: http.IncomingMessage,
		res: http.ServerResponse,
		url: URL,
		format: ReferenceFormat,
	) {
		const q = url.searchParams;
		const num = (name: string) => (q.has(name) ? Number(q.get(name)) : undefined);
		const delay = num('delay');
		if (delay) await sleep(delay);
		if (q.has('loop')) {
			res.writeHead(302, { Location: `${url.pathname}${url.search}` });
			return res.end();
		}
		const hops = num('redirects');
		if (hops) {
			const next = new URLSearchParams(q);
			if (hops > 1) next.set('redirects', String(hops - 1));
			else next.delete('redirects');
			res.writeHead(302, { Location: `${url.pathname}${next.size ? `?${next}` : ''}` });
			return res.end();
		}
		const status = num('status');
		if (status)
			return json(res, status, envelopeError(status, `reference image answered ${status}`));
		const headStatus = num('head');
		if (req.method === 'HEAD' && headStatus) {
			res.writeHead(headStatus, { Allow: 'GET' });
			return res.end();
		}
		const type = q.get('type') ?? REFERENCE_MIME[format];
		if (q.has('text')) {
			// A text file under an image's name (and type): what a misconfigured host serves.
			const text = 'This is not an image, whatever its name says.\n';
			res.writeHead(200, {
				...(type !== 'none' ? { 'Content-Type': type } : {}),
				'Content-Length': Buffer.byteLength(text),
			});
			return res.end(req.method === 'HEAD' ? undefined : text);
		}
		const size = referenceSize(format, num('size'));
		const headers: http.OutgoingHttpHeaders = { 'Accept-Ranges': 'bytes' };
		if (type !== 'none') headers['Content-Type'] = type;
		let from = 0;
		let to = size - 1;
		const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
		let code = 200;
		if (range && q.get('range') !== 'ignore') {
			from = Number(range[1]);
			to = range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
			if (from > to) {
				res.writeHead(416, { 'Content-Range': `bytes */${size}` });
				return res.end();
			}
			code = 206;
			headers['Content-Range'] = `bytes ${from}-${to}/${size}`;
		}
		if (q.get('length') !== 'none') headers['Content-Length'] = to - from + 1;
		res.writeHead(code, headers);
		if (req.method === 'HEAD') return res.end();
		const slice = function* () {
			let at = 0;
			for (const c of referenceChunks(format, size)) {
				const end = at + c.length;
				if (end > from) yield c.subarray(Math.max(0, from - at), Math.min(c.length, to + 1 - at));
				at = end;
				if (at > to) return;
			}
		};
		try {
			await pipeline(Readable.from(slice()), res);
		} catch {
			// The client stopped reading (a sniffing client does): nothing left to answer.
		}
	}

	async function handleFile(req: http.IncomingMessage, res: http.ServerResponse) {
		const url = new URL(req.url ?? '/', 'http://x');
		const ref = /^\/refs\/[^/]+\.(png|jpg|jpeg|webp|gif)$/i.exec(url.pathname);
		if (ref) {
			logEntry('files', 'reference', req, res);
			const ext = ref[1].toLowerCase();
			return handleReference(req, res, url, (ext === 'jpeg' ? 'jpg' : ext) as ReferenceFormat);
		}
		const m = /^\/files\/([^/]+)\/(\d+)-([^/.]+)\.(png|mp4|mp3)$/.exec(url.pathname);
		const entry = logEntry('files', m ? 'file' : 'other', req, res);
		if (!m) return json(res, 404, envelopeError(404, 'no such file'));
		const task = tasks.get(m[1]);
		entry.taskId = m[1];
		const file = task?.files[Number(m[2])];
		if (!task || !file || file.url !== `${fileBaseUrl}${url.pathname}`)
			return json(res, 404, envelopeError(404, 'no such file'));
		// "file-index=N" lets a rule hit one file of a task (match: 'file-index=1').
		const rule = fault('file', `${task.id} ${task.prompt} file-index=${m[2]}`);
		if (await applyFault(rule, res, entry)) return;
		settle(task);
		if (task.endedAt === undefined || statusOf(task).status !== 'finished')
			return json(res, 404, envelopeError(404, 'no such file'));
		if (clock.now() >= task.endedAt + FILE_VALIDITY_MS)
			return json(res, 404, envelopeError(404, 'file expired'));
		const fileHeaders = {
			'Content-Type': MEDIA[file.kind].mime,
			'Content-Length': file.size,
			'Content-Disposition': `attachment; filename="${task.id}-${file.index}.${MEDIA[file.kind].ext}"`,
		};
		if (rule && (ENCODING_FAULTS as string[]).includes(rule.kind)) {
			return sendEncoded(
				res,
				rule.kind as EncodingFault,
				file.kind,
				file.size,
				fileHeaders,
				req.method === 'HEAD',
			);
		}
		if (rule?.kind === 'gzipCut') {
			return sendGzipCut(res, file.kind, file.size, fileHeaders, req.method === 'HEAD');
		}
		if (rule?.kind === 'gzipMedia') {
			return sendGzipIncompressible(res, file.size, fileHeaders, req.method === 'HEAD');
		}
		if (rule?.kind === 'stall' && req.method !== 'HEAD') {
			return sendStalled(res, file.kind, file.size, fileHeaders);
		}
		res.writeHead(200, fileHeaders);
		if (req.method === 'HEAD') return res.end();
		if (rule?.kind === 'truncate') {
			// Half the bytes, then the socket is cut without end(): the client sees a premature
			// close against the promised Content-Length.
			const limit = Math.max(1, Math.floor(file.size / 2));
			let sent = 0;
			for (const c of mediaChunks(file.kind, file.size)) {
				const take = Math.min(c.length, limit - sent);
				if (take > 0 && !res.write(c.subarray(0, take))) await once(res, 'drain');
				sent += take;
				if (sent >= limit) break;
			}
			await new Promise((r) => setTimeout(r, 20));
			res.destroy();
			return;
		}
		try {
			await pipeline(Readable.from(mediaChunks(file.kind, file.size)), res);
		} catch {
			// The client went away: nothing left to answer.
		}
	}

	function wrap(fn: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<unknown>) {
		return (req: http.IncomingMessage, res: http.ServerResponse) => {
			fn(req, res).catch((e) => {
				if (!res.headersSent)
					json(res, 500, envelopeError(500, `simulator bug: ${e?.message ?? e}`));
				else res.destroy();
			});
		};
	}

	const sockets = new Set<import('node:net').Socket>();
	const listen = (server: http.Server, port: number, host: string) =>
		new Promise<number>((resolve, reject) => {
			server.on('connection', (s) => {
				sockets.add(s);
				s.on('close', () => sockets.delete(s));
			});
			server.once('error', reject);
			server.listen(port, host, () => {
				server.off('error', reject);
				resolve((server.address() as AddressInfo).port);
			});
		});

	const api = http.createServer(wrap(handleApi));
	const files = http.createServer(wrap(handleFile));
	const port = await listen(api, options.port ?? 0, '127.0.0.1');
	const filePort = await listen(files, options.filePort ?? 0, '127.0.0.1');
	// `localhost` may resolve to ::1 first: answer there too when the machine has IPv6.
	const files6 = http.createServer(wrap(handleFile));
	let has6 = false;
	try {
		await listen(files6, filePort, '::1');
		has6 = true;
	} catch {
		// No IPv6 loopback here: clients fall back to 127.0.0.1.
	}
	const baseUrl = `http://127.0.0.1:${port}`;
	const fileBaseUrl = `http://localhost:${filePort}`;

	const sim: Simulator = {
		baseUrl,
		fileBaseUrl,
		apiKey,
		port,
		filePort,
		imageModelId,
		videoModelId,
		requests,
		count: (endpoint) => requests.filter((r) => r.endpoint === endpoint).length,
		callbacks,
		fetches,
		tasks: () => [...tasks.values()],
		task: (id) => tasks.get(id),
		referenceUrl(name, o = {}) {
			const q = new URLSearchParams();
			if (o.size !== undefined) q.set('size', String(o.size));
			if (o.type !== undefined) q.set('type', o.type);
			if (o.head !== undefined) q.set('head', String(o.head));
			if (o.noLength) q.set('length', 'none');
			if (o.ignoreRange) q.set('range', 'ignore');
			if (o.status !== undefined) q.set('status', String(o.status));
			if (o.text) q.set('text', '1');
			if (o.redirects) q.set('redirects', String(o.redirects));
			if (o.redirectLoop) q.set('loop', '1');
			if (o.delayMs) q.set('delay', String(o.delayMs));
			const query = q.toString();
			return `${fileBaseUrl}/refs/${encodeURIComponent(name)}${query ? `?${query}` : ''}`;
		},
		view: (id) => {
			const t = tasks.get(id);
			return t ? view(t) : undefined;
		},
		faults,
		clock,
		sendCallback(taskId, opts = {}) {
			const t = tasks.get(taskId);
			const url = opts.url ?? t?.callbackUrl;
			if (!url)
				return Promise.reject(new Error(`task ${taskId} has no callback_url and none was given`));
			const body = opts.body !== undefined ? opts.body : t ? callbackBody(t) : undefined;
			return track(deliver(taskId, url, body, true));
		},
		async idle() {
			while (pending.size) await Promise.allSettled([...pending]);
		},
		rotateKey(key) {
			currentKey = key;
		},
		reset() {
			currentKey = apiKey;
			fetchAbort.abort();
			fetchAbort = new AbortController();
			requests.length = 0;
			callbacks.length = 0;
			fetches.length = 0;
			tasks.clear();
			for (const t of timers) clearTimeout(t);
			timers.clear();
			rules = [];
			offset = 0;
			random = prng(options.seed ?? 42);
		},
		async close() {
			closed = true;
			fetchAbort.abort();
			for (const t of timers) clearTimeout(t);
			timers.clear();
			const servers = has6 ? [api, files, files6] : [api, files];
			const done = servers.map((s) => new Promise<void>((r) => s.close(() => r())));
			for (const s of sockets) s.destroy();
			await Promise.all(done);
		},
	};
	return sim;
}
