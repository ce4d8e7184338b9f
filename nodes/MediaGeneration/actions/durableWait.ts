import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { getApiCredentials, getTaskStatus, isLocalHost } from '../../shared/transport/api';
import { scrubSecret } from '../../shared/transport/faults';
import { RESUME_TOKEN_PARAM, maskCallbackUrl } from '../../shared/callbackUrl';
import { isTerminal, type Task } from '../../shared/task';
import { parseCallbackBody } from '../../shared/callbackBody';
import { StatusReadBudget } from '../../shared/statusReadBudget';
import { answer, refuse, retryAfter } from '../../shared/webhookAnswer';
import { mapWithLimit, type ItemOutcome } from './batch';
import {
	PARK_KEY,
	parkStateKey,
	sealParkState,
	storedParkState,
	type ParkState,
} from './parkState';

/*
 * "Park Until Callbacks": the execution is saved as waiting (nothing runs) until every item's
 * task has called back, or until the Timeout. Facts of n8n 2.41.1 this is built on:
 * - a parked node's own execute() output is thrown away, and when the execution resumes n8n
 *   does not run the node again: it passes on either what its webhook() returned (callback
 *   path) or its input (deadline path);
 * - what survives the wait (and a restart) is the node's input, i.e. the execution-stack entry
 *   returned by getExecuteData(). So before parking the node puts one "parked item" per input
 *   item there (task_id, submission facts, confirmed outcome), and both resume paths hand those
 *   to the next node, a Task → Wait for Completion, which finishes the job exactly as polling
 *   does (confirmed tasks without a status read, the others polled), files included.
 */

export const WAIT_MODE_POLL = 'poll';
export const WAIT_MODE_PARK = 'park';
/** Query parameter of the callback URL carrying the item index. */
const INDEX_PARAM = 'mgi';
const STATUS_CONCURRENCY = 10;
/** Status reads while the service waits for our answer to its callback. */
const CONFIRM_RETRIES = 2;

export const waitModeOption: INodeProperties = {
	displayName: 'Wait Mode',
	name: 'waitMode',
	type: 'options',
	options: [
		{
			name: 'Poll in This Execution',
			value: WAIT_MODE_POLL,
			description: 'The execution runs while it waits and reads the status on a schedule',
		},
		{
			name: 'Park Until Callbacks',
			value: WAIT_MODE_PARK,
			description:
				"The execution is saved as waiting (nothing runs, it survives restarts) until every task has called back or the Timeout has passed. Needs a Task → Wait for Completion node next, and n8n's WEBHOOK_URL reachable by the service.",
		},
	],
	default: WAIT_MODE_POLL,
	description: 'How to wait for the tasks: see docs/waiting.md of the package',
};

export function readWaitMode(ctx: IExecuteFunctions, itemIndex: number): string {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const mode = options.waitMode ?? WAIT_MODE_POLL;
	if (mode !== WAIT_MODE_POLL && mode !== WAIT_MODE_PARK) {
		throw new NodeOperationError(
			ctx.getNode(),
			`"Wait Mode" is ${JSON.stringify(mode)}; allowed: "${WAIT_MODE_POLL}" (Poll in This Execution) or "${WAIT_MODE_PARK}" (Park Until Callbacks)`,
			{ itemIndex },
		);
	}
	return mode;
}

/** The URL the service calls back for item `index` of this execution (signature included). */
function callbackUrlFor(resumeUrl: string, index: number): string {
	const url = new URL(resumeUrl);
	url.searchParams.set(INDEX_PARAM, String(index));
	return url.toString();
}

/** This execution's resume URL (`<WEBHOOK_URL>webhook-waiting/<id>?signature=…`). */
function resumeUrlOf(ctx: IExecuteFunctions | IWebhookFunctions): string {
	const value = ctx.evaluateExpression('{{ $execution.resumeUrl }}', 0);
	if (typeof value !== 'string' || !/^https?:\/\//.test(value)) {
		throw new NodeOperationError(
			ctx.getNode(),
			'"Wait Mode: Park Until Callbacks" needs n8n\'s resume URL for this execution, and n8n gave none: use "Poll in This Execution" here',
		);
	}
	return value;
}

/**
 * A Task → Wait for Completion node that polls (Wait Mode: Poll in This Execution) directly
 * after this node: the finisher a parked Generate needs, and what a crash-safe layout has.
 */
export function pollingFinisherFollows(ctx: IExecuteFunctions): boolean {
	const children = ctx.getChildNodes(ctx.getNode().name, { includeNodeParameters: true });
	return children.some((child) => {
		const params = (child as unknown as { parameters?: IDataObject }).parameters ?? {};
		const options = (params.options ?? {}) as IDataObject;
		return (
			/mediaGeneration$/.test(child.type) &&
			!child.disabled &&
			params.resource === 'task' &&
			(params.operation === undefined || params.operation === 'waitForCompletion') &&
			(options.waitMode ?? WAIT_MODE_POLL) === WAIT_MODE_POLL
		);
	});
}

/**
 * Checks made before anything is sent: a finishing node exists, the service can reach n8n's
 * webhook URL, and the user's own Callback URL does not compete with the resume URL.
 * Returns the resume URL.
 */
export async function checkParkable(
	ctx: IExecuteFunctions,
	opts: { userCallbackUrl?: string },
): Promise<string> {
	const node = ctx.getNode();
	if (opts.userCallbackUrl) {
		throw new NodeOperationError(
			node,
			'"Callback URL" cannot be used with "Wait Mode: Park Until Callbacks": a task has one callback URL, and in this mode it is this execution\'s resume URL',
			{
				description:
					'Remove the Callback URL option, or use "Wait Mode: Poll in This Execution" (or Wait for Completion off) to send the result to a Media Generation Trigger.',
			},
		);
	}
	const finisher = pollingFinisherFollows(ctx);
	if (!finisher) {
		throw new NodeOperationError(
			node,
			'"Wait Mode: Park Until Callbacks" needs a Media Generation node "Task → Wait for Completion" (Wait Mode: Poll in This Execution) after this node; nothing was sent',
			{
				description:
					'When a parked execution resumes, n8n does not run the parked node again: it hands the task_ids on, and the Wait for Completion node after it downloads the files (and polls any task whose callback did not come before the Timeout). Add one with Task ID {{ $json.task_id }}.',
			},
		);
	}

	const resumeUrl = resumeUrlOf(ctx);
	if (!new URL(resumeUrl).searchParams.get(RESUME_TOKEN_PARAM)) {
		// Without n8n's token anyone who learns the execution id (it is in the URL) could call
		// the parked execution.
		throw new NodeOperationError(
			node,
			`"Wait Mode: Park Until Callbacks" needs a resume URL signed by n8n (its "${RESUME_TOKEN_PARAM}" query parameter), and this n8n gave ${maskCallbackUrl(resumeUrl)} without one; nothing was sent`,
			{
				description:
					'n8n signs $execution.resumeUrl from version 2.14 on (tested: 2.14.2 and 2.41.1). Update n8n, or use "Wait Mode: Poll in This Execution".',
			},
		);
	}
	const webhookHost = new URL(resumeUrl).hostname;
	if (isLocalHost(webhookHost)) {
		let serviceHost = '';
		try {
			serviceHost = new URL((await getApiCredentials(ctx)).baseUrl).hostname;
		} catch {
			serviceHost = '';
		}
		const fix = `Set n8n's WEBHOOK_URL environment variable (N8N_WEBHOOK_URL, its newer name, works too) to the address the service can reach (e.g. WEBHOOK_URL=https://n8n.example.com/) and restart n8n, or use "Wait Mode: Poll in This Execution".`;
		if (!serviceHost || !isLocalHost(serviceHost)) {
			throw new NodeOperationError(
				node,
				`n8n's webhook URL is ${new URL(resumeUrl).origin}/, which the service cannot call back: no task was sent, so none would wait for a callback that cannot come`,
				{ description: fix },
			);
		}
		// Service and n8n on the same machine (a test set-up, a self-hosted service): possible.
		ctx.logger.warn(
			`Media Generation parks on callbacks to ${new URL(resumeUrl).origin}/, a local address: only a service on this machine can reach it. ${fix}`,
		);
	}
	return resumeUrl;
}

/** The callback URL the node submits item `index` with. */
export function parkCallbackUrl(resumeUrl: string, index: number): string {
	return callbackUrlFor(resumeUrl, index);
}

interface Registry {
	/** Final tasks confirmed by this process, by task_id. */
	confirmed: Map<string, { task: Task; finishedAt: number }>;
	resumed: boolean;
	/** Epoch ms after which nobody needs the entry (the park's deadline has long passed). */
	expiresAt: number;
	/** The task last found still pending by this process: read first when learning the others. */
	sentinel?: string;
	/** A learning pass under way: callbacks arriving meanwhile wait for it instead of reading too. */
	learning?: Promise<void>;
}

/**
 * Per park (one execution can park many times: a loop that parks in each round), what this
 * process has confirmed. A webhook() call cannot persist anything while the execution stays
 * parked, so this is memory. No process can assume it receives every callback of a park (two
 * mains behind a balancer, several `n8n webhook` processes, a restart, manual runs on the main
 * in queue mode): on each callback that leaves tasks pending in its view it learns the others
 * from the status endpoint, stopping at the first task still pending (see learnOthers).
 */
const registries = new Map<string, Registry>();
/** How long an entry outlives its park's deadline (n8n resumes up to a minute late). */
const REGISTRY_GRACE_MS = 60 * 60 * 1000;
/** When the deadline is unknown. */
const REGISTRY_TTL_MS = 8 * 24 * 60 * 60 * 1000;
const MAX_REGISTRIES = 5_000;

/**
 * Status reads the callbacks of one parked execution may cause in this process (keyed by its
 * resume path), as the trigger's per trigger: whoever holds the resume URL (the service) cannot
 * make callbacks cost the user's key more than the budget.
 */
const statusReads = new StatusReadBudget();

/** One park: the execution's resume path and token, the parking node and when it parked. */
function registryKey(resumeUrl: string, node: string, parkedAt: unknown): string {
	const url = new URL(resumeUrl);
	return JSON.stringify([
		url.pathname,
		url.searchParams.get('signature') ?? '',
		node,
		parkedAt ?? null,
	]);
}

/** Adds an entry, first dropping the expired ones (and the oldest beyond MAX_REGISTRIES). */
function addRegistry(key: string, deadline: unknown, now: number): Registry {
	for (const [k, entry] of registries) {
		if (entry.expiresAt < now || registries.size >= MAX_REGISTRIES) registries.delete(k);
	}
	const expiresAt =
		typeof deadline === 'number' ? deadline + REGISTRY_GRACE_MS : now + REGISTRY_TTL_MS;
	const registry: Registry = { confirmed: new Map(), resumed: false, expiresAt };
	registries.set(key, registry);
	return registry;
}

/** Entries this process holds (for tests of the sweep). */
export function parkRegistrySize(): number {
	return registries.size;
}

/** Seals each item's park state for the finisher (see parkState.ts). */
async function sealerOf(
	ctx: IExecuteFunctions | IWebhookFunctions,
): Promise<(item: INodeExecutionData) => INodeExecutionData> {
	let apiKey = '';
	try {
		apiKey = (await getApiCredentials(ctx)).apiKey;
	} catch {
		apiKey = '';
	}
	const key = parkStateKey(apiKey);
	const executionId = ctx.getExecutionId() ?? '';
	return (item) => {
		const state = storedParkState(item.json);
		if (!key || !state) return item;
		return {
			...item,
			json: { ...item.json, [PARK_KEY]: sealParkState(state, key, executionId, item.json) },
		};
	};
}

function taskJson(task: Task): IDataObject {
	return JSON.parse(JSON.stringify(task)) as IDataObject;
}

async function scrubbed(ctx: IExecuteFunctions | IWebhookFunctions, text: string): Promise<string> {
	let apiKey = '';
	try {
		apiKey = (await getApiCredentials(ctx)).apiKey;
	} catch {
		apiKey = '';
	}
	return scrubSecret(text, [apiKey]);
}

/** What parkExecution is given besides the outcomes. */
interface ParkOptions {
	resumeUrl: string;
	timeoutMs: number;
	submittedAt: number[];
	files?: Array<{ downloadFiles: boolean; binaryPropertyName: string } | undefined>;
	/** Items resuming a task accepted in the run a Retry starts from (callback elsewhere). */
	resumed?: boolean[];
}

/**
 * Turns the submission outcomes (Generate) or the task_ids (Wait for Completion) into parked
 * items, reads every task's status once (callbacks that came before n8n saved the execution
 * as waiting were answered 409 and may never come again), and parks the execution unless all
 * tasks are final already. Returns the parked items: the node's output when it did not park.
 */
export async function parkExecution(
	ctx: IExecuteFunctions,
	outcomes: ItemOutcome[],
	opts: ParkOptions,
): Promise<INodeExecutionData[]> {
	const now = Date.now();
	const items = await parkedItems(ctx, outcomes, opts);
	await readStatusesBeforeParking(ctx, items);
	const seal = await sealerOf(ctx);
	if (!mustPark(ctx, items, opts)) return items.map(seal);
	return await park(ctx, items, opts, now, seal);
}

/** One parked item per outcome: its task (or its error) and the park state it carries. */
async function parkedItems(
	ctx: IExecuteFunctions,
	outcomes: ItemOutcome[],
	opts: ParkOptions,
): Promise<INodeExecutionData[]> {
	const node = ctx.getNode().name;
	const items: INodeExecutionData[] = [];
	for (const [index, outcome] of outcomes.entries()) {
		const state: ParkState = {
			parked: true,
			index,
			node,
			submittedAt: opts.submittedAt[index],
			...(opts.files?.[index] ?? {}),
		};
		if (outcome.ok) {
			const json = { ...outcome.data.json };
			delete json.callback_url;
			if (typeof json.task_id === 'string') state.taskId = json.task_id;
			items.push({ json: { ...json, [PARK_KEY]: state }, pairedItem: { item: index } });
		} else {
			const description = outcome.error.description;
			state.error = {
				message: await scrubbed(ctx, outcome.error.message),
				description: typeof description === 'string' ? await scrubbed(ctx, description) : null,
			};
			items.push({ json: { ...outcome.json, [PARK_KEY]: state }, pairedItem: { item: index } });
		}
	}
	return items;
}

/** Statuses when parking: a task already final needs no callback. */
async function readStatusesBeforeParking(
	ctx: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<void> {
	const waiting = items.filter((item) => !storedParkState(item.json)?.error && item.json.task_id);
	await mapWithLimit(waiting.length, STATUS_CONCURRENCY, async (k) => {
		const item = waiting[k];
		const state = storedParkState(item.json) as ParkState;
		try {
			const task = await getTaskStatus(ctx, String(item.json.task_id), {
				retries: CONFIRM_RETRIES,
			});
			item.json.status = task.status;
			if (isTerminal(task.status)) {
				state.task = taskJson(task);
				state.finishedAt = Date.now();
			}
		} catch (error) {
			// Not fatal: the callback or, at the latest, the finishing node's polling settles it.
			ctx.logger.debug('Media Generation could not read a status before parking', {
				taskId: item.json.task_id,
				fault: scrubSecret(error instanceof Error ? error.message : String(error)),
			});
		}
	});
}

/** The items whose task is not final yet (as far as this node knows). */
const pendingItems = (items: INodeExecutionData[]) =>
	items.filter((item) => {
		const state = storedParkState(item.json);
		return !state?.error && item.json.task_id && !state?.task;
	});

/** Whether some task is still pending and every pending one can call this execution back. */
function mustPark(ctx: IExecuteFunctions, items: INodeExecutionData[], opts: ParkOptions): boolean {
	const pending = pendingItems(items);
	if (pending.length === 0) return false;
	// A resumed task still running calls back the resume URL of the execution this one retries,
	// which no longer waits: parking would wait for it until the deadline. Not parked, the
	// Wait for Completion node after this one polls every task that is not final.
	const unawaitable = pending.filter(
		(item) => opts.resumed?.[storedParkState(item.json)?.index ?? -1],
	);
	if (unawaitable.length > 0) {
		ctx.logger.info(
			`Media Generation does not park: ${unawaitable.length} task(s) resumed from the execution this one retries call back that execution, so the next node polls`,
		);
		return false;
	}
	return true;
}

/** Parks: the deadline in every item's state, this process's registry, then n8n's wait. */
async function park(
	ctx: IExecuteFunctions,
	items: INodeExecutionData[],
	opts: ParkOptions,
	now: number,
	seal: (item: INodeExecutionData) => INodeExecutionData,
): Promise<INodeExecutionData[]> {
	const deadline = now + opts.timeoutMs;
	for (const item of items) {
		const state = storedParkState(item.json) as ParkState;
		state.parkedAt = now;
		state.deadline = deadline;
	}
	addRegistry(registryKey(opts.resumeUrl, ctx.getNode().name, now), deadline, now);
	const sealed = items.map(seal);

	// What survives the wait is this node's input: the stack entry n8n pushes back when it
	// parks. Replacing its data (not the items: they are the parent node's output too) makes
	// the parked items that input.
	ctx.getExecuteData().data = { main: [sealed] };
	const pending = pendingItems(items);
	ctx.logger.info(
		`Media Generation parks the execution: ${pending.length} of ${items.length} tasks pending, deadline ${new Date(deadline).toISOString()}`,
	);
	await ctx.putExecutionToWait(new Date(deadline));
	return sealed;
}

// ---- the callback side: webhook() of the parked node ----

function queryString(query: IDataObject, key: string): string | undefined {
	const value = query[key];
	if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
	return typeof value === 'string' ? value : undefined;
}

function sameSecret(a: string, b: string): boolean {
	if (a.length !== b.length) return false;
	let diff = 0;
	for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
	return diff === 0;
}

/**
 * Reads the statuses of tasks this process has not confirmed (another process may have): the
 * task last found pending first, then batches of 2, 4, 8, then 10, stopping after the first
 * batch that holds a task still pending (while one is pending the execution cannot resume
 * anyway). A batch is at most one larger than the tasks found final before it, so a callback
 * reads at most the tasks it learns finished, plus as many again, plus one; and a process learns
 * each task finished at most once. The process that receives the last callback learns every
 * other task and resumes the execution, whichever processes received the rest.
 */
async function learnOthers(
	ctx: IWebhookFunctions,
	registry: Registry,
	ids: string[],
	budget: string,
): Promise<void> {
	const sentinel = registry.sentinel;
	const order =
		sentinel && ids.includes(sentinel) ? [sentinel, ...ids.filter((id) => id !== sentinel)] : ids;
	let next = 0;
	let size = 1;
	while (next < order.length) {
		const batch = order.slice(next, next + size);
		next += size;
		size = Math.min(size * 2, STATUS_CONCURRENCY);
		const stillPending: string[] = [];
		await mapWithLimit(batch.length, STATUS_CONCURRENCY, async (k) => {
			const id = batch[k];
			try {
				if (!statusReads.take(budget, Date.now())) throw new Error('status-read budget spent');
				const task = await getTaskStatus(ctx, id, { retries: CONFIRM_RETRIES });
				if (task.task_id === id && isTerminal(task.status)) {
					if (!registry.confirmed.has(id))
						registry.confirmed.set(id, { task, finishedAt: Date.now() });
					return;
				}
			} catch (error) {
				ctx.logger.debug('Media Generation could not read a status while parked', {
					taskId: id,
					fault: scrubSecret(error instanceof Error ? error.message : String(error)),
				});
			}
			stillPending.push(id);
		});
		if (stillPending.length > 0) {
			registry.sentinel = stillPending[0];
			return;
		}
	}
}

/** A step either hands its result to the next one or ends the call with this answer. */
type Step<T> = { ok: T } | { done: IWebhookResponseData };

const notParked = (ctx: IWebhookFunctions) =>
	refuse(ctx, 409, { error: 'This execution is not parked by a Media Generation node' });

/** The parked execution this callback is for, and the task it names. */
interface ParkedCallback {
	resumeUrl: string;
	parked: IDataObject[];
	states: Array<ParkState | undefined>;
	taskId: string;
	registry: Registry;
	/** The key of this park's status-read budget (its resume path). */
	budget: string;
}

/**
 * A callback to the parked execution: refused unless it carries this execution's signature and
 * names one of its tasks; confirmed with the status endpoint; the execution resumes (once) when
 * no task is left pending, else it stays parked.
 */
export async function handleParkedCallback(ctx: IWebhookFunctions): Promise<IWebhookResponseData> {
	const resumeUrl = checkResumeToken(ctx);
	if ('done' in resumeUrl) return resumeUrl.done;
	const callback = readParkedCallback(ctx, resumeUrl.ok);
	if ('done' in callback) return callback.done;
	const confirmed = await confirmCallbackTask(ctx, callback.ok);
	if (confirmed) return confirmed;
	const pending = await pendingAfter(ctx, callback.ok);
	if (pending.length > 0 || callback.ok.registry.resumed) {
		answer(ctx, 200, {
			received: true,
			task_id: callback.ok.taskId,
			pending: pending.length,
			...(callback.ok.registry.resumed ? { note: 'the execution has resumed already' } : {}),
		});
		return { noWebhookResponse: true };
	}
	return await resume(ctx, callback.ok);
}

/** The execution's own token (n8n's `signature`): the resume URL, or the refusal. */
function checkResumeToken(ctx: IWebhookFunctions): Step<string> {
	let resumeUrl: string;
	try {
		resumeUrl = resumeUrlOf(ctx);
	} catch {
		return { done: notParked(ctx) };
	}
	const expected = new URL(resumeUrl).searchParams.get('signature') ?? '';
	const given = queryString(ctx.getQueryData() as IDataObject, 'signature') ?? '';
	if (!expected || !sameSecret(given, expected)) {
		return {
			done: refuse(ctx, 401, { error: 'Missing or wrong signature for this execution' }),
		};
	}
	return { ok: resumeUrl };
}

/** The parked items, and the one whose task the callback names (by index, else by task_id). */
function readParkedCallback(ctx: IWebhookFunctions, resumeUrl: string): Step<ParkedCallback> {
	const raw = ctx.evaluateExpression('{{ $input.all().map(i => i.json) }}', 0);
	const parked = (Array.isArray(raw) ? raw : []) as IDataObject[];
	const states = parked.map((json) => storedParkState(json));
	if (parked.length === 0 || states.some((s) => s === undefined)) {
		return { done: notParked(ctx) };
	}

	let bodyTaskId: string | undefined;
	try {
		const request = ctx.getRequestObject() as unknown as { rawBody?: unknown };
		bodyTaskId = parseCallbackBody(ctx.getBodyData(), request.rawBody).taskId;
	} catch {
		bodyTaskId = undefined;
	}
	const indexText = queryString(ctx.getQueryData() as IDataObject, INDEX_PARAM);
	let index = indexText !== undefined && /^\d+$/.test(indexText) ? Number(indexText) : -1;
	if (index < 0 && bodyTaskId) index = parked.findIndex((json) => json.task_id === bodyTaskId);
	const target = parked[index];
	const taskId = typeof target?.task_id === 'string' ? target.task_id : undefined;
	if (!taskId || states[index]?.error || (bodyTaskId !== undefined && bodyTaskId !== taskId)) {
		return {
			done: refuse(ctx, 404, {
				error: 'The task is not part of this execution; nothing was changed',
			}),
		};
	}

	const first = states[0] as ParkState;
	const key = registryKey(resumeUrl, ctx.getNode().name, first.parkedAt);
	const registry = registries.get(key) ?? addRegistry(key, first.deadline, Date.now());
	const budget = new URL(resumeUrl).pathname;
	return { ok: { resumeUrl, parked, states, taskId, registry, budget } };
}

/**
 * At most one status read for the callback's task: a repeated callback (the service retrying
 * because our answer came late) for a confirmed task reads nothing. Returns the answer that
 * ends the call when the task is not confirmed final (429, 503, 202).
 */
async function confirmCallbackTask(
	ctx: IWebhookFunctions,
	{ taskId, registry, budget }: ParkedCallback,
): Promise<IWebhookResponseData | undefined> {
	if (registry.confirmed.has(taskId)) return undefined;
	if (!statusReads.take(budget, Date.now())) {
		const headers = retryAfter(statusReads.waitMs(budget));
		return refuse(
			ctx,
			429,
			{
				error: `Too many callbacks to confirm for this execution right now; nothing was changed. Try again in ${headers['Retry-After']} s.`,
			},
			{ headers },
		);
	}
	try {
		const task = await getTaskStatus(ctx, taskId, { retries: CONFIRM_RETRIES });
		if (task.task_id === taskId && isTerminal(task.status) && !registry.confirmed.has(taskId)) {
			registry.confirmed.set(taskId, { task, finishedAt: Date.now() });
		}
	} catch (error) {
		const readFault = await scrubbed(ctx, error instanceof Error ? error.message : String(error));
		// Not confirmed: the service may retry; at worst the deadline and the finishing node's
		// polling settle this task.
		return refuse(ctx, 503, {
			error: `Could not confirm task ${taskId} with the service: ${readFault}`,
		});
	}
	if (registry.confirmed.has(taskId)) return undefined;
	return refuse(ctx, 202, {
		received: true,
		task_id: taskId,
		confirmed: false,
		note: 'not final at the service yet',
	});
}

/** The tasks still pending once this process learnt what it could of the others. */
async function pendingAfter(
	ctx: IWebhookFunctions,
	{ parked, states, registry, budget }: ParkedCallback,
): Promise<IDataObject[]> {
	const pendingNow = () =>
		parked.filter((json, i) => {
			const state = states[i] as ParkState;
			return !state.error && !state.task && !registry.confirmed.has(String(json.task_id));
		});
	const pending = pendingNow();
	if (pending.length === 0 || registry.resumed) return pending;
	if (!registry.learning) {
		registry.learning = learnOthers(
			ctx,
			registry,
			pending.map((json) => String(json.task_id)),
			budget,
		).finally(() => {
			registry.learning = undefined;
		});
	}
	await registry.learning;
	return pendingNow();
}

/** The last task: the execution resumes exactly once (this process answers every later call). */
async function resume(
	ctx: IWebhookFunctions,
	{ parked, states, taskId, registry }: ParkedCallback,
): Promise<IWebhookResponseData> {
	registry.resumed = true;
	const seal = await sealerOf(ctx);
	const items: INodeExecutionData[] = parked.map((json, i) => {
		const state = { ...(states[i] as ParkState) };
		const found = registry.confirmed.get(String(json.task_id));
		if (found && !state.task) {
			state.task = taskJson(found.task);
			state.finishedAt = found.finishedAt;
		}
		const status = state.task ? String(state.task.status) : json.status;
		return seal({ json: { ...json, status, [PARK_KEY]: state }, pairedItem: { item: i } });
	});
	answer(ctx, 200, { received: true, task_id: taskId, pending: 0, resumed: true });
	return { workflowData: [items], noWebhookResponse: true };
}
