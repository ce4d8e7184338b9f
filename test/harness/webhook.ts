// Test-only. Serves a workflow's webhook trigger over real HTTP, the way n8n's webhook server
// does (packages/cli/src/webhooks/webhook-helpers.ts, executeWebhook), with n8n-core's real
// WebhookContext and WorkflowExecute:
//   1. the request body is parsed by content type (JSON, text, urlencoded), the raw bytes kept
//      as `rawBody`, the query parsed with repeated keys as arrays (as express does);
//   2. the workflow is rebuilt for every request with the static data "stored" after the
//      previous one (n8n loads it from its database per request and saves it after the
//      trigger's webhook() answered, when it changed);
//   3. the trigger's webhook() runs in a WebhookContext with the real request and response;
//   4. the immediate answer follows n8n's rules (noWebhookResponse, webhookResponse, default);
//   5. returned workflowData starts an execution: the trigger on the node execution stack with
//      that data, then WorkflowExecute.processRunExecutionData, as n8n's WorkflowRunner does.
// Not n8n here: no database, no express (a plain Node server; the trigger only uses the Node
// response API), no queue mode.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

import { WebhookContext, WorkflowExecute } from 'n8n-core';
import type {
	IDataObject,
	INode,
	INodeExecutionData,
	INodeType,
	IRun,
	IWebhookData,
	IWebhookResponseData,
} from 'n8n-workflow';
import { Workflow, createRunExecutionData } from 'n8n-workflow';

import {
	createAdditionalData,
	createHooks,
	nodeTypes,
	readBinary,
	binaryPath,
	setBinaryMode,
	type BinaryMode,
	type CredentialValues,
	type WorkflowJson,
} from './index';

export interface WebhookExecution {
	executionId: string;
	run: IRun;
	status: IRun['status'];
	/** Items a node emitted on output 0 of its first run ([] if none). */
	outputOf(nodeName: string): INodeExecutionData[];
	/** Everything the execution produced, as text (to assert what must never appear). */
	dump(): string;
}

export interface Delivery {
	/** HTTP status the trigger answered. */
	status: number;
	/** Parsed JSON answer (or the text when not JSON). */
	answer: unknown;
	/** Milliseconds from the request's arrival to the answer's end. */
	answeredMs: number;
	/** Milliseconds from the request's arrival until webhook() returned. */
	webhookMs: number;
	/** Set when webhook() returned workflowData; settles when the execution ended. */
	execution?: Promise<WebhookExecution>;
	/** webhook() threw (n8n answers 500 then). */
	error?: Error;
	query: IDataObject;
	/** True once webhook() returned (or threw) and the answer was sent. */
	done: boolean;
}

export interface CallbackReceiver {
	/** The trigger's production URL: `<base>/webhook/<webhookId>/<path>`. */
	url: string;
	/** The production URL with query parameters (reference, secret...). */
	callbackUrl(query?: Record<string, string>): string;
	deliveries: Delivery[];
	/** Executions started so far, in order of start. */
	executions(): Promise<WebhookExecution[]>;
	/** Resolves once `n` deliveries were answered and their executions ended. */
	waitFor(n: number, timeoutMs?: number): Promise<Delivery[]>;
	/** The trigger's static data as "stored" after the last request. */
	staticData(): IDataObject;
	readBinary: typeof readBinary;
	binaryPath: typeof binaryPath;
	close(): Promise<void>;
}

export interface ReceiverOptions {
	workflow: WorkflowJson;
	/** Name of the webhook trigger node; default: the first node with a webhook() method. */
	triggerNode?: string;
	credentials?: CredentialValues;
	binaryMode?: BinaryMode;
	/** 'webhook' = production URL of an active workflow; 'manual' = "Listen for test event". */
	mode?: 'webhook' | 'manual';
	/** Keep static data between requests (n8n does for active workflows). Default true. */
	persistStaticData?: boolean;
	workflowId?: string;
	/** Static data as stored before the first request (e.g. by another n8n process). */
	staticData?: IDataObject;
	/**
	 * The workflow's row in n8n's database, shared with other receivers (other processes of one
	 * n8n): each request reads its static data when it arrives and writes the whole object back
	 * after the trigger returned, as n8n does (no lock, last writer wins).
	 */
	database?: { staticData: IDataObject };
	/**
	 * The Trigger's webhookId (default: the workflow's, else a random one). n8n keeps it across
	 * restarts and processes, and callback URLs are signed for it (issue 51).
	 */
	webhookId?: string;
	/** The id of each execution a request starts (default: a random one). */
	nextExecutionId?: () => string;
}

/** A query string as express parses it: repeated keys become arrays. */
export function parseQuery(search: string): IDataObject {
	const out: IDataObject = {};
	for (const [key, value] of new URLSearchParams(search)) {
		const prev = out[key];
		if (prev === undefined) out[key] = value;
		else if (Array.isArray(prev)) (prev as string[]).push(value);
		else out[key] = [prev as string, value];
	}
	return out;
}

/** As n8n's parseBody: JSON, urlencoded, text; other types leave `body` empty. */
/** Records the answer as the caller sees it (status, then the JSON or the text) when it ends. */
export function recordAnswer(
	res: http.ServerResponse,
	onEnd: (status: number, answer: unknown) => void,
): void {
	const chunks: Buffer[] = [];
	const write = res.write.bind(res);
	const end = res.end.bind(res);
	res.write = ((chunk: unknown, ...rest: unknown[]) => {
		if (chunk) chunks.push(Buffer.from(chunk as string));
		return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
	}) as typeof res.write;
	res.end = ((chunk?: unknown, ...rest: unknown[]) => {
		if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk as string));
		const text = Buffer.concat(chunks).toString('utf8');
		let answer: unknown;
		try {
			answer = JSON.parse(text);
		} catch {
			answer = text;
		}
		onEnd(res.statusCode, answer);
		return (end as (...a: unknown[]) => http.ServerResponse)(chunk, ...rest);
	}) as typeof res.end;
}

function parseBody(raw: Buffer, contentType: string | undefined): unknown {
	const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
	if (raw.length === 0) return {};
	const text = raw.toString('utf8');
	if (type === 'application/json' || type.endsWith('+json')) {
		return JSON.parse(text);
	}
	if (type === 'application/x-www-form-urlencoded') return parseQuery(text);
	if (type.startsWith('text/')) return text;
	return {};
}

/** The content types n8n parses for a start node of a version above 1. */
function n8nParses(contentType: string | undefined): boolean {
	const type = contentType ?? '';
	return (
		type.startsWith('application/json') ||
		type.startsWith('text/plain') ||
		type.startsWith('application/x-www-form-urlencoded') ||
		type.endsWith('/xml') ||
		type.endsWith('+xml')
	);
}

function findTrigger(json: WorkflowJson, name?: string): INode {
	const node = name
		? json.nodes.find((n) => n.name === name)
		: json.nodes.find((n) => {
				const type = nodeTypes.getByNameAndVersion(n.type, n.typeVersion) as INodeType;
				return typeof type.webhook === 'function';
			});
	if (!node) throw new Error(`Webhook harness: trigger node ${name ?? '(webhook)'} not found`);
	return node;
}

function dumpOf(value: unknown): string {
	const seen = new WeakSet<object>();
	return JSON.stringify(value, (_k, v: unknown) => {
		if (v instanceof Error) {
			const plain: Record<string, unknown> = { name: v.name, message: v.message, stack: v.stack };
			for (const [k, x] of Object.entries(v)) plain[k] = x;
			return plain;
		}
		if (v && typeof v === 'object') {
			if (seen.has(v)) return '[circular]';
			seen.add(v);
		}
		return v;
	});
}

export async function startCallbackReceiver(options: ReceiverOptions): Promise<CallbackReceiver> {
	await setBinaryMode(options.binaryMode ?? 'filesystem');
	const source = JSON.parse(JSON.stringify(options.workflow)) as WorkflowJson;
	const trigger = findTrigger(source, options.triggerNode);
	trigger.webhookId = options.webhookId ?? trigger.webhookId ?? randomUUID();
	const workflowId = options.workflowId ?? source.id ?? `wf-${randomUUID().slice(0, 8)}`;
	const mode = options.mode ?? 'webhook';
	const persist = options.persistStaticData ?? true;
	const triggerType = nodeTypes.getByNameAndVersion(trigger.type, trigger.typeVersion) as INodeType;
	const description = triggerType.description.webhooks?.find((w) => w.name === 'default');
	if (!description || typeof triggerType.webhook !== 'function') {
		throw new Error(`Webhook harness: ${trigger.type} has no default webhook`);
	}
	const path = `${trigger.webhookId}/${String(description.path ?? '')}`;
	const database = options.database ?? {
		staticData: JSON.parse(JSON.stringify(options.staticData ?? {})) as IDataObject,
	};
	const deliveries: Delivery[] = [];
	const executions: Array<Promise<WebhookExecution>> = [];
	const waiters: Array<() => void> = [];

	let baseUrl = '';

	async function handle(
		req: http.IncomingMessage,
		res: http.ServerResponse,
		raw: Buffer,
		track: (d: Delivery) => void,
	) {
		const arrived = Date.now();
		const url = new URL(req.url ?? '/', 'http://localhost');
		const query = parseQuery(url.search);
		const delivery: Delivery = {
			status: 0,
			answer: undefined,
			answeredMs: 0,
			webhookMs: 0,
			query,
			done: false,
		};
		deliveries.push(delivery);
		track(delivery);
		recordAnswer(res, (status, answer) => {
			delivery.status = status;
			delivery.answer = answer;
			delivery.answeredMs = Date.now() - arrived;
		});
		const respond = (status: number, body: unknown) => {
			if (res.headersSent || res.writableEnded) return;
			const text = JSON.stringify(body);
			res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
			res.end(text);
		};

		if (req.method !== 'POST' || url.pathname !== `/webhook/${path}`) {
			respond(404, {
				code: 404,
				message: `The requested webhook "${req.method} ${url.pathname}" is not registered.`,
			});
			return;
		}
		const request = req as http.IncomingMessage & IDataObject;
		try {
			request.body = parseBody(raw, req.headers['content-type']) as IDataObject;
		} catch {
			respond(400, { message: 'Failed to parse request body' });
			return;
		}
		// n8n (webhook-helpers.js, parseRequestBody): a start node of version 1 has every body
		// read; from version 2 of a version list (1.1 here) only JSON, text, form and XML ones, a
		// body of another type is left to the node (n8n's raw-body middleware: readRawBody).
		if (trigger.typeVersion > 1 && !n8nParses(req.headers['content-type'])) {
			request.body = undefined;
			request.readRawBody = async () => {
				request.rawBody = raw;
			};
		} else request.rawBody = raw;
		request.query = query;
		request.params = {};

		const json = JSON.parse(JSON.stringify(source)) as WorkflowJson;
		const workflow = new Workflow({
			id: workflowId,
			name: json.name ?? 'callback workflow',
			nodes: json.nodes,
			connections: json.connections,
			active: mode === 'webhook',
			nodeTypes,
			staticData: persist ? JSON.parse(JSON.stringify(database.staticData)) : {},
			settings: { executionOrder: 'v1', ...(json.settings ?? {}) },
		});
		const node = workflow.getNode(trigger.name) as INode;
		const executionId = options.nextExecutionId?.() ?? `webhook-${randomUUID()}`;
		const hooks = createHooks(mode, executionId, workflow, json);
		const additionalData = createAdditionalData({
			executionId,
			workflowId,
			baseUrl,
			credentials: options.credentials ?? {},
			hooks,
		});
		additionalData.httpRequest = request as never;
		additionalData.httpResponse = res as never;
		const webhookData: IWebhookData = {
			httpMethod: 'POST',
			node: node.name,
			path,
			webhookDescription: description!,
			workflowId,
			workflowExecuteAdditionalData: additionalData,
			webhookId: trigger.webhookId,
			isTest: mode === 'manual',
		};
		const context = new WebhookContext(workflow, node, additionalData, mode, webhookData, [], null);

		let result: IWebhookResponseData;
		try {
			result = await triggerType.webhook!.call(context);
		} catch (error) {
			delivery.error = error as Error;
			delivery.webhookMs = Date.now() - arrived;
			respond(500, { code: 0, message: 'Error in workflow' });
			return;
		}
		delivery.webhookMs = Date.now() - arrived;
		// n8n saves static data once the trigger returned, when it changed it, and only then sends
		// the answer (live-webhooks.js: saveStaticData before the call resolves).
		if (persist && workflow.staticData.__dataChanged === true) {
			const copy = JSON.parse(JSON.stringify(workflow.staticData)) as IDataObject;
			delete copy.__dataChanged;
			database.staticData = copy;
		}
		if (!result.noWebhookResponse && result.workflowData === undefined) {
			respond(200, result.webhookResponse ?? { message: 'Webhook call received' });
			return;
		}
		if (result.workflowData === undefined) return;
		if (!result.noWebhookResponse) respond(200, { message: 'Workflow was started' });

		const runExecutionData = createRunExecutionData({
			executionData: {
				nodeExecutionStack: [{ node, data: { main: result.workflowData }, source: null }],
			},
		});
		const execution = (async (): Promise<WebhookExecution> => {
			const run = await new WorkflowExecute(
				additionalData,
				mode,
				runExecutionData,
			).processRunExecutionData(workflow);
			const runData = run.data.resultData.runData;
			return {
				executionId,
				run,
				status: run.status,
				outputOf: (name) => runData[name]?.[0]?.data?.main?.[0] ?? [],
				dump: () => dumpOf(run.data.resultData),
			};
		})();
		delivery.execution = execution;
		executions.push(execution);
	}

	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			let delivery: Delivery | undefined;
			void handle(req, res, Buffer.concat(chunks), (d) => (delivery = d))
				.catch((error: Error) => {
					if (!res.headersSent) {
						res.writeHead(500);
						res.end(error.message);
					}
				})
				.finally(() => {
					if (delivery) delivery.done = true;
					for (const wake of waiters.splice(0)) wake();
				});
		});
	});
	const sockets = new Set<import('node:net').Socket>();
	server.on('connection', (s) => {
		sockets.add(s);
		s.on('close', () => sockets.delete(s));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const port = (server.address() as AddressInfo).port;
	baseUrl = `http://127.0.0.1:${port}/`;
	const url = `http://127.0.0.1:${port}/webhook/${path}`;

	const receiver: CallbackReceiver = {
		url,
		callbackUrl(query = {}) {
			const u = new URL(url);
			for (const [k, v] of Object.entries(query)) u.searchParams.append(k, v);
			return u.toString();
		},
		deliveries,
		executions: async () => await Promise.all(executions),
		async waitFor(n, timeoutMs = 20_000) {
			const deadline = Date.now() + timeoutMs;
			const settled = () => deliveries.length >= n && deliveries.slice(0, n).every((d) => d.done);
			while (!settled()) {
				if (Date.now() > deadline) {
					throw new Error(
						`Webhook harness: ${deliveries.length} of ${n} deliveries after ${timeoutMs} ms`,
					);
				}
				await new Promise<void>((resolve) => {
					waiters.push(resolve);
					setTimeout(resolve, 50).unref();
				});
			}
			await Promise.all(deliveries.slice(0, n).map((d) => d.execution));
			return deliveries.slice(0, n);
		},
		staticData: () => JSON.parse(JSON.stringify(database.staticData)) as IDataObject,
		readBinary,
		binaryPath,
		async close() {
			await Promise.allSettled(executions);
			const closed = new Promise<void>((resolve) => server.close(() => resolve()));
			for (const s of sockets) s.destroy();
			await closed;
		},
	};
	return receiver;
}
