// Test-only. n8n's REST API as its editor uses it (owner set-up, cookie, browser id) and its
// public API (executions), for the end-to-end tests that count what a started n8n ran.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { randomUUID } from 'node:crypto';

import type { ExecutionJson, N8nInstance } from './n8n';

const BROWSER_ID = 'mgen-e2e-browser';

export interface Owner {
	email: string;
	secret: string;
}

export const newOwner = (): Owner => ({ email: 'e2e@example.com', secret: `${randomUUID()}-Aa1` });

export async function rest(
	n8n: N8nInstance,
	path: string,
	init: { method?: string; body?: unknown; cookie?: string } = {},
) {
	const res = await fetch(`${n8n.baseUrl}/rest${path}`, {
		method: init.method ?? 'GET',
		headers: {
			'content-type': 'application/json',
			'browser-id': BROWSER_ID,
			...(init.cookie ? { cookie: init.cookie } : {}),
		},
		body: init.body === undefined ? undefined : JSON.stringify(init.body),
	});
	const text = await res.text();
	if (!res.ok)
		throw new Error(
			`${init.method ?? 'GET'} /rest${path}: HTTP ${res.status} ${text.slice(0, 500)}`,
		);
	return { res, json: JSON.parse(text) as { data: unknown } };
}

const cookieOf = (res: Response) =>
	(res.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');

/** Sets up the owner account and creates a public-API key with every scope the owner may have. */
export async function createApiKey(
	n8n: N8nInstance,
	owner: Owner,
): Promise<{ key: string; cookie: string }> {
	const { res } = await rest(n8n, '/owner/setup', {
		method: 'POST',
		body: { email: owner.email, firstName: 'End', lastName: 'ToEnd', password: owner.secret },
	});
	const cookie = cookieOf(res);
	if (!cookie.includes('n8n-auth=')) throw new Error('owner set-up returned no n8n-auth cookie');
	const scopes = (await rest(n8n, '/api-keys/scopes', { cookie })).json.data as string[];
	const created = (
		await rest(n8n, '/api-keys', {
			method: 'POST',
			cookie,
			body: { label: 'e2e', scopes, expiresAt: null },
		})
	).json.data as { rawApiKey?: string; apiKey?: string };
	const key = created.rawApiKey ?? created.apiKey;
	if (!key) throw new Error(`no key in the api-keys answer: ${Object.keys(created).join(', ')}`);
	return { key, cookie };
}

/**
 * Publishes (activates) workflows of a started n8n through the public API, one request each, as
 * a user's automation would: `n8n publish:workflow` would cost an n8n start-up per workflow (the
 * CLI's path, publish then `n8n start`, stays covered by hostile.test.ts).
 */
export async function activateWorkflows(n8n: N8nInstance, apiKey: string, ids: string[]) {
	for (const id of ids) {
		const res = await fetch(`${n8n.baseUrl}/api/v1/workflows/${id}/activate`, {
			method: 'POST',
			headers: { 'X-N8N-API-KEY': apiKey },
		});
		if (!res.ok)
			throw new Error(`activating ${id}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
	}
}

/** Logs the owner in again (after a restart, say); returns the auth cookie. */
export async function login(n8n: N8nInstance, owner: Owner): Promise<string> {
	const { res } = await rest(n8n, '/login', {
		method: 'POST',
		body: { emailOrLdapLoginId: owner.email, password: owner.secret },
	});
	return cookieOf(res);
}

export interface ExecutionSummary {
	id: string;
	finished: boolean;
	status: string;
	workflowId: string;
	data?: ExecutionJson['data'];
}

/**
 * A Retry of an execution whose node run n8n lost: it fails, and its error says the items were
 * NOT sent again (the lost-run rule of acceptedTasks.ts).
 */
export function expectLostRunError(execution: ExecutionSummary): void {
	expect(execution.status).toBe('error');
	const error = execution.data!.resultData.error as { message?: string; description?: string };
	expect(`${error.message}\n${error.description}`).toMatch(
		/n8n stopped while this node was running[\s\S]*NOT sent again/,
	);
}

export async function executionsOf(
	n8n: N8nInstance,
	apiKey: string,
	workflowId: string,
	includeData = true,
): Promise<ExecutionSummary[]> {
	const all: ExecutionSummary[] = [];
	let cursor: string | undefined;
	do {
		const url = new URL(`${n8n.baseUrl}/api/v1/executions`);
		url.searchParams.set('workflowId', workflowId);
		url.searchParams.set('includeData', String(includeData));
		url.searchParams.set('limit', '250');
		if (cursor) url.searchParams.set('cursor', cursor);
		const res = await fetch(url, { headers: { 'X-N8N-API-KEY': apiKey } });
		if (!res.ok)
			throw new Error(
				`GET /api/v1/executions: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`,
			);
		const page = (await res.json()) as { data: ExecutionSummary[]; nextCursor?: string | null };
		all.push(...page.data);
		cursor = page.nextCursor ?? undefined;
	} while (cursor);
	return all;
}

/**
 * POSTs JSON to a production webhook of a started n8n; a 404 within `retryMs` of the first try
 * means "not registered yet" (right after start-up or activation) and is tried again.
 */
export async function postWebhook(
	n8n: N8nInstance,
	pathname: string,
	body: unknown,
	retryMs = 30_000,
): Promise<{ status: number; text: string }> {
	const deadline = Date.now() + retryMs;
	for (;;) {
		const res = await fetch(`${n8n.baseUrl}/webhook/${pathname}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
		const text = await res.text();
		if (res.status !== 404 || Date.now() > deadline) return { status: res.status, text };
		await new Promise((r) => setTimeout(r, 500));
	}
}

/**
 * Polls the public API until `count` executions of the workflow have ended (without their data
 * while waiting, cheap for n8n), then reads those with their data. A failed read is tried again
 * until the deadline: n8n answers 503 for a moment when the machine is very busy.
 */
export async function endedExecutions(
	n8n: N8nInstance,
	apiKey: string,
	workflowId: string,
	count: number,
	timeoutMs = 60_000,
): Promise<ExecutionSummary[]> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		let list: ExecutionSummary[] = [];
		let failure: unknown;
		try {
			list = await executionsOf(n8n, apiKey, workflowId, false);
		} catch (error) {
			failure = error;
		}
		if (failure !== undefined && Date.now() > deadline) throw failure as Error;
		const ended = list.filter((e) => !['running', 'new', 'waiting'].includes(e.status));
		if (ended.length >= count) {
			const ids = new Set(ended.map((e) => e.id));
			return (await executionsOf(n8n, apiKey, workflowId)).filter((e) => ids.has(e.id));
		}
		if (Date.now() > deadline) {
			throw new Error(
				`${ended.length} of ${count} executions of ${workflowId} ended after ${timeoutMs} ms: ${JSON.stringify(list.map((e) => [e.id, e.status]))}`,
			);
		}
		await new Promise((r) => setTimeout(r, 250));
	}
}

/**
 * The editor's Retry of an execution (Executions list): the original workflow, or "with current
 * workflow" (`loadWorkflow`). Resolves with the new execution (mode `retry`) once it ended.
 */
export async function retryExecution(
	n8n: N8nInstance,
	owner: Owner,
	apiKey: string,
	executionId: string,
	workflowId: string,
	loadWorkflow = false,
): Promise<ExecutionSummary> {
	const known = new Set((await executionsOf(n8n, apiKey, workflowId)).map((e) => e.id));
	const cookie = await login(n8n, owner);
	const res = await fetch(`${n8n.baseUrl}/rest/executions/${executionId}/retry`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'browser-id': BROWSER_ID, cookie },
		body: JSON.stringify({ loadWorkflow }),
	});
	if (res.status !== 200)
		throw new Error(
			`POST /rest/executions/${executionId}/retry: HTTP ${res.status} ${await res.text()}`,
		);
	const all = await endedExecutions(n8n, apiKey, workflowId, known.size + 1, 120_000);
	const retried = all.find((e) => !known.has(e.id))!;
	if ((retried as { mode?: string }).mode !== 'retry')
		throw new Error(`execution ${retried.id} is not a Retry`);
	return retried;
}
