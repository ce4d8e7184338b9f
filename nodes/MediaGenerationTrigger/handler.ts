import type {
	IDataObject,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeOperationError, sleep } from 'n8n-workflow';

import { getApiCredentials, getTaskStatus } from '../shared/transport/api';
import {
	checkSignature,
	readCallbackQuery,
	scrubCallbackSecrets,
	secretMatches,
	SECRET_PARAM,
	SIGNATURE_PARAM,
	signatureWellFormed,
	type CallbackQuery,
} from '../shared/callbackUrl';
import { downloadTaskFiles } from '../shared/transport/downloads';
import {
	classifyError,
	DEFAULT_BACKOFF,
	isTransientForRead,
	retryDelay,
	scrubSecret,
	type Fault,
} from '../shared/transport/faults';
import { taskOutputJson } from '../shared/output';
import { parseTaskData, type Task } from '../shared/task';
import {
	CallbackBodyError,
	deliveryKey,
	eventWanted,
	excerpt,
	parseCallbackBody,
	type EventFilter,
	type ParsedCallback,
	type StatusClass,
} from '../shared/callbackBody';
import { deliveries, statusReads, unknownTasks } from './memory';

/** Everything the trigger does before answering takes at most this long (the answer bound). */
export const ANSWER_WITHIN_MS = 5_000;
/** A status read still under way at the answer bound may confirm the task until this long after. */
export const CONFIRM_WITHIN_MS = 60_000;
/** Status reads for one callback before the answer bound (each also takes a token of the per-trigger budget). */
const VERIFY_ATTEMPTS = 3;
/**
 * Status reads for one callback in all, when a failed read is retried within the confirmation
 * window after the "confirming" answer (a forged id still costs at most this many).
 */
const CONFIRM_READS = 6;
/** Backoff between those reads: 0.5-1 s, 1-2, 2-4, 4-8, 7.5-15 (about 30 s at most in all). */
const CONFIRM_BACKOFF = { baseMs: 1_000, maxMs: 15_000 };
/** Retry-After of a 503 "could not confirm": the service should try again later. */
const RETRY_UNCONFIRMED_S = 60;

interface MinimalResponse {
	headersSent?: boolean;
	statusCode: number;
	setHeader(name: string, value: string): unknown;
	end(body?: string): unknown;
}

/** One callback's context: what may be quoted and what must be scrubbed from it. */
interface Call {
	ctx: IWebhookFunctions;
	/** Values that never appear in an answer, output or error (API key, secret, signature). */
	secrets: Array<string | undefined>;
}

function scrub(call: Call, text: string): string {
	return scrubCallbackSecrets(scrubSecret(text, call.secrets), call.secrets);
}

/**
 * Answers the caller now, through the plain Node response (n8n hands an express response,
 * which is one), so that downloading large files afterwards never delays the answer.
 */
function answer(
	call: Call,
	status: number,
	body: IDataObject,
	headers: Record<string, string> = {},
): void {
	const res = call.ctx.getResponseObject() as unknown as MinimalResponse;
	if (res.headersSent) return;
	res.statusCode = status;
	res.setHeader('Content-Type', 'application/json; charset=utf-8');
	for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
	res.end(scrub(call, JSON.stringify(body)));
}

/** Whether the caller has had its answer (the "confirming" answer of a slow status read). */
function answered(call: Call): boolean {
	return (call.ctx.getResponseObject() as unknown as MinimalResponse).headersSent === true;
}

/** Ends the request without starting an execution. */
function refuse(
	call: Call,
	status: number,
	body: IDataObject,
	headers?: Record<string, string>,
): IWebhookResponseData {
	answer(call, status, body, headers);
	return { noWebhookResponse: true };
}

function classOf(status: string): StatusClass {
	if (status === 'finished') return 'finished';
	if (status === 'failed') return 'failed';
	return 'pending';
}

/** The service saying it does not know the task, as opposed to failing to answer. */
function isUnknownTask(fault: Fault): boolean {
	if (fault.kind !== 'http' && fault.kind !== 'envelope') return false;
	return [400, 404, 410, 422].includes(fault.statusCode ?? 0);
}

const MAX_BODY_FILES = 20;
const MAX_BODY_TEXT = 2_000;

/**
 * The body's own task, for "Verify With Status Endpoint" off: only the fields a task has, each
 * bounded (the body itself may be anything), and files only if well formed.
 */
function taskFromBody(parsed: ParsedCallback, status: string): { task: Task; problem?: string } {
	const source = parsed.task;
	const text = (value: unknown) =>
		typeof value === 'string' ? value.slice(0, MAX_BODY_TEXT) : undefined;
	const candidate: IDataObject = { task_id: parsed.taskId, status };
	if (typeof source.progress === 'number') candidate.progress = source.progress;
	const created = text(source.created_time);
	if (created !== undefined) candidate.created_time = created;
	const errorMessage = text(source.error_message) ?? text(source.error);
	if (errorMessage !== undefined) candidate.error_message = errorMessage;
	if (Array.isArray(source.files)) {
		candidate.files = source.files.slice(0, MAX_BODY_FILES).map((f) => {
			const file = (typeof f === 'object' && f !== null ? f : {}) as IDataObject;
			return { file_url: text(file.file_url) ?? file.file_url, file_type: text(file.file_type) };
		});
	}
	try {
		return { task: parseTaskData(candidate) };
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		const bare: Task = { task_id: parsed.taskId, status };
		if (errorMessage !== undefined) bare.error_message = errorMessage;
		return {
			task: bare,
			problem: `The callback body's task could not be read fully: ${message.slice(0, 300)}`,
		};
	}
}

type Verification =
	| { kind: 'confirmed'; task: Task }
	| { kind: 'unknown' }
	| { kind: 'throttled'; retryAfterS: number }
	| { kind: 'unconfirmed'; reason: string };

/**
 * The "confirming" answer: once the service has it, the reads go on until `until` and the run
 * starts only if the service then confirms the task. Given when a read is still under way at
 * the answer bound, and (`onFailure`) when a read fails in a way worth retrying, so a genuine
 * callback is not lost to a service that never calls again. Without it, the bound ends the
 * verification.
 */
interface LateConfirmation {
	until: number;
	onFailure: boolean;
	answer: () => void;
}

/**
 * Reads the task's status, each read taking a token of the trigger's budget: within
 * ANSWER_WITHIN_MS and VERIFY_ATTEMPTS until the caller is answered "confirming", then within
 * the confirmation window and CONFIRM_READS (waiting for a token of the budget rather than
 * giving up). Retry-After is honoured only while it fits in the current limit; a slow status
 * endpoint is raced with it (the read itself ends at its own timeout).
 */
async function verifyTask(
	call: Call,
	trigger: string,
	taskId: string,
	deadline: number,
	late?: LateConfirmation,
): Promise<Verification> {
	let last: Fault | undefined;
	let limit = deadline;
	let confirming = false;
	/** Answers "confirming" (once) and extends the limit to the confirmation window. */
	const confirmLater = (): boolean => {
		if (!late || confirming) return false;
		confirming = true;
		late.answer();
		limit = late.until;
		return true;
	};
	const reads = late?.onFailure ? CONFIRM_READS : VERIFY_ATTEMPTS;
	for (let attempt = 0; attempt < reads; attempt++) {
		if (!(await takeRead(trigger, confirming ? limit : undefined))) {
			if (attempt === 0) {
				return {
					kind: 'throttled',
					retryAfterS: Math.max(1, Math.ceil(statusReads.waitMs(trigger) / 1000)),
				};
			}
			break;
		}
		const read = getTaskStatus(call.ctx, taskId, { retries: 0 }).then(
			(task) => ({ task }),
			(error: unknown) => ({ fault: classifyError(error) }),
		);
		let outcome = await readBefore(read, limit);
		// Still reading at the bound: answer now, keep reading (a genuine callback of a slow
		// service, or of a loaded n8n, is not lost; nothing starts unless the service confirms).
		if ('late' in outcome && confirmLater()) outcome = await readBefore(read, limit);
		if ('task' in outcome) return { kind: 'confirmed', task: outcome.task };
		last = outcome.fault;
		if (isUnknownTask(last)) return { kind: 'unknown' };
		if (!isTransientForRead(last) || attempt + 1 >= reads) break;
		// A failure worth retrying (refused, reset, timeout, 5xx, 429): with onFailure, the
		// retries go on after the "confirming" answer, within the confirmation window.
		const window = late?.onFailure ? late.until : limit;
		const delay = retryDelay(
			attempt + 1,
			last,
			late?.onFailure ? CONFIRM_BACKOFF : DEFAULT_BACKOFF,
		);
		if (Date.now() + delay >= window) {
			if (last.retryAfterMs !== undefined && last.retryAfterMs > 0) {
				const bound =
					window === deadline
						? `${ANSWER_WITHIN_MS / 1000} s answer bound`
						: `${CONFIRM_WITHIN_MS / 1000} s confirmation window`;
				last = {
					...last,
					message: `${last.message} (the service asked to wait ${Math.ceil(last.retryAfterMs / 1000)} s, beyond the trigger's ${bound})`,
				};
			}
			break;
		}
		if (late?.onFailure) confirmLater();
		await sleep(delay);
	}
	return {
		kind: 'unconfirmed',
		reason: scrub(call, last?.message ?? 'no status read was allowed'),
	};
}

/**
 * A token of the trigger's status-read budget; once the caller has its "confirming" answer,
 * waits for one until `waitUntil` (nobody is held by the wait, and the reads stay in the budget).
 */
async function takeRead(trigger: string, waitUntil?: number): Promise<boolean> {
	while (!statusReads.take(trigger, Date.now())) {
		if (waitUntil === undefined) return false;
		const wait = Math.max(100, statusReads.waitMs(trigger));
		if (Date.now() + wait >= waitUntil) return false;
		await sleep(wait);
	}
	return true;
}

type ReadOutcome = { task: Task } | { fault: Fault };

/** The read's outcome, or `late` (with a timeout fault) when `until` comes first. */
async function readBefore(
	read: Promise<ReadOutcome>,
	until: number,
): Promise<ReadOutcome | { fault: Fault; late: true }> {
	const timer = new AbortController();
	const outcome = await Promise.race([
		read,
		sleep(Math.max(0, until - Date.now()), timer.signal).then(
			() => ({
				fault: {
					kind: 'timeout',
					message: `the status endpoint did not answer within the trigger's ${ANSWER_WITHIN_MS / 1000} s answer bound`,
				} as Fault,
				late: true as const,
			}),
			() => ({ fault: { kind: 'cancelled', message: 'cancelled' } as Fault }),
		),
	]);
	timer.abort();
	return outcome;
}

/** Output fields that must never carry a secret: scrubbed as text, then parsed back. */
function scrubbedJson(call: Call, json: IDataObject): IDataObject {
	const text = JSON.stringify(json);
	const clean = scrub(call, text);
	return clean === text ? json : (JSON.parse(clean) as IDataObject);
}

/** A step either hands its result to the next one or ends the call with this answer. */
type Step<T> = { ok: T } | { done: IWebhookResponseData };

/** What the request brings: the trigger's options, the callback URL's query, the secrets. */
interface Request {
	call: Call;
	options: IDataObject;
	query: CallbackQuery;
	deadline: number;
}

/** Who wrote the callback URL: signed by the node (with this credential), or accepted unsigned. */
interface Authenticated {
	signature: ReturnType<typeof checkSignature>;
	acceptUnsigned: boolean;
	reference?: string;
}

/** The trigger's settings for this call, and the key of its run in the de-duplication memory. */
interface Settings {
	event: EventFilter;
	verify: boolean;
	download: boolean;
	binaryProperty: string;
	trigger: string;
	/** Production URL: runs are de-duplicated (the Test URL runs every call it is sent). */
	production: boolean;
	keyFor: (status: StatusClass) => string;
}

/**
 * One callback, in the order of its steps: read the request, authenticate its URL, read its
 * body, drop a delivery already taken, verify the task with the service, then start the run
 * once (answering before the files are downloaded). Each step may end the call with an answer.
 */
export async function handleCallback(ctx: IWebhookFunctions): Promise<IWebhookResponseData> {
	const request = readRequest(ctx);
	const auth = await authenticate(request);
	if ('done' in auth) return auth.done;
	const body = await readBody(request);
	if ('done' in body) return body.done;
	const settings = readSettings(request, auth.ok, body.ok);
	const seen = alreadyTaken(request, settings, body.ok);
	if (seen) return seen;
	const task = await confirm(request, settings, auth.ok, body.ok);
	if ('done' in task) return task.done;
	return await startOnce(request, settings, auth.ok, task.ok);
}

/** Read: the options and the callback URL's query; what must never be quoted is noted. */
function readRequest(ctx: IWebhookFunctions): Request {
	const deadline = Date.now() + ANSWER_WITHIN_MS;
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const secret = typeof options.secret === 'string' ? options.secret : '';
	let query: CallbackQuery;
	try {
		query = readCallbackQuery(ctx.getQueryData());
	} catch {
		query = { repeatedSignature: false };
	}
	const call: Call = { ctx, secrets: [secret, query.secret, query.signature] };
	return { call, options, query, deadline };
}

/**
 * Authenticate: the trigger's Secret, then the reference's signature (checked before anything
 * else costs: no body search, no status read for a URL the node did not write). A missing or
 * malformed signature is refused without even reading the credential.
 */
async function authenticate({ call, options, query }: Request): Promise<Step<Authenticated>> {
	const secret = typeof options.secret === 'string' ? options.secret : '';
	if (secret !== '' && !secretMatches(query.secret, secret)) {
		return {
			done: refuse(call, 401, {
				error: `Missing or wrong "${SECRET_PARAM}" query parameter: the callback URL must carry the secret set in the trigger`,
			}),
		};
	}
	const acceptUnsigned = options.acceptUnsigned === true;
	const unsignedRefusal = {
		error: `The callback URL carries no "${SIGNATURE_PARAM}" query parameter: only tasks submitted by the Media Generation node (same credential) are accepted, unless "Accept Unsigned Callbacks" is on`,
	};
	const mismatch = {
		error: `The "${SIGNATURE_PARAM}" query parameter does not match the callback reference: this URL was not written by the Media Generation node with this trigger's credential`,
	};
	if (query.signature === undefined && !acceptUnsigned) {
		return { done: refuse(call, 401, unsignedRefusal) };
	}
	if (query.signature !== undefined && !signatureWellFormed(query)) {
		return { done: refuse(call, 401, mismatch) };
	}
	let apiKey = '';
	try {
		apiKey = (await getApiCredentials(call.ctx)).apiKey;
	} catch (error) {
		return {
			done: refuse(
				call,
				503,
				{
					error: `The trigger's credential cannot be read: ${scrub(call, (error as Error).message ?? '')}`,
				},
				{ 'Retry-After': String(RETRY_UNCONFIRMED_S) },
			),
		};
	}
	call.secrets.push(apiKey);
	const signature = checkSignature(query, apiKey);
	if (signature === 'invalid') return { done: refuse(call, 401, mismatch) };
	// Signed, or unsigned by the user's explicit choice (then `signed: false` says so).
	return { ok: { signature, acceptUnsigned, reference: query.reference } };
}

/** What n8n's webhook server adds to the request (its raw-body middleware). */
interface N8nRequest {
	rawBody?: unknown;
	readRawBody?: () => Promise<void>;
}

/** Read the body: the task it names and the status it claims (bounded, validated). */
async function readBody({ call }: Request): Promise<Step<ParsedCallback>> {
	try {
		const request = call.ctx.getRequestObject() as unknown as N8nRequest;
		// From version 1.1 n8n leaves a body of a content type it does not parse unread (for
		// version 1 it reads every body, and first evaluates an expression per call to do so);
		// such a body is read here, within n8n's payload size limit.
		if (request.rawBody === undefined && typeof request.readRawBody === 'function') {
			await request.readRawBody();
		}
		return { ok: parseCallbackBody(call.ctx.getBodyData(), request.rawBody) };
	} catch (error) {
		if (error instanceof CallbackBodyError) {
			return { done: refuse(call, error.httpStatus, { error: error.message }) };
		}
		return { done: refuse(call, 400, { error: 'The callback body could not be read' }) };
	}
}

function readSettings(
	{ call, query }: Request,
	auth: Authenticated,
	parsed: ParsedCallback,
): Settings {
	const { ctx } = call;
	const download = ctx.getNodeParameter('download', true) as boolean;
	const node = ctx.getNode();
	// One execution per task, status and (signed) reference. A signed URL replayed for another
	// task cannot take that task's execution from its own callback: the reference differs.
	// Unsigned callbacks share one key per task and status, which a signed delivery also takes
	// (see startOnce): a genuine signed callback is never a duplicate of an unsigned one, but once
	// a task ran from its signed callback, unsigned ones for it are.
	const keyFor = (status: StatusClass) =>
		auth.signature === 'valid' && query.signature
			? `${deliveryKey(parsed.taskId, status)}:${query.signature.slice(0, 12)}`
			: deliveryKey(parsed.taskId, status);
	return {
		event: ctx.getNodeParameter('event', 'any') as EventFilter,
		verify: ctx.getNodeParameter('verify', true) as boolean,
		download,
		binaryProperty: download
			? (ctx.getNodeParameter('binaryPropertyName', 'data') as string).trim() || 'data'
			: 'data',
		trigger: `${ctx.getWorkflow().id ?? ''}:${node.id ?? node.name}`,
		// With the Test URL n8n listens for one run and does not save static data: a call the
		// user replays while building the workflow is meant to run.
		production: ctx.getMode() !== 'manual',
		keyFor,
	};
}

/**
 * De-duplicate (early): a replay of a delivery already taken is answered without a status
 * read. A false claim can only earn a "duplicate" answer for a task whose execution already
 * started. The delivery is taken for good in startOnce, once the task is confirmed.
 */
function alreadyTaken(
	{ call }: Request,
	settings: Settings,
	parsed: ParsedCallback,
): IWebhookResponseData | undefined {
	if (!settings.production || (parsed.claimed !== 'finished' && parsed.claimed !== 'failed')) {
		return undefined;
	}
	const store = call.ctx.getWorkflowStaticData('node');
	if (
		!deliveries.has(settings.trigger, settings.keyFor(parsed.claimed), store.deliveries, Date.now())
	) {
		return undefined;
	}
	// A duplicate also repairs the stored deliveries: another process may have written back an
	// older copy over this process's records (last writer wins), and n8n writes this call's copy
	// back after it, now carrying everything this process knows.
	const live = deliveries.attach(
		settings.trigger,
		(store.deliveries ??= {}) as IDataObject,
		Date.now(),
	);
	deliveries.release(live, Date.now());
	return duplicate(call, parsed.taskId);
}

/**
 * The answer to a duplicate, sent by n8n itself: n8n answers a webhook only after it wrote the
 * call's static data back (live-webhooks.js, executeWebhook), so a service that delivers again
 * after this answer finds this delivery stored, whichever process it reaches.
 */
function duplicate(call: Call, taskId: string): IWebhookResponseData {
	if (answered(call)) return { noWebhookResponse: true };
	return { webhookResponse: { received: true, duplicate: true, task_id: taskId } };
}

/** What the run is made of once the task is known, verified or (Verify off) from the body. */
interface Confirmed {
	task: Task;
	taskId: string;
	confirmed: StatusClass;
	verified: boolean;
	bodyProblem?: string;
}

/**
 * Verify: the task's status read from the service (Verify With Status Endpoint on), or taken
 * from the body (off); then only a final status of a selected event goes on.
 */
async function confirm(
	request: Request,
	settings: Settings,
	auth: Authenticated,
	parsed: ParsedCallback,
): Promise<Step<Confirmed>> {
	const { call } = request;
	const taskId = parsed.taskId;
	// Validated: printable ASCII without spaces, at most 256 characters.
	const shownId = taskId;
	let task: Task;
	let verified = false;
	let bodyProblem: string | undefined;
	if (settings.verify) {
		const outcome = await verifyWithService(request, settings, auth, parsed);
		if ('done' in outcome) return outcome;
		task = outcome.ok;
		verified = true;
	} else {
		if (!parsed.claimed) {
			return {
				done: refuse(call, 400, {
					error: `The callback body has no recognisable status (got ${parsed.rawStatus === undefined ? 'none' : excerpt(parsed.rawStatus)}); it is needed when "Verify With Status Endpoint" is off`,
				}),
			};
		}
		const status =
			parsed.claimed === 'pending' ? (parsed.rawStatus ?? 'processing') : parsed.claimed;
		({ task, problem: bodyProblem } = taskFromBody(parsed, status));
	}

	const confirmed = classOf(task.status);
	if (verified && parsed.claimed && parsed.claimed !== confirmed) {
		return {
			done: refuse(call, 409, {
				error: `The callback says task ${shownId} is ${parsed.rawStatus ?? ''}, the service says ${task.status.slice(0, 100)}; nothing was started`,
			}),
		};
	}
	if (confirmed === 'pending') {
		return {
			done: refuse(call, 409, {
				error: `Task ${shownId} is still ${task.status.slice(0, 100)} at the service; nothing was started`,
			}),
		};
	}
	if (!eventWanted(settings.event, confirmed)) {
		return {
			done: refuse(call, 200, {
				received: true,
				ignored: `${confirmed} events are not selected`,
			}),
		};
	}
	return { ok: { task, taskId, confirmed, verified, bodyProblem } };
}

/** The status read and what each of its outcomes answers (an unknown task starts nothing). */
async function verifyWithService(
	{ call, options, deadline }: Request,
	settings: Settings,
	auth: Authenticated,
	parsed: ParsedCallback,
): Promise<Step<Task>> {
	const { taskId } = parsed;
	const shownId = taskId;
	if (unknownTasks.has(settings.trigger, taskId, Date.now())) {
		return {
			done: refuse(call, 404, {
				error: `Task ${shownId} is unknown to the service (asked less than a minute ago); nothing was started`,
			}),
		};
	}
	const startWithError = options.onVerifyError === 'start';
	const outcome = await verifyTask(call, settings.trigger, taskId, deadline, {
		until: Date.now() + CONFIRM_WITHIN_MS,
		// "Start With Error" starts at the first failure, as documented: no retries after it.
		onFailure: !startWithError,
		answer: () => answer(call, 202, { received: true, task_id: taskId, confirming: true }),
	});
	if (
		answered(call) &&
		outcome.kind !== 'confirmed' &&
		!(outcome.kind === 'unconfirmed' && startWithError)
	) {
		// Answered already ("confirming"): whatever the service now says, nothing starts.
		call.ctx.logger.warn(
			`Media Generation Trigger: task ${shownId} could not be confirmed after the callback was answered; nothing was started (${outcome.kind === 'unconfirmed' ? outcome.reason : outcome.kind}). Read its status with Task → Get Status.`,
		);
	}
	if (outcome.kind === 'unknown') {
		unknownTasks.add(settings.trigger, taskId, Date.now());
		return {
			done: refuse(call, 404, {
				error: `Task ${shownId} is unknown to the service; nothing was started`,
			}),
		};
	}
	if (outcome.kind === 'throttled') {
		return {
			done: refuse(
				call,
				429,
				{ error: 'Too many callbacks to confirm right now; nothing was started. Try again later.' },
				{ 'Retry-After': String(outcome.retryAfterS) },
			),
		};
	}
	if (outcome.kind === 'unconfirmed') {
		if (!startWithError) {
			// Only when nothing could be tried any more before answering: a failure not worth
			// retrying (the key refused, say), or a Retry-After beyond the confirmation window.
			return {
				done: refuse(
					call,
					503,
					{
						error: `Could not confirm task ${shownId} with the service: ${outcome.reason}. Nothing was started; call again later.`,
					},
					{ 'Retry-After': String(RETRY_UNCONFIRMED_S) },
				),
			};
		}
		return { done: startUnverified(call, settings, auth, parsed, outcome.reason) };
	}
	if (outcome.task.task_id !== taskId) {
		return {
			done: refuse(call, 409, {
				error: `Asked for task ${shownId}, the service answered with task ${excerpt(outcome.task.task_id)}; nothing was started`,
			}),
		};
	}
	return { ok: outcome.task };
}

/**
 * "On Verification Error → Start With Error" (opt-in): no status and no files are taken from
 * the body. The claim only filters, so "Failed" workflows do not wake up for what says it is
 * finished.
 */
function startUnverified(
	call: Call,
	settings: Settings,
	auth: Authenticated,
	parsed: ParsedCallback,
	reason: string,
): IWebhookResponseData {
	if (
		parsed.claimed &&
		parsed.claimed !== 'pending' &&
		!eventWanted(settings.event, parsed.claimed)
	) {
		return refuse(call, 200, {
			received: true,
			ignored: `${parsed.claimed} events are not selected`,
		});
	}
	const taskId = parsed.taskId;
	answer(call, 200, { received: true, task_id: taskId, verified: false });
	const json = taskOutputJson(
		{ task_id: taskId, status: 'unverified' },
		{ reference: auth.reference },
	);
	json.verified = false;
	json.signed = auth.signature === 'valid';
	json.claimed_status = parsed.rawStatus ?? null;
	json.error = `Could not confirm the callback with the status endpoint: ${reason}. Read the task's status later (its files stay valid 24 hours).`;
	return { workflowData: [[{ json: scrubbedJson(call, json) }]], noWebhookResponse: true };
}

/**
 * De-duplicate (for good) and start: the delivery is taken in this process's memory and in
 * this request's copy of static data, which n8n writes back after webhook() returns (until then,
 * and a while after, every delivery the process takes is added to it too); then the run starts.
 * A start that fails gives the delivery back, so the service's next attempt runs.
 */
async function startOnce(
	{ call }: Request,
	settings: Settings,
	auth: Authenticated,
	c: Confirmed,
): Promise<IWebhookResponseData> {
	const { ctx } = call;
	const now = Date.now();
	const run: Start = {
		...c,
		reference: auth.reference,
		signed: auth.signature === 'valid',
		download: settings.download,
		binaryProperty: settings.binaryProperty,
		now,
	};
	if (!settings.production) return await start(call, run);
	const { trigger } = settings;
	const key = settings.keyFor(c.confirmed);
	const store = ctx.getWorkflowStaticData('node');
	const stored = (store.deliveries ??= {}) as IDataObject;
	const live = deliveries.attach(trigger, stored, now);
	try {
		if (!deliveries.take(trigger, key, now)) return duplicate(call, c.taskId);
		const unsignedKey = deliveryKey(c.taskId, c.confirmed);
		const marked =
			auth.acceptUnsigned && key !== unsignedKey && deliveries.take(trigger, unsignedKey, now);
		try {
			return await start(call, run);
		} catch (error) {
			// Not taken after all: the service's next attempt must run.
			deliveries.forget(trigger, key);
			if (marked) deliveries.forget(trigger, unsignedKey);
			throw new NodeOperationError(ctx.getNode(), error as Error);
		}
	} finally {
		deliveries.release(live, Date.now());
	}
}

interface Start {
	task: Task;
	taskId: string;
	confirmed: StatusClass;
	reference?: string;
	verified: boolean;
	signed: boolean;
	bodyProblem?: string;
	download: boolean;
	binaryProperty: string;
	now: number;
}

/** Answers 200, downloads the files (after answering) and returns the execution's item. */
async function start(call: Call, s: Start): Promise<IWebhookResponseData> {
	const { ctx } = call;
	const {
		task,
		taskId,
		confirmed,
		reference,
		verified,
		bodyProblem,
		download,
		binaryProperty,
		now,
	} = s;

	// From here the workflow will start: answer the service before any file is downloaded.
	try {
		answer(call, 200, { received: true, task_id: taskId });
	} catch (error) {
		throw new NodeOperationError(
			ctx.getNode(),
			scrub(call, (error as Error).message ?? 'answer failed'),
		);
	}

	const item: INodeExecutionData = { json: {} };
	let files: IDataObject[] | undefined;
	let downloadError: string | undefined;
	if (download && confirmed === 'finished' && (task.files ?? []).length > 0) {
		try {
			const options = ctx.getNodeParameter('options', {}) as IDataObject;
			const maxFileSizeMb = Number(options.maxFileSizeMb);
			const result = await downloadTaskFiles(ctx, task, {
				binaryProperty,
				// 0 or unset: automatic, as before the option existed.
				maxFileSizeMb:
					Number.isFinite(maxFileSizeMb) && maxFileSizeMb > 0 ? maxFileSizeMb : undefined,
			});
			item.binary = result.binary;
			files = result.files;
		} catch (error) {
			downloadError = scrub(call, classifyError(error).message);
		}
	}

	const json = taskOutputJson(task, { reference, finishedAt: now, files });
	json.verified = verified;
	json.signed = s.signed;
	const problems = [
		bodyProblem,
		downloadError &&
			`Downloading the files failed: ${downloadError}. The URLs in "files" stay valid 24 hours after generation.`,
	].filter(Boolean);
	if (problems.length > 0) json.error = problems.join(' ');
	item.json = scrubbedJson(call, json);
	return { workflowData: [[item]], noWebhookResponse: true };
}
