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
/** Status reads for one callback, at most (each also takes a token of the per-trigger budget). */
const VERIFY_ATTEMPTS = 3;
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
 * Reads the task's status within ANSWER_WITHIN_MS and VERIFY_ATTEMPTS, each read taking a
 * token of the trigger's budget. Retry-After is honoured only while it fits in the deadline; a
 * slow status endpoint is raced with the deadline (the read itself ends at its own timeout).
 */
async function verifyTask(
	call: Call,
	trigger: string,
	taskId: string,
	deadline: number,
): Promise<Verification> {
	let last: Fault | undefined;
	for (let attempt = 0; attempt < VERIFY_ATTEMPTS; attempt++) {
		if (!statusReads.take(trigger, Date.now())) {
			if (attempt === 0) {
				return {
					kind: 'throttled',
					retryAfterS: Math.max(1, Math.ceil(statusReads.waitMs(trigger) / 1000)),
				};
			}
			break;
		}
		const remaining = deadline - Date.now();
		const timer = new AbortController();
		const read = getTaskStatus(call.ctx, taskId, { retries: 0 }).then(
			(task) => ({ task }),
			(error: unknown) => ({ fault: classifyError(error) }),
		);
		const outcome = await Promise.race([
			read,
			sleep(Math.max(0, remaining), timer.signal).then(
				() => ({
					fault: {
						kind: 'timeout',
						message: `the status endpoint did not answer within the trigger's ${ANSWER_WITHIN_MS / 1000} s answer bound`,
					} as Fault,
				}),
				() => ({ fault: { kind: 'cancelled', message: 'cancelled' } as Fault }),
			),
		]);
		timer.abort();
		if ('task' in outcome) return { kind: 'confirmed', task: outcome.task };
		last = outcome.fault;
		if (isUnknownTask(last)) return { kind: 'unknown' };
		if (!isTransientForRead(last) || attempt + 1 >= VERIFY_ATTEMPTS) break;
		const delay = retryDelay(attempt + 1, last, DEFAULT_BACKOFF);
		if (Date.now() + delay >= deadline) {
			if (last.retryAfterMs !== undefined && last.retryAfterMs > 0) {
				last = {
					...last,
					message: `${last.message} (the service asked to wait ${Math.ceil(last.retryAfterMs / 1000)} s, beyond the trigger's ${ANSWER_WITHIN_MS / 1000} s answer bound)`,
				};
			}
			break;
		}
		await sleep(delay);
	}
	return {
		kind: 'unconfirmed',
		reason: scrub(call, last?.message ?? 'no status read was allowed'),
	};
}

/** Output fields that must never carry a secret: scrubbed as text, then parsed back. */
function scrubbedJson(call: Call, json: IDataObject): IDataObject {
	const text = JSON.stringify(json);
	const clean = scrub(call, text);
	return clean === text ? json : (JSON.parse(clean) as IDataObject);
}

export async function handleCallback(ctx: IWebhookFunctions): Promise<IWebhookResponseData> {
	const arrived = Date.now();
	const deadline = arrived + ANSWER_WITHIN_MS;
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const secret = typeof options.secret === 'string' ? options.secret : '';
	let query: CallbackQuery;
	try {
		query = readCallbackQuery(ctx.getQueryData());
	} catch {
		query = { repeatedSignature: false };
	}
	const call: Call = { ctx, secrets: [secret, query.secret, query.signature] };

	if (secret !== '' && !secretMatches(query.secret, secret)) {
		return refuse(call, 401, {
			error: `Missing or wrong "${SECRET_PARAM}" query parameter: the callback URL must carry the secret set in the trigger`,
		});
	}

	// The reference is the node's own only if its signature holds (checked before anything else
	// costs: no body search, no status read for a URL the node did not write). A missing or
	// malformed signature is refused without even reading the credential.
	const acceptUnsigned = options.acceptUnsigned === true;
	const unsignedRefusal = {
		error: `The callback URL carries no "${SIGNATURE_PARAM}" query parameter: only tasks submitted by the Media Generation node (same credential) are accepted, unless "Accept Unsigned Callbacks" is on`,
	};
	const mismatch = {
		error: `The "${SIGNATURE_PARAM}" query parameter does not match the callback reference: this URL was not written by the Media Generation node with this trigger's credential`,
	};
	if (query.signature === undefined && !acceptUnsigned) return refuse(call, 401, unsignedRefusal);
	if (query.signature !== undefined && !signatureWellFormed(query)) {
		return refuse(call, 401, mismatch);
	}
	let apiKey = '';
	try {
		apiKey = (await getApiCredentials(ctx)).apiKey;
	} catch (error) {
		return refuse(
			call,
			503,
			{
				error: `The trigger's credential cannot be read: ${scrub(call, (error as Error).message ?? '')}`,
			},
			{ 'Retry-After': String(RETRY_UNCONFIRMED_S) },
		);
	}
	call.secrets.push(apiKey);
	const signature = checkSignature(query, apiKey);
	if (signature === 'invalid') return refuse(call, 401, mismatch);
	// Signed, or unsigned by the user's explicit choice (then `signed: false` says so).
	const reference = query.reference;

	let parsed: ParsedCallback;
	try {
		const request = ctx.getRequestObject() as unknown as { rawBody?: unknown };
		parsed = parseCallbackBody(ctx.getBodyData(), request.rawBody);
	} catch (error) {
		if (error instanceof CallbackBodyError) {
			return refuse(call, error.httpStatus, { error: error.message });
		}
		return refuse(call, 400, { error: 'The callback body could not be read' });
	}

	const event = ctx.getNodeParameter('event', 'any') as EventFilter;
	const verify = ctx.getNodeParameter('verify', true) as boolean;
	const download = ctx.getNodeParameter('download', true) as boolean;
	const binaryProperty = download
		? (ctx.getNodeParameter('binaryPropertyName', 'data') as string).trim() || 'data'
		: 'data';
	const taskId = parsed.taskId;
	// Validated: printable ASCII without spaces, at most 256 characters.
	const shownId = taskId;
	const node = ctx.getNode();
	const trigger = `${ctx.getWorkflow().id ?? ''}:${node.id ?? node.name}`;

	// One execution per task, status and (signed) reference. A signed URL replayed for another
	// task cannot take that task's execution from its own callback: the reference differs.
	// Unsigned callbacks share one key per task and status, which a signed delivery also takes
	// (see below): a genuine signed callback is never a duplicate of an unsigned one, but once a
	// task ran from its signed callback, unsigned ones for it are.
	const keyFor = (status: StatusClass) =>
		signature === 'valid' && query.signature
			? `${deliveryKey(taskId, status)}:${query.signature.slice(0, 12)}`
			: deliveryKey(taskId, status);
	// With the Test URL n8n listens for one run and does not save static data: a call the user
	// replays while building the workflow is meant to run.
	const production = ctx.getMode() !== 'manual';
	// A replay of a delivery already taken is answered without a status read. (A false claim
	// can only earn a "duplicate" answer for a task whose execution already started.)
	if (production && (parsed.claimed === 'finished' || parsed.claimed === 'failed')) {
		const stored = ctx.getWorkflowStaticData('node').deliveries;
		if (deliveries.has(trigger, keyFor(parsed.claimed), stored, Date.now())) {
			return refuse(call, 200, { received: true, duplicate: true, task_id: taskId });
		}
	}

	let task: Task;
	let verified = false;
	let bodyProblem: string | undefined;
	if (verify) {
		if (unknownTasks.has(trigger, taskId, Date.now())) {
			return refuse(call, 404, {
				error: `Task ${shownId} is unknown to the service (asked less than a minute ago); nothing was started`,
			});
		}
		const outcome = await verifyTask(call, trigger, taskId, deadline);
		if (outcome.kind === 'unknown') {
			unknownTasks.add(trigger, taskId, Date.now());
			return refuse(call, 404, {
				error: `Task ${shownId} is unknown to the service; nothing was started`,
			});
		}
		if (outcome.kind === 'throttled') {
			return refuse(
				call,
				429,
				{ error: 'Too many callbacks to confirm right now; nothing was started. Try again later.' },
				{ 'Retry-After': String(outcome.retryAfterS) },
			);
		}
		if (outcome.kind === 'unconfirmed') {
			if (options.onVerifyError !== 'start') {
				return refuse(
					call,
					503,
					{
						error: `Could not confirm task ${shownId} with the service: ${outcome.reason}. Nothing was started; call again later.`,
					},
					{ 'Retry-After': String(RETRY_UNCONFIRMED_S) },
				);
			}
			// "Start With Error" (opt-in): no status and no files are taken from the body. The
			// claim only filters, so "Failed" workflows do not wake up for what says it is finished.
			if (parsed.claimed && parsed.claimed !== 'pending' && !eventWanted(event, parsed.claimed)) {
				return refuse(call, 200, {
					received: true,
					ignored: `${parsed.claimed} events are not selected`,
				});
			}
			answer(call, 200, { received: true, task_id: taskId, verified: false });
			const json = taskOutputJson({ task_id: taskId, status: 'unverified' }, { reference });
			json.verified = false;
			json.signed = signature === 'valid';
			json.claimed_status = parsed.rawStatus ?? null;
			json.error = `Could not confirm the callback with the status endpoint: ${outcome.reason}. Read the task's status later (its files stay valid 24 hours).`;
			return { workflowData: [[{ json: scrubbedJson(call, json) }]], noWebhookResponse: true };
		}
		if (outcome.task.task_id !== taskId) {
			return refuse(call, 409, {
				error: `Asked for task ${shownId}, the service answered with task ${excerpt(outcome.task.task_id)}; nothing was started`,
			});
		}
		task = outcome.task;
		verified = true;
	} else {
		if (!parsed.claimed) {
			return refuse(call, 400, {
				error: `The callback body has no recognisable status (got ${parsed.rawStatus === undefined ? 'none' : excerpt(parsed.rawStatus)}); it is needed when "Verify With Status Endpoint" is off`,
			});
		}
		const status =
			parsed.claimed === 'pending' ? (parsed.rawStatus ?? 'processing') : parsed.claimed;
		({ task, problem: bodyProblem } = taskFromBody(parsed, status));
	}

	const confirmed = classOf(task.status);
	if (verified && parsed.claimed && parsed.claimed !== confirmed) {
		return refuse(call, 409, {
			error: `The callback says task ${shownId} is ${parsed.rawStatus ?? ''}, the service says ${task.status.slice(0, 100)}; nothing was started`,
		});
	}
	if (confirmed === 'pending') {
		return refuse(call, 409, {
			error: `Task ${shownId} is still ${task.status.slice(0, 100)} at the service; nothing was started`,
		});
	}
	if (!eventWanted(event, confirmed)) {
		return refuse(call, 200, { received: true, ignored: `${confirmed} events are not selected` });
	}

	const key = keyFor(confirmed);
	const now = Date.now();
	const run = {
		task,
		taskId,
		confirmed,
		reference,
		verified,
		signed: signature === 'valid',
		bodyProblem,
		download,
		binaryProperty,
		now,
	};
	if (!production) return await start(call, run);
	const store = ctx.getWorkflowStaticData('node');
	const stored = (store.deliveries ??= {}) as IDataObject;
	// This request's copy of static data is written back by n8n after webhook() returns: until
	// then (and a while after) every delivery the process takes is added to it too.
	const live = deliveries.attach(trigger, stored, now);
	try {
		if (!deliveries.take(trigger, key, now)) {
			return refuse(call, 200, { received: true, duplicate: true, task_id: taskId });
		}
		const unsignedKey = deliveryKey(taskId, confirmed);
		const marked = acceptUnsigned && key !== unsignedKey && deliveries.take(trigger, unsignedKey, now);
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
			const result = await downloadTaskFiles(ctx, task, { binaryProperty });
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
