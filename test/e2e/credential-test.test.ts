// The credential's Test button, through n8n's REAL credential tester: a started n8n with the
// package installed as a community package, its owner set up (POST /rest/owner/setup), a stored
// Media Generation credential, and n8n's own endpoint the editor calls when a user clicks "Test"
// (POST /rest/credentials/test, CredentialsController → CredentialsTester). Each case sends the
// values a user would type; the answer is what the user would read.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { startSimulator, type Simulator } from '../simulator';
import { startKeyCollector, startOrigin, startRedirector, type Origin } from '../simulator/origins';
import { CREDENTIAL_TYPE, N8nInstance, freePort, removeEmptyRunFolder } from './n8n';
import { rest, setupOwner, type RestSession } from './rest';

jest.setTimeout(240_000);

let sim: Simulator;
let collector: Origin;
let redirector: Origin;
let html: Origin;
let n8n: N8nInstance;
let session: RestSession;
let credentialId: string;

interface TestResult {
	status: 'OK' | 'Error';
	message: string;
}

/** Clicks "Test" with these values, as the editor does for an open credential. */
async function clickTest(data: { apiKey: string; baseUrl: string }): Promise<TestResult> {
	const { data: result } = await rest<TestResult>(n8n, '/credentials/test', {
		method: 'POST',
		session,
		body: {
			credentials: { id: credentialId, name: 'Media Generation', type: CREDENTIAL_TYPE, data },
		},
	});
	return result;
}

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-cred-${process.pid}-key` });
	collector = await startKeyCollector();
	redirector = await startRedirector(collector.url, 302);
	html = await startOrigin(() => ({
		status: 200,
		headers: { 'Content-Type': 'text/html; charset=utf-8' },
		body: '<!doctype html><html><head><title>Welcome</title></head><body>It works!</body></html>',
	}));
	n8n = await N8nInstance.create('credential-test');
	await n8n.start();
	session = await setupOwner(n8n);
	const { data } = await rest<{ id: string }>(n8n, '/credentials', {
		method: 'POST',
		session,
		body: {
			name: 'Media Generation',
			type: CREDENTIAL_TYPE,
			data: { apiKey: sim.apiKey, baseUrl: sim.baseUrl },
		},
	});
	credentialId = data.id;
});

afterEach(() => sim.reset());

afterAll(async () => {
	await n8n?.dispose();
	await Promise.all([sim, collector, redirector, html].map((s) => s?.close()));
	removeEmptyRunFolder();
});

test('the right key: "Connection successful", one status read with the key, nothing created', () =>
	n8n.explain(async () => {
		const result = await clickTest({ apiKey: sim.apiKey, baseUrl: `${sim.baseUrl}/` });
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(sim.requests).toHaveLength(1);
		expect(sim.requests[0]).toMatchObject({
			method: 'GET',
			path: '/api/generate/status/n8n-credential-test',
		});
		expect(sim.requests[0].headers.authorization).toBe(`Bearer ${sim.apiKey}`);
		expect(sim.tasks()).toHaveLength(0);
	}));

test('a wrong key: the rejected-key message, without the key', () =>
	n8n.explain(async () => {
		const wrong = ['wrong', 'key', String(process.pid)].join('-');
		const result = await clickTest({ apiKey: wrong, baseUrl: sim.baseUrl });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/rejected the API key/);
		expect(result.message).not.toContain(wrong);
		expect(sim.requests[0].status).toBe(401);
	}));

test('an unreachable host: the network error, not a key message', () =>
	n8n.explain(async () => {
		const port = await freePort();
		const result = await clickTest({ apiKey: sim.apiKey, baseUrl: `http://127.0.0.1:${port}` });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/ECONNREFUSED/);
		expect(result.message).not.toMatch(/rejected the API key/);
	}));

// n8n 2.41.1 shows these two network cases as bare codes and offers no honest way for a package
// to word them (docs/credentials.md, "Why two rows are bare codes"). These cases pin what users
// read today, so a change in n8n shows up here, and that nothing is sent without a scheme.
test("a Base URL without https://: n8n's bare ERR_INVALID_URL, and nothing is sent", () =>
	n8n.explain(async () => {
		for (const baseUrl of [sim.baseUrl.replace(/^https?:\/\//, ''), 'api.example.invalid']) {
			const result = await clickTest({ apiKey: sim.apiKey, baseUrl });
			expect(result).toEqual({ status: 'Error', message: 'ERR_INVALID_URL' });
		}
		expect(sim.requests).toHaveLength(0);
	}));

test('http:// to a host outside the local list: refused, the key sent nowhere (the simulator, reached by that name, sees nothing)', () =>
	n8n.explain(async () => {
		const result = await clickTest({
			apiKey: sim.apiKey,
			baseUrl: `http://[::ffff:127.0.0.1]:${new URL(sim.baseUrl).port}`,
		});
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/ENOTFOUND|EAI_AGAIN/),
		});
		expect(sim.requests).toHaveLength(0);
	}));

test('a host that redirects to another origin: not followed, and the other origin never gets the key', () =>
	n8n.explain(async () => {
		const result = await clickTest({ apiKey: sim.apiKey, baseUrl: redirector.url });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/not like this service/);
		expect(result.message).toMatch(/Redirects are not followed/);
		// The Base URL itself was asked (with the key: it is the address the user gave) …
		expect(redirector.requests).toHaveLength(1);
		expect(redirector.requests[0].headers.authorization).toBe(`Bearer ${sim.apiKey}`);
		// … the origin it pointed to was not.
		expect(collector.requests).toHaveLength(0);
		expect(collector.sawKey(sim.apiKey)).toBe(false);
	}));

test('an HTML page: the wrong-Base-URL message', () =>
	n8n.explain(async () => {
		const result = await clickTest({ apiKey: sim.apiKey, baseUrl: html.url });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/Base URL answered, but not like this service/);
		expect(result.message).not.toMatch(/rejected the API key/);
		expect(html.requests).toHaveLength(1);
	}));
