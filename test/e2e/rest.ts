// Test-only. n8n's internal REST API the way its editor calls it: a session cookie from the
// owner set-up, and the browser id n8n binds that cookie to.
import { randomBytes } from 'node:crypto';

import type { N8nInstance } from './n8n';

export interface RestSession {
	cookie: string;
	browserId: string;
}

/** One call to `<n8n>/rest<path>`; rejects on a non-2xx answer with its status and text. */
export async function rest<T = unknown>(
	n8n: N8nInstance,
	path: string,
	init: { method?: string; body?: unknown; session?: RestSession; browserId?: string } = {},
): Promise<{ res: Response; data: T }> {
	const res = await fetch(`${n8n.baseUrl}/rest${path}`, {
		method: init.method ?? 'GET',
		headers: {
			'content-type': 'application/json',
			'browser-id': init.session?.browserId ?? init.browserId ?? 'e2e-browser',
			...(init.session ? { cookie: init.session.cookie } : {}),
		},
		body: init.body === undefined ? undefined : JSON.stringify(init.body),
	});
	const text = await res.text();
	if (!res.ok)
		throw new Error(
			`${init.method ?? 'GET'} /rest${path}: HTTP ${res.status} ${text.slice(0, 500)}`,
		);
	return { res, data: (JSON.parse(text) as { data: T }).data };
}

/** Sets up the owner account of a fresh n8n (POST /rest/owner/setup) and keeps its session. */
export async function setupOwner(n8n: N8nInstance): Promise<RestSession> {
	const browserId = `e2e-${randomBytes(6).toString('hex')}`;
	const { res } = await rest(n8n, '/owner/setup', {
		method: 'POST',
		browserId,
		body: {
			email: 'owner@example.com',
			firstName: 'End',
			lastName: 'ToEnd',
			password: `E2e-${randomBytes(9).toString('base64url')}9`,
		},
	});
	const cookie = (res.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
	if (!cookie.includes('n8n-auth=')) throw new Error('n8n set no session cookie on owner set-up');
	return { cookie, browserId };
}
