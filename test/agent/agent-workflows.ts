// Test-only. Agent workflows for the agent layer: Chat Trigger → AI Agent 3.1, OpenAI Chat Model
// 1.3 (Chat Completions, its URL on the credential) and Media Generation tools, in the shape
// `n8n import:workflow` takes; and a chat message sent the way an embedded chat sends it.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CREDENTIAL_TYPE, PACKAGE_NAME, ROOT, type N8nInstance } from '../e2e/n8n';
import { CREDENTIAL, mediaNode, type WorkflowNode } from '../e2e/workflows';

export const TOOL_TYPE = `${PACKAGE_NAME}.mediaGenerationTool`;
export const OPENAI_CREDENTIAL = { id: 'mgenOpenAi00001', name: 'OpenAI (fake)' };
export const CHAT_TRIGGER = 'When chat message received';

type AnyNode = Omit<WorkflowNode, 'onError'> & Record<string, unknown>;

interface Workflow {
	id: string;
	name: string;
	nodes: AnyNode[];
	connections: Record<
		string,
		Record<string, Array<Array<{ node: string; type: string; index: number }>>>
	>;
	[key: string]: unknown;
}

/** The OpenAI credential pointed at the fake (n8n's OpenAI Chat Model hides its own Base URL). */
export function openAiCredentialImport(url: string, apiKey: string) {
	return { ...OPENAI_CREDENTIAL, type: 'openAiApi', data: { apiKey, url, header: false } };
}

/** A Media Generation tool node (the node as n8n derives it from `usableAsTool`). */
export const toolNode = (name: string, parameters: Record<string, unknown>): AnyNode => ({
	...mediaNode(name, parameters, { type: TOOL_TYPE, position: [400, 240] }),
});

/**
 * Makes a workflow reachable from the test as a user's embedded chat reaches it: the Chat
 * Trigger public, in webhook mode, answering with the agent's output; both credentials picked.
 */
export function prepare(wf: Workflow): Workflow & { webhookId: string } {
	const trigger = wf.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.chatTrigger');
	if (!trigger) throw new Error(`${wf.id}: no Chat Trigger`);
	trigger.webhookId ??= randomUUID();
	trigger.parameters = {
		...trigger.parameters,
		public: true,
		mode: 'webhook',
		options: { responseMode: 'lastNode' },
	};
	for (const node of wf.nodes) {
		const creds = node.credentials as Record<string, unknown> | undefined;
		if (creds?.[CREDENTIAL_TYPE]) creds[CREDENTIAL_TYPE] = CREDENTIAL;
		if (creds?.openAiApi) creds.openAiApi = OPENAI_CREDENTIAL;
	}
	return { ...wf, active: false, webhookId: trigger.webhookId as string };
}

/** examples/<file> as a user imports it, made reachable (see prepare). */
export function exampleAgentWorkflow(file: string, id: string) {
	const wf = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8')) as Workflow;
	return prepare({ ...wf, id });
}

/** The folder the examples write to as shipped: n8n's Docker image's `~/.n8n-files`. */
export const EXAMPLE_FOLDER = '/home/node/.n8n-files';

/**
 * examples/save-finished-videos.json as a user sets it up: our credential picked, its folder
 * pointed at `folder` (n8n 2.x writes only under N8N_RESTRICT_FILE_ACCESS_TO). Returns the
 * workflow and its trigger's Production URL path (what the user copies into Callback URL).
 */
export function exampleSaveWorkflow(id: string, folder: string) {
	const text = fs.readFileSync(path.join(ROOT, 'examples', 'save-finished-videos.json'), 'utf8');
	const wf = JSON.parse(text.split(EXAMPLE_FOLDER).join(folder)) as Workflow;
	const trigger = wf.nodes.find((n) => n.type === `${PACKAGE_NAME}.mediaGenerationTrigger`);
	if (!trigger?.webhookId)
		throw new Error('save-finished-videos.json: no Media Generation Trigger');
	for (const node of wf.nodes) {
		const creds = node.credentials as Record<string, unknown> | undefined;
		if (creds?.[CREDENTIAL_TYPE]) creds[CREDENTIAL_TYPE] = CREDENTIAL;
	}
	// The fetch of videos whose callback never came: "Fetch Now" becomes a production Webhook
	// that answers when the run ends; the schedule is left out (it fires on the clock, so a run
	// at a quarter past would be one the test did not start).
	const fetchNow = wf.nodes.find((n) => n.name === FETCH_NOW);
	if (!fetchNow) throw new Error(`save-finished-videos.json: no "${FETCH_NOW}" node`);
	const fetchPath = `fetch-${randomUUID()}`;
	Object.assign(fetchNow, {
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: {
			httpMethod: 'POST',
			path: fetchPath,
			responseMode: 'lastNode',
			responseData: 'allEntries',
			options: {},
		},
	});
	wf.nodes = wf.nodes.filter((n) => n.name !== FETCH_SCHEDULE);
	delete wf.connections[FETCH_SCHEDULE];
	return {
		workflow: { ...wf, id, active: false },
		productionPath: `webhook/${String(trigger.webhookId)}/media-generation`,
		fetchPath: `webhook/${fetchPath}`,
	};
}

/** The save example's trigger that fetches the videos whose callback never came, and its schedule. */
export const FETCH_NOW = 'Fetch Now';
export const FETCH_SCHEDULE = 'Every 15 Minutes';

/** The Data Table both examples share, with the columns the guide has the user create. */
export const AGENT_TABLE = 'agent_videos';
export const AGENT_TABLE_COLUMNS = [
	{ name: 'session', type: 'string' },
	{ name: 'user', type: 'string' },
	{ name: 'prompt', type: 'string' },
	{ name: 'task_id', type: 'string' },
	{ name: 'status', type: 'string' },
	{ name: 'asked_at', type: 'date' },
	{ name: 'video_file', type: 'string' },
	{ name: 'error', type: 'string' },
];

/**
 * The Chat Trigger made public with Authentication "n8n User Auth" and Include User in Output
 * on, as the guide has the user set it: only a signed-in n8n user gets an answer.
 */
export function withUserAuth<W extends Workflow>(wf: W): W {
	const trigger = wf.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.chatTrigger');
	if (!trigger) throw new Error(`${wf.id}: no Chat Trigger`);
	trigger.parameters = {
		...trigger.parameters,
		authentication: 'n8nUserAuth',
		includeUserInOutput: true,
	};
	return wf;
}

/** Puts `url` into the Callback URL of the workflow's Start Video tool, as the user pastes it. */
export function withStartVideoCallback<W extends Workflow>(wf: W, url: string): W {
	const start = wf.nodes.find((n) => n.name === 'Start Video');
	const parameters = start?.parameters as { options?: Record<string, unknown> } | undefined;
	if (!parameters?.options?.callbackUrl)
		throw new Error(`${wf.id}: Start Video has no Callback URL to replace`);
	parameters.options.callbackUrl = url;
	return wf;
}

/** The MCP Server Trigger's Bearer Auth credential of the MCP example. */
export const MCP_BEARER_CREDENTIAL = { id: 'mgenMcpBearer01', name: 'MCP bearer token (test)' };

export function mcpBearerCredentialImport(token: string) {
	return { ...MCP_BEARER_CREDENTIAL, type: 'httpBearerAuth', data: { token } };
}

/**
 * examples/<file> with an MCP Server Trigger, as a user imports it: our credential and the
 * trigger's Bearer Auth credential picked. Returns the workflow and the trigger's path.
 */
export function exampleMcpWorkflow(file: string, id: string) {
	const wf = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8')) as Workflow;
	const trigger = wf.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.mcpTrigger');
	if (!trigger) throw new Error(`${file}: no MCP Server Trigger`);
	for (const node of wf.nodes) {
		const creds = node.credentials as Record<string, unknown> | undefined;
		if (creds?.[CREDENTIAL_TYPE]) creds[CREDENTIAL_TYPE] = CREDENTIAL;
		if (creds?.httpBearerAuth) creds.httpBearerAuth = MCP_BEARER_CREDENTIAL;
	}
	const mcpPath = String((trigger.parameters as Record<string, unknown>).path);
	return { workflow: { ...wf, id, active: false }, mcpPath };
}

/** Chat Trigger → AI Agent with the OpenAI Chat Model and the given tools. */
export function agentWorkflow(
	id: string,
	tools: AnyNode[],
	systemMessage = 'You make media with the tools.',
) {
	const nodes: AnyNode[] = [
		{
			id: 'n-chat',
			name: CHAT_TRIGGER,
			type: '@n8n/n8n-nodes-langchain.chatTrigger',
			typeVersion: 1.4,
			position: [0, 0],
			webhookId: randomUUID(),
			parameters: {},
		},
		{
			id: 'n-agent',
			name: 'AI Agent',
			type: '@n8n/n8n-nodes-langchain.agent',
			typeVersion: 3.1,
			position: [260, 0],
			parameters: { options: { systemMessage } },
		},
		{
			id: 'n-model',
			name: 'OpenAI Chat Model',
			type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
			typeVersion: 1.3,
			position: [120, 240],
			parameters: {
				model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' },
				responsesApiEnabled: false,
				options: {},
			},
			credentials: { openAiApi: OPENAI_CREDENTIAL },
		},
		...tools,
	];
	const connections: Workflow['connections'] = {
		[CHAT_TRIGGER]: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
		'OpenAI Chat Model': {
			ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]],
		},
	};
	for (const t of tools)
		connections[t.name] = { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] };
	return prepare({
		id,
		name: `agent ${id}`,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		pinData: {},
	});
}

/** The tool name n8n gives the model for a node name (n8n-workflow's nodeNameToToolName). */
export const toolName = (nodeName: string) => nodeName.replace(/[^a-zA-Z0-9_-]+/g, '_');

/**
 * Sends one chat message to a published workflow's Chat Trigger; resolves with the agent's
 * answer. n8n registers published workflows' webhooks shortly after it reports ready: an answer
 * "not registered" (404, nothing ran) is asked again, for up to 30 s.
 */
export async function chat(
	n8n: N8nInstance,
	webhookId: string,
	message: string,
	sessionId = randomUUID(),
	headers: Record<string, string> = {},
) {
	const deadline = Date.now() + 30_000;
	for (;;) {
		const res = await fetch(`${n8n.baseUrl}/webhook/${webhookId}/chat`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', ...headers },
			body: JSON.stringify({ action: 'sendMessage', sessionId, chatInput: message }),
		});
		const text = await res.text();
		if (res.status === 404 && text.includes('not registered') && Date.now() < deadline) {
			await new Promise((r) => setTimeout(r, 250));
			continue;
		}
		if (!res.ok) throw new Error(`chat ${webhookId}: HTTP ${res.status} ${text.slice(0, 500)}`);
		return JSON.parse(text) as { output?: string } & Record<string, unknown>;
	}
}
