import type {
	IDataObject,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	checkSignatureWith,
	readCallbackQuery,
	secretMatches,
	SECRET_PARAM,
	SIGNATURE_PARAM,
	signatureWellFormed,
	signingKey,
	type CallbackQuery,
	type SignatureCheck,
} from '../shared/callbackUrl';
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
import {
	answer,
	answered,
	knowKey,
	refuse,
	scrub,
	scrubbedJson,
	type Authenticated,
	type Call,
	type Request,
	type Settings,
	type Step,
} from './call';
import { downloadFiles, downloadMinutesOf } from './downloadLine';
import { callsInProgress, confirming, deliveries, signingKeys } from './memory';
import {
	ANSWER_WITHIN_MS,
	CONFIRM_WITHIN_MS,
	RETRY_UNCONFIRMED_S,
	verifyWithService,
} from './verify';

export { ANSWER_WITHIN_MS, CONFIRM_WITHIN_MS } from './verify';

function classOf(status: string): StatusClass {
	if (status === 'finished') return 'finished';
	if (status === 'failed') return 'failed';
	return 'pending';
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

/**
 * One callback, in the order of its steps: read the request, authenticate its URL, read its
 * body, drop a delivery already taken, verify the task with the service, then start the run
 * once (answering before the files are downloaded). Each step may end the call with an answer.
 */
export async function handleCallback(ctx: IWebhookFunctions): Promise<IWebhookResponseData> {
	callsInProgress.enter();
	try {
		return await handleOne(ctx);
	} finally {
		callsInProgress.leave();
	}
}

async function handleOne(ctx: IWebhookFunctions): Promise<IWebhookResponseData> {
	const request = readRequest(ctx);
	const auth = await authenticate(request);
	if ('done' in auth) return auth.done;
	const body = await readBody(request);
	if ('done' in body) return body.done;
	const settings = readSettings(request, body.ok);
	const seen = alreadyTaken(request, settings, body.ok);
	if (seen) return seen;
	// One run per task per trigger, whatever URL brings it: while a call confirms a task, a
	// call bringing it on another URL waits for the outcome (the Test URL runs every call).
	const { trigger } = settings;
	const { taskId } = body.ok;
	if (settings.production && !confirming.enter(trigger, taskId, auth.ok.source.key)) {
		return refuse(
			request.call,
			503,
			{
				error: `Task ${taskId} is being confirmed from another callback URL; nothing was started. Call again later.`,
			},
			{ 'Retry-After': String(ELSEWHERE_RETRY_S) },
		);
	}
	try {
		const task = await confirm(request, settings, auth.ok, body.ok);
		if ('done' in task) return task.done;
		return await startOnce(request, settings, auth.ok, task.ok);
	} finally {
		if (settings.production) confirming.leave(trigger, taskId);
	}
}

/** Retry-After of a task being confirmed from another URL (the confirmation takes this long at most). */
const ELSEWHERE_RETRY_S = CONFIRM_WITHIN_MS / 1000;

/** Read: the options and the callback URL's query; what must never be quoted is noted. */
function readRequest(ctx: IWebhookFunctions): Request {
	const arrivedAt = Date.now();
	const deadline = arrivedAt + ANSWER_WITHIN_MS;
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const secret = typeof options.secret === 'string' ? options.secret : '';
	let query: CallbackQuery;
	try {
		query = readCallbackQuery(ctx.getQueryData());
	} catch {
		query = { repeatedSignature: false, repeatedNonce: false };
	}
	const call: Call = { ctx, secrets: [secret, query.secret, query.signature] };
	return { call, options, query, deadline, arrivedAt };
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
	let signature: SignatureCheck = 'missing';
	if (query.signature !== undefined) {
		const checked = await checkSigned(call, query);
		if ('done' in checked) return checked;
		signature = checked.ok;
	}
	if (signature === 'invalid') return { done: refuse(call, 401, mismatch) };
	// Signed, or unsigned by the user's explicit choice (then `signed: false` says so).
	return { ok: { signature, acceptUnsigned, reference: query.reference, source: sourceOf(query) } };
}

/**
 * The URL a call came to, for its share of status reads: one submission's (its nonce), or one
 * many tasks share: a legacy signed one (no nonce: one per reference, told apart by its
 * signature) or an unsigned one.
 */
function sourceOf(query: CallbackQuery): Authenticated['source'] {
	if (query.signature === undefined) return { key: 'unsigned', shared: true };
	if (query.nonce === undefined) return { key: `ref:${query.signature}`, shared: true };
	return { key: `nonce:${query.nonce}`, shared: false };
}

/**
 * The signature, checked with the signing key this process derived from the trigger's
 * credential lately (no credential read: see SigningKeys), else with the credential as it is
 * now, read at most once per SIGNING_KEY_REFRESH_MS per trigger; 503 when it cannot be read.
 */
async function checkSigned(call: Call, query: CallbackQuery): Promise<Step<SignatureCheck>> {
	const node = call.ctx.getNode();
	const id = `${call.ctx.getWorkflow().id ?? ''}:${node.id ?? node.name}:${node.credentials?.mediaGenerationApi?.id ?? ''}`;
	const cached = signingKeys.get(id, Date.now());
	// Signed for this Trigger (its webhookId, see callbackUrl.ts), or in a form signed for none.
	const webhookId = node.webhookId;
	if (cached && checkSignatureWith(query, cached, webhookId) === 'valid') return { ok: 'valid' };
	if (cached && signingKeys.fresh(id, Date.now())) return { ok: 'invalid' };
	let key: Buffer | undefined;
	try {
		key = await signingKeys.read(
			id,
			async () => {
				const apiKey = await knowKey(call);
				return apiKey === '' ? undefined : signingKey(apiKey);
			},
			() => Date.now(),
		);
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
	if (!key) return { ok: 'invalid' };
	return { ok: checkSignatureWith(query, key, webhookId) };
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

/** Options → Max File Size: 0 or unset is automatic, as before the option existed. */
function maxFileSizeOf(ctx: IWebhookFunctions): number | undefined {
	const options = ctx.getNodeParameter('options', {}) as IDataObject;
	const mb = Number(options.maxFileSizeMb);
	return Number.isFinite(mb) && mb > 0 ? mb : undefined;
}

function readSettings({ call }: Request, parsed: ParsedCallback): Settings {
	const { ctx } = call;
	const download = ctx.getNodeParameter('download', true) as boolean;
	const node = ctx.getNode();
	// One execution per task and status, whatever URL brings it (issue 44): a genuine callback
	// replayed to another task's URL is a duplicate, not a run tagged with that URL's reference.
	const keyFor = (status: StatusClass) => deliveryKey(parsed.taskId, status);
	return {
		event: ctx.getNodeParameter('event', 'any') as EventFilter,
		verify: ctx.getNodeParameter('verify', true) as boolean,
		download,
		binaryProperty: download
			? (ctx.getNodeParameter('binaryPropertyName', 'data') as string).trim() || 'data'
			: 'data',
		downloadMinutes: download ? downloadMinutesOf(ctx) : 0,
		maxFileSizeMb: download ? maxFileSizeOf(ctx) : undefined,
		trigger: `${ctx.getWorkflow().id ?? ''}:${node.id ?? node.name}`,
		// With the Test URL n8n listens for one run and does not save static data: a call the
		// user replays while building the workflow is meant to run.
		production: ctx.getMode() !== 'manual',
		keyFor,
	};
}

/**
 * De-duplicate (early): a call for a task whose run already started, on whatever URL and
 * whatever status it claims, is answered without a status read (a task that reached a final
 * state stays there). The delivery is taken for good in startOnce, once the task is confirmed.
 */
function alreadyTaken(
	{ call }: Request,
	settings: Settings,
	parsed: ParsedCallback,
): IWebhookResponseData | undefined {
	if (!settings.production) return undefined;
	const store = call.ctx.getWorkflowStaticData('node');
	const ran = deliveries.taskRun(settings.trigger, parsed.taskId, store.deliveries, Date.now());
	if (ran === undefined || bodyFailedFirst(settings, ran, parsed.claimed)) return undefined;
	if ((parsed.claimed === 'finished' || parsed.claimed === 'failed') && parsed.claimed !== ran) {
		// A claim the task's own run contradicts (a final state does not change): refused unread.
		return refuse(call, 409, {
			error: `The callback says task ${parsed.taskId} is ${parsed.rawStatus ?? parsed.claimed}, but its ${ran} run already started; nothing was started`,
		});
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
 * Verify off: a "failed" run taken from a body does not take the task's one run from a later
 * "finished" (issue 51, finding 8: a forged "failed" posted first made the genuine "finished"
 * a 409 for three days). The task then runs once per status at most: failed, then finished.
 */
function bodyFailedFirst(
	settings: Settings,
	ran: StatusClass,
	claimed: StatusClass | undefined,
): boolean {
	return !settings.verify && ran === 'failed' && claimed === 'finished';
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
		if ('unverified' in outcome) {
			return { done: startUnverified(call, settings, auth, parsed, outcome.unverified) };
		}
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
	{ call, arrivedAt }: Request,
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
		settings,
		arrivedAt,
		now,
	};
	if (!settings.production) return await start(call, run);
	const { trigger } = settings;
	const key = settings.keyFor(c.confirmed);
	const store = ctx.getWorkflowStaticData('node');
	const stored = (store.deliveries ??= {}) as IDataObject;
	const live = deliveries.attach(trigger, stored, now);
	try {
		const ran = deliveries.taskRun(trigger, c.taskId, stored, now);
		if (
			(ran !== undefined && !bodyFailedFirst(settings, ran, c.confirmed)) ||
			!deliveries.take(trigger, key, now)
		) {
			return duplicate(call, c.taskId);
		}
		try {
			return await start(call, run);
		} catch (error) {
			// Not taken after all: the service's next attempt must run.
			deliveries.forget(trigger, key);
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
	settings: Settings;
	arrivedAt: number;
	now: number;
}

/** Answers 200, downloads the files (after answering) and returns the execution's item. */
async function start(call: Call, s: Start): Promise<IWebhookResponseData> {
	const { ctx } = call;
	const { task, taskId, confirmed, reference, verified, bodyProblem, settings, now } = s;

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
	if (settings.download && confirmed === 'finished' && (task.files ?? []).length > 0) {
		await knowKey(call).catch(() => '');
		const downloaded = await downloadFiles(ctx, task, settings, s.arrivedAt);
		if ('error' in downloaded) downloadError = scrub(call, downloaded.error);
		else {
			item.binary = downloaded.binary;
			files = downloaded.files;
		}
	}

	const json = taskOutputJson(task, { reference, finishedAt: now, files });
	json.verified = verified;
	json.signed = s.signed;
	const problems = [bodyProblem, downloadError].filter(Boolean);
	if (problems.length > 0) json.error = problems.join(' ');
	item.json = scrubbedJson(call, json);
	return { workflowData: [[item]], noWebhookResponse: true };
}
