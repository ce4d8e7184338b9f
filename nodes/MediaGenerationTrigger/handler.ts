import type {
	IDataObject,
	INodeExecutionData,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { getApiCredentials, getTaskStatus } from '../shared/api';
import { downloadTaskFiles } from '../shared/files';
import { classifyError, scrubSecret, type Fault } from '../shared/http';
import { taskOutputJson } from '../shared/output';
import { parseTaskData, type Task } from '../shared/task';
import {
	CallbackBodyError,
	deliveryKey,
	DEDUPE_LIMITS,
	eventWanted,
	forgetDelivery,
	parseCallbackBody,
	queryValue,
	rememberDelivery,
	secretMatches,
	type EventFilter,
	type ParsedCallback,
	type StatusClass,
} from './callback';

/** Query parameter of the callback URL carrying the generation node's Callback Reference. */
export const REFERENCE_PARAM = 'ref';
/** Query parameter of the callback URL carrying the optional shared secret. */
export const SECRET_PARAM = 'secret';

/**
 * Status reads while the service waits for our answer: few and short, so it gets one quickly
 * (the node's own default of 5 retries can take half a minute).
 */
const VERIFY_RETRIES = 2;

/**
 * Deliveries this process is handling or has handled recently. Static data is loaded per
 * request and written back only after webhook() returns, i.e. after the download: without this,
 * a duplicate arriving during a long download would not see the first one.
 */
const inProcess: IDataObject = {};
/** Long enough to outlast any download; static data takes over once webhook() returned. */
const IN_PROCESS_LIMITS = { maxAgeMs: 60 * 60 * 1000, maxEntries: 10_000 };

interface MinimalResponse {
	headersSent?: boolean;
	statusCode: number;
	setHeader(name: string, value: string): unknown;
	end(body?: string): unknown;
}

/**
 * Answers the service now, through the plain Node response (n8n hands an express response,
 * which is one), so that downloading large files afterwards never delays the answer.
 */
function answer(
	ctx: IWebhookFunctions,
	status: number,
	body: IDataObject,
	headers: Record<string, string> = {},
): void {
	const res = ctx.getResponseObject() as unknown as MinimalResponse;
	if (res.headersSent) return;
	res.statusCode = status;
	res.setHeader('Content-Type', 'application/json; charset=utf-8');
	for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
	res.end(JSON.stringify(body));
}

/** Ends the request without starting an execution. */
function refuse(
	ctx: IWebhookFunctions,
	status: number,
	body: IDataObject,
	headers?: Record<string, string>,
): IWebhookResponseData {
	answer(ctx, status, body, headers);
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

/** The body's own task, for "Verify With Status Endpoint" off; files only if well formed. */
function taskFromBody(parsed: ParsedCallback, status: string): { task: Task; problem?: string } {
	const candidate = { ...parsed.task, task_id: parsed.taskId, status };
	try {
		return { task: parseTaskData(candidate) };
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		const bare: Task = { task_id: parsed.taskId, status };
		const errorMessage = parsed.task.error_message ?? parsed.task.error;
		if (typeof errorMessage === 'string') bare.error_message = errorMessage;
		return { task: bare, problem: `The callback body's task could not be read fully: ${message}` };
	}
}

export async function handleCallback(ctx: IWebhookFunctions): Promise<IWebhookResponseData> {
	const query = ctx.getQueryData();
	const options = ctx.getNodeParameter('options', {}) as IDataObject;

	const secret = typeof options.secret === 'string' ? options.secret : '';
	if (secret !== '' && !secretMatches(queryValue(query, SECRET_PARAM), secret)) {
		return refuse(ctx, 401, {
			error: `Missing or wrong "${SECRET_PARAM}" query parameter: the callback URL must carry the secret set in the trigger`,
		});
	}

	let parsed: ParsedCallback;
	try {
		const request = ctx.getRequestObject() as unknown as { rawBody?: unknown };
		parsed = parseCallbackBody(ctx.getBodyData(), request.rawBody);
	} catch (error) {
		if (error instanceof CallbackBodyError) return refuse(ctx, 400, { error: error.message });
		throw new NodeOperationError(ctx.getNode(), error as Error);
	}

	const reference = queryValue(query, REFERENCE_PARAM);
	const event = ctx.getNodeParameter('event', 'any') as EventFilter;
	const verify = ctx.getNodeParameter('verify', true) as boolean;
	const download = ctx.getNodeParameter('download', true) as boolean;
	const binaryProperty = download
		? (ctx.getNodeParameter('binaryPropertyName', 'data') as string).trim() || 'data'
		: 'data';
	const taskId = parsed.taskId;

	let task: Task;
	let verified = false;
	let bodyProblem: string | undefined;
	if (verify) {
		let fault: Fault | undefined;
		try {
			task = await getTaskStatus(ctx, taskId, { retries: VERIFY_RETRIES });
			verified = true;
		} catch (error) {
			fault = classifyError(error);
			task = { task_id: taskId, status: 'unverified' };
		}
		if (fault && isUnknownTask(fault)) {
			return refuse(ctx, 404, {
				error: `Task ${taskId} is unknown to the service; nothing was started`,
			});
		}
		if (fault) {
			const { apiKey } = await getApiCredentials(ctx).catch(() => ({ apiKey: '' }));
			const reason = scrubSecret(fault.message, [apiKey]);
			if (options.onVerifyError === 'reject') {
				return refuse(
					ctx,
					503,
					{ error: `Could not confirm task ${taskId} with the service: ${reason}` },
					{ 'Retry-After': '60' },
				);
			}
			// Not confirmed: no status and no files are taken from the body. The claim only
			// filters, so "Failed" workflows do not wake up for what says it is finished.
			if (parsed.claimed && parsed.claimed !== 'pending' && !eventWanted(event, parsed.claimed)) {
				return refuse(ctx, 200, { received: true, ignored: `${parsed.claimed} events are not selected` });
			}
			answer(ctx, 200, { received: true, task_id: taskId, verified: false });
			const json = taskOutputJson(task, { reference });
			json.verified = false;
			json.claimed_status = parsed.rawStatus ?? null;
			json.error = `Could not confirm the callback with the status endpoint: ${reason}. Read the task's status later (its files stay valid 24 hours).`;
			return { workflowData: [[{ json }]], noWebhookResponse: true };
		}
	} else {
		if (!parsed.claimed) {
			return refuse(ctx, 400, {
				error: `The callback body has no recognisable status (got ${JSON.stringify(parsed.rawStatus ?? null)}); it is needed when "Verify With Status Endpoint" is off`,
			});
		}
		const status = parsed.claimed === 'pending' ? (parsed.rawStatus ?? 'processing') : parsed.claimed;
		({ task, problem: bodyProblem } = taskFromBody(parsed, status));
	}

	const confirmed = classOf(task.status);
	if (verified && parsed.claimed && parsed.claimed !== confirmed) {
		return refuse(ctx, 409, {
			error: `The callback says task ${taskId} is ${parsed.rawStatus}, the service says ${task.status}; nothing was started`,
		});
	}
	if (confirmed === 'pending') {
		return refuse(ctx, 409, {
			error: `Task ${taskId} is still ${task.status} at the service; nothing was started`,
		});
	}
	if (!eventWanted(event, confirmed)) {
		return refuse(ctx, 200, { received: true, ignored: `${confirmed} events are not selected` });
	}

	const key = deliveryKey(taskId, confirmed);
	const node = ctx.getNode();
	const processKey = `${ctx.getWorkflow().id ?? ''}:${node.id ?? node.name}:${key}`;
	const now = Date.now();
	// With the Test URL n8n listens for one run and does not save static data: a call the user
	// replays while building the workflow is meant to run.
	const production = ctx.getMode() !== 'manual';
	const seen = production
		? ((ctx.getWorkflowStaticData('node').deliveries ??= {}) as IDataObject)
		: {};
	if (production && !rememberDelivery(inProcess, processKey, now, IN_PROCESS_LIMITS)) {
		return refuse(ctx, 200, { received: true, duplicate: true, task_id: taskId });
	}
	if (production && !rememberDelivery(seen, key, now, DEDUPE_LIMITS)) {
		return refuse(ctx, 200, { received: true, duplicate: true, task_id: taskId });
	}

	// From here the workflow will start: answer the service before any file is downloaded.
	try {
		answer(ctx, 200, { received: true, task_id: taskId });
	} catch (error) {
		forgetDelivery(inProcess, processKey);
		forgetDelivery(seen, key);
		throw new NodeOperationError(ctx.getNode(), error as Error);
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
			const { apiKey } = await getApiCredentials(ctx).catch(() => ({ apiKey: '' }));
			downloadError = scrubSecret(classifyError(error).message, [apiKey]);
		}
	}

	const json = taskOutputJson(task, { reference, finishedAt: now, files });
	json.verified = verified;
	const problems = [bodyProblem, downloadError && `Downloading the files failed: ${downloadError}. The URLs in "files" stay valid 24 hours after generation.`].filter(Boolean);
	if (problems.length > 0) json.error = problems.join(' ');
	item.json = json;
	return { workflowData: [[item]], noWebhookResponse: true };
}
