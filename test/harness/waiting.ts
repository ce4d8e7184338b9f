// Test-only. Serves n8n's `/webhook-waiting/<executionId>` route over real HTTP for executions
// the harness parked (runWorkflow with `baseUrl` = this server), the way n8n's waiting-webhooks
// does for one process (packages/cli/src/webhooks/waiting-webhooks.ts):
//   1. the execution is looked up by id; a wrong or missing `signature` gets 401 before the node
//      runs (n8n compares it with the execution's resume token);
//   2. the parked node's webhook() runs in n8n-core's real WebhookContext, with the execution's
//      saved run data (its stack entry holds the node's input: the parked items);
//   3. workflowData returned = the execution resumes: recorded, and later calls get 409 as in n8n
//      ("is running already"/finished). The resumed run itself is not executed here.
// Not n8n here: no database, no wait tracker, one process (each test decides what reaches it).
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { WebhookContext } from 'n8n-core';
import type {
	IDataObject,
	INode,
	INodeExecutionData,
	INodeType,
	IWebhookData,
	IWebhookResponseData,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import {
	createAdditionalData,
	nodeTypes,
	type CredentialValues,
	type RunResult,
	type WorkflowJson,
} from './index';
import { parseQuery, recordAnswer } from './webhook';

export interface WaitingCall {
	executionId: string;
	status: number;
	answer: unknown;
	/** webhook() returned workflowData: the execution resumes with these items. */
	resumed?: INodeExecutionData[];
}

export interface WaitingServer {
	/** Give it as RunOptions.baseUrl, so that $execution.resumeUrl points here. */
	baseUrl: string;
	/** Registers a parked execution (status 'waiting') of `workflow`; replaces an earlier park of it. */
	park(result: RunResult, workflow: WorkflowJson): void;
	calls: WaitingCall[];
	close(): Promise<void>;
}

export async function startWaitingServer(options: {
	credentials: CredentialValues;
}): Promise<WaitingServer> {
	const parked = new Map<string, { result: RunResult; workflow: WorkflowJson; resumed: boolean }>();
	const calls: WaitingCall[] = [];
	let baseUrl = '';

	async function handle(
		req: http.IncomingMessage,
		res: http.ServerResponse,
		raw: Buffer,
	): Promise<void> {
		const url = new URL(req.url ?? '/', 'http://localhost');
		const match = /^\/webhook-waiting\/([^/]+)(?:\/[^/]+)?$/.exec(url.pathname);
		const executionId = match?.[1] ?? '';
		const entry = parked.get(executionId);
		const call: WaitingCall = { executionId, status: 0, answer: undefined };
		calls.push(call);
		recordAnswer(res, (status, answer) => {
			call.status = status;
			call.answer = answer;
		});
		const respond = (status: number, message: string) => {
			res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
			res.end(JSON.stringify({ message }));
		};
		if (req.method !== 'POST' || !entry) return respond(404, `Execution ${executionId} not found`);
		if (entry.resumed) return respond(409, `The execution "${executionId}" is running already.`);
		const runData = entry.result.run.data;
		const query = parseQuery(url.search);
		if (query.signature !== runData.resumeToken) return respond(401, 'Invalid token');

		const request = req as http.IncomingMessage & IDataObject;
		request.body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as IDataObject) : {};
		request.rawBody = raw;
		request.query = query;
		request.params = {};
		const json = JSON.parse(JSON.stringify(entry.workflow)) as WorkflowJson;
		const workflow = new Workflow({
			id: entry.result.workflow.id,
			name: json.name ?? 'parked workflow',
			nodes: json.nodes,
			connections: json.connections,
			active: true,
			nodeTypes,
			staticData: {},
			settings: { executionOrder: 'v1', ...(json.settings ?? {}) },
		});
		const stackNode = runData.executionData!.nodeExecutionStack[0].node;
		const node = workflow.getNode(stackNode.name) as INode;
		const additionalData = createAdditionalData({
			executionId,
			workflowId: String(workflow.id),
			baseUrl,
			credentials: options.credentials,
		});
		additionalData.httpRequest = request as never;
		additionalData.httpResponse = res as never;
		const type = nodeTypes.getByNameAndVersion(node.type, node.typeVersion) as INodeType;
		const description = type.description.webhooks!.find((w) => w.restartWebhook === true)!;
		const webhookData: IWebhookData = {
			httpMethod: 'POST',
			node: node.name,
			path: executionId,
			webhookDescription: description,
			workflowId: String(workflow.id),
			workflowExecuteAdditionalData: additionalData,
		};
		// n8n hands the saved run data (a copy per call: nothing the node changes is saved).
		const saved = JSON.parse(JSON.stringify(runData)) as typeof runData;
		const context = new WebhookContext(
			workflow,
			node,
			additionalData,
			'webhook',
			webhookData,
			[],
			saved,
		);
		let result: IWebhookResponseData;
		try {
			result = await type.webhook!.call(context);
		} catch (error) {
			return respond(500, (error as Error).message);
		}
		if (result.workflowData !== undefined) {
			entry.resumed = true;
			call.resumed = result.workflowData[0];
		}
		if (!res.writableEnded) respond(200, 'Workflow was started');
	}

	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			void handle(req, res, Buffer.concat(chunks)).catch((error: Error) => {
				if (!res.headersSent) {
					res.writeHead(500);
					res.end(error.message);
				}
			});
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
	return {
		baseUrl,
		park(result, workflow) {
			if (result.status !== 'waiting')
				throw new Error(`Waiting harness: execution is ${result.status}, not waiting`);
			parked.set(result.executionId, { result, workflow, resumed: false });
		},
		calls,
		async close() {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
