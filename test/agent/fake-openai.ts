// Test-only. A scripted OpenAI-compatible chat model on loopback, for n8n's OpenAI Chat Model
// node (credential URL pointed here). Each test gives it a script: what the model answers on
// each turn (tool calls or a final text). It serves GET /v1/models (the credential test and the
// model list) and POST /v1/chat/completions (not streamed), and records every request with
// the tools the agent offered, so tests can read the schemas the model saw and the tool results
// the agent sent back.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One OpenAI tool as the agent offers it (`tools[]` of a chat completion request). */
export interface OfferedTool {
	type: 'function';
	function: { name: string; description?: string; parameters?: JsonSchema };
}

export interface JsonSchema {
	type?: string | string[];
	description?: string;
	enum?: unknown[];
	properties?: Record<string, JsonSchema>;
	required?: string[];
	items?: JsonSchema;
	anyOf?: JsonSchema[];
	[key: string]: unknown;
}

export interface ChatMessage {
	role: 'system' | 'user' | 'assistant' | 'tool';
	content?: string | null | Array<{ type: string; text?: string }>;
	tool_calls?: Array<{
		id: string;
		type: 'function';
		function: { name: string; arguments: string };
	}>;
	tool_call_id?: string;
}

export interface ChatRequest {
	model: string;
	messages: ChatMessage[];
	tools?: OfferedTool[];
	stream?: boolean;
	[key: string]: unknown;
}

/** What the model answers on one turn. */
export type Turn =
	| { toolCalls: Array<{ name: string; args: Record<string, unknown> }> }
	| { content: string };

/**
 * A test's script: one entry per turn, in order. A function gets the request of that turn (with
 * the tool results so far) and returns the answer, so a final answer can quote what a tool
 * returned.
 */
export type Script = Array<Turn | ((request: ChatRequest) => Turn)>;

export interface RecordedRequest {
	path: string;
	method: string;
	authorization?: string;
	body?: ChatRequest;
	/** The turn's answer, once made. */
	answer?: Turn;
}

export interface FakeOpenAi {
	/** For the OpenAI credential's Base URL: `http://127.0.0.1:<port>/v1`. */
	url: string;
	apiKey: string;
	models: string[];
	requests: RecordedRequest[];
	/** Chat completion requests only, in order. */
	turns(): RecordedRequest[];
	/** Replaces the script, and forgets the turns played and the requests and problems so far. */
	script(script: Script): void;
	/** Errors the fake met (an unscripted turn, a wrong key); tests assert there are none. */
	problems: string[];
	close(): Promise<void>;
}

/** The tool results the agent sent back, in order: the `tool` messages of a request. */
export function toolResults(request: ChatRequest): Array<{ name?: string; content: string }> {
	const names = new Map<string, string>();
	for (const m of request.messages)
		for (const call of m.tool_calls ?? []) names.set(call.id, call.function.name);
	return request.messages
		.filter((m) => m.role === 'tool')
		.map((m) => ({ name: names.get(m.tool_call_id ?? ''), content: textOf(m.content) }));
}

export function textOf(content: ChatMessage['content']): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) return content.map((p) => p.text ?? '').join('');
	return '';
}

const readBody = (req: http.IncomingMessage) =>
	new Promise<string>((resolve, reject) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
		req.on('error', reject);
	});

export async function startFakeOpenAi(
	options: { apiKey?: string; models?: string[] } = {},
): Promise<FakeOpenAi> {
	const apiKey = options.apiKey ?? 'sk-fake-openai-test';
	const models = options.models ?? ['gpt-4o-mini'];
	const requests: RecordedRequest[] = [];
	const problems: string[] = [];
	let script: Script = [];
	let played = 0;
	let callSeq = 0;

	const send = (res: http.ServerResponse, status: number, body: unknown) => {
		res.writeHead(status, { 'content-type': 'application/json' });
		res.end(JSON.stringify(body));
	};

	function answer(request: ChatRequest): Turn {
		const step = script[played++];
		if (step === undefined) {
			const problem = `unscripted turn ${played}: the agent asked again after the script ended`;
			problems.push(problem);
			return { content: `(fake model: ${problem})` };
		}
		return typeof step === 'function' ? step(request) : step;
	}

	function completion(request: ChatRequest, turn: Turn) {
		const created = Math.floor(Date.now() / 1000);
		const id = `chatcmpl-fake-${played}`;
		const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
		const toolCalls =
			'toolCalls' in turn
				? turn.toolCalls.map((c) => ({
						id: `call_${++callSeq}`,
						type: 'function' as const,
						function: { name: c.name, arguments: JSON.stringify(c.args) },
					}))
				: undefined;
		const message = toolCalls
			? { role: 'assistant', content: null, tool_calls: toolCalls }
			: { role: 'assistant', content: (turn as { content: string }).content };
		const finish = toolCalls ? 'tool_calls' : 'stop';
		return { id, created, model: request.model, usage, toolCalls, message, finish };
	}

	const server = http.createServer(async (req, res) => {
		const path = (req.url ?? '').split('?')[0];
		const entry: RecordedRequest = {
			path,
			method: req.method ?? 'GET',
			authorization: req.headers.authorization,
		};
		requests.push(entry);
		try {
			const raw = await readBody(req);
			if (req.headers.authorization !== `Bearer ${apiKey}`) {
				problems.push(`${req.method} ${path}: wrong or missing API key`);
				return send(res, 401, {
					error: { message: 'Incorrect API key provided', type: 'invalid_request_error' },
				});
			}
			if (req.method === 'GET' && /\/v1\/models\/?$/.test(path)) {
				return send(res, 200, {
					object: 'list',
					data: models.map((id) => ({
						id,
						object: 'model',
						created: 1700000000,
						owned_by: 'fake',
					})),
				});
			}
			if (req.method === 'POST' && /\/v1\/chat\/completions$/.test(path)) {
				const body = JSON.parse(raw) as ChatRequest;
				entry.body = body;
				// The agent streams only behind a streaming Chat Trigger, which these tests do not use.
				if (body.stream) {
					problems.push(
						'a streamed chat completion was asked for: the fake answers plain ones only',
					);
					return send(res, 400, {
						error: {
							message: 'stream is not supported by the fake',
							type: 'invalid_request_error',
						},
					});
				}
				const turn = answer(body);
				entry.answer = turn;
				const c = completion(body, turn);
				return send(res, 200, {
					id: c.id,
					object: 'chat.completion',
					created: c.created,
					model: c.model,
					choices: [{ index: 0, message: c.message, logprobs: null, finish_reason: c.finish }],
					usage: c.usage,
				});
			}
			problems.push(`${req.method} ${path}: not served by the fake`);
			return send(res, 404, {
				error: { message: `${req.method} ${path} is not served`, type: 'invalid_request_error' },
			});
		} catch (error) {
			problems.push(`${req.method} ${path}: ${(error as Error).message}`);
			return send(res, 500, { error: { message: (error as Error).message } });
		}
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		apiKey,
		models,
		requests,
		problems,
		turns: () => requests.filter((r) => r.body !== undefined),
		script(next) {
			script = next;
			played = 0;
			requests.length = 0;
			problems.length = 0;
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
