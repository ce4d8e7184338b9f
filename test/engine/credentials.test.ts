// The credential's declarative test against the simulator, through n8n-core's RoutingNode the
// way n8n's credential tester runs it (see ./credential-tester.ts).
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { runWorkflow } from '../harness';
import { startSimulator, type Simulator } from '../simulator';
import { mediaWorkflow } from './support';
import { testCredential } from './credential-tester';
import { fakeNetwork, type FakeNetwork } from './fake-network';
import { BASE_URL_TABLE } from '../fixtures/base-url-table';

/** A host that is not the service: answers every path with `status` and an HTML page. */
async function htmlServer(status: number): Promise<{ url: string; close(): Promise<void> }> {
	const server = http.createServer((_, res) => {
		res.writeHead(status, { 'Content-Type': 'text/html' });
		res.end('<!doctype html><html><body>Welcome</body></html>');
	});
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		close: () => new Promise<void>((r) => server.close(() => r())),
	};
}

let sim: Simulator;
beforeAll(async () => {
	sim = await startSimulator();
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

const REJECTED = /rejected the API key/;
/** A key the simulator does not accept, recognisable if it leaked into a message. */
const WRONG_KEY = ['sk', 'wrong', '0123456789'].join('-');

describe('credential test against the simulator, through n8n-core RoutingNode', () => {
	it('a good key → OK, probing the status endpoint with the Bearer key and creating nothing', async () => {
		const result = await testCredential({ apiKey: sim.apiKey, baseUrl: sim.baseUrl });
		expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(sim.requests).toHaveLength(1);
		expect(sim.requests[0]).toMatchObject({
			origin: 'api',
			method: 'GET',
			path: '/api/generate/status/n8n-credential-test',
			status: 404,
		});
		expect(sim.requests[0].headers.authorization).toBe(`Bearer ${sim.apiKey}`);
		expect(sim.tasks()).toHaveLength(0);
	});

	it.each([
		['a trailing slash', (u: string) => `${u}/`],
		['several trailing slashes', (u: string) => `${u}///`],
		['surrounding spaces', (u: string) => `  ${u}  `],
		['spaces and a slash', (u: string) => ` ${u}/ `],
	])('a base URL with %s → OK, and the request path has no double slash', async (_, shape) => {
		const result = await testCredential({ apiKey: sim.apiKey, baseUrl: shape(sim.baseUrl) });
		expect(result.status).toBe('OK');
		expect(sim.requests[0].path).toBe('/api/generate/status/n8n-credential-test');
	});

	it('a key pasted with surrounding spaces still authenticates', async () => {
		expect(
			(await testCredential({ apiKey: `  ${sim.apiKey}\n`, baseUrl: sim.baseUrl })).status,
		).toBe('OK');
		expect(sim.requests[0].headers.authorization).toBe(`Bearer ${sim.apiKey}`);
	});

	it('a wrong key → the rejected-key message, which does not contain the key', async () => {
		const result = await testCredential({ apiKey: WRONG_KEY, baseUrl: sim.baseUrl });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(REJECTED);
		expect(result.message).not.toContain('sk-wrong');
		expect(sim.requests[0].status).toBe(401);
	});

	it('an empty key → the rejected-key message', async () => {
		const result = await testCredential({ apiKey: '', baseUrl: sim.baseUrl });
		expect(result).toMatchObject({ status: 'Error', message: expect.stringMatching(REJECTED) });
	});

	it('a service that answers a bad key with 403 → the rejected-key message', async () => {
		const s403 = await startSimulator({ badKeyStatus: 403 });
		try {
			expect((await testCredential({ apiKey: 'nope', baseUrl: s403.baseUrl })).message).toMatch(
				REJECTED,
			);
			expect((await testCredential({ apiKey: s403.apiKey, baseUrl: s403.baseUrl })).status).toBe(
				'OK',
			);
		} finally {
			await s403.close();
		}
	});

	it.each(['400', 'envelope'] as const)(
		'a good key is OK whether an unknown task comes back as 404, or as %s',
		async (style) => {
			const other = await startSimulator({ unknownTaskStyle: style });
			try {
				expect(await testCredential({ apiKey: other.apiKey, baseUrl: other.baseUrl })).toEqual({
					status: 'OK',
					message: 'Connection successful!',
				});
				expect(other.requests[0].status).toBe(style === '400' ? 400 : 200);
			} finally {
				await other.close();
			}
		},
	);

	it('an unreachable base URL → the network error, not a key message', async () => {
		const closed = await startSimulator();
		const url = closed.baseUrl;
		await closed.close();
		const result = await testCredential({ apiKey: 'anything', baseUrl: url });
		expect(result).toEqual({ status: 'Error', message: 'ECONNREFUSED' });
	});

	it('a base URL without http(s):// → an error about the URL, not about the key', async () => {
		const result = await testCredential({
			apiKey: sim.apiKey,
			baseUrl: sim.baseUrl.replace('http://', ''),
		});
		expect(result).toEqual({ status: 'Error', message: 'Invalid URL' });
		expect(sim.requests).toHaveLength(0);
	});

	it.each(['localhost', '127.0.0.1'])(
		'http:// to this machine (%s) is tested as usual',
		async (host) => {
			const url = new URL(sim.baseUrl);
			url.hostname = host;
			const result = await testCredential({ apiKey: sim.apiKey, baseUrl: url.origin });
			expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
			expect(sim.requests).toHaveLength(1);
		},
	);

	it('an unknown host name → the DNS error, not a key message', async () => {
		const result = await testCredential({
			apiKey: 'anything',
			baseUrl: 'https://media-generation.invalid',
		});
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/^(ENOTFOUND|EAI_AGAIN)$/);
	});

	it.each([404, 200])(
		'a base URL that is some other web server (HTML, HTTP %i) → the wrong-base-URL message',
		async (status) => {
			const other = await htmlServer(status);
			try {
				const result = await testCredential({ apiKey: sim.apiKey, baseUrl: other.url });
				expect(result.status).toBe('Error');
				expect(result.message).toMatch(/Base URL answered, but not like this service/);
				expect(result.message).not.toMatch(REJECTED);
			} finally {
				await other.close();
			}
		},
	);

	it('a server fault or rate limit during the test is reported as such, not as a bad key', async () => {
		sim.faults.add({ endpoint: 'status', kind: '503', times: 1 });
		let result = await testCredential({ apiKey: sim.apiKey, baseUrl: sim.baseUrl });
		expect(result).toMatchObject({
			status: 'Error',
			message: expect.stringMatching(/server error \(code 503\)/),
		});
		sim.faults.add({ endpoint: 'status', kind: '429', times: 1 });
		result = await testCredential({ apiKey: sim.apiKey, baseUrl: sim.baseUrl });
		expect(result).toMatchObject({
			status: 'Error',
			message: expect.stringMatching(/rate limiting/),
		});
		expect((await testCredential({ apiKey: sim.apiKey, baseUrl: sim.baseUrl })).status).toBe('OK');
	});
});

describe('the nodes with a Base URL of http:// to another host', () => {
	it('refuse before any request, naming the rule and the fix (the key never travels in clear text)', async () => {
		// The simulator, reached by a name outside the local list: a request sent anyway is seen.
		const baseUrl = `http://[::ffff:127.0.0.1]:${new URL(sim.baseUrl).port}`;
		const result = await runWorkflow(
			mediaWorkflow({ resource: 'task', operation: 'getStatus', taskId: 'task_1234567890' }),
			{ credentials: { mediaGenerationApi: { apiKey: sim.apiKey, baseUrl } } },
		);
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(
			/Base URL http:\/\/\[::ffff:7f00:1\]:\d+ uses http:\/\/ for a host that is not this machine.*nothing was sent\. Use https:\/\//,
		);
		expect(sim.requests).toHaveLength(0);
	});

	it('refuse a name that only starts like a loopback address (127.0.0.1.example.invalid), as the credential test does', async () => {
		const result = await runWorkflow(
			mediaWorkflow({ resource: 'task', operation: 'getStatus', taskId: 'task_1234567890' }),
			{
				credentials: {
					mediaGenerationApi: { apiKey: sim.apiKey, baseUrl: 'http://127.0.0.1.example.invalid' },
				},
			},
		);
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(
			/uses http:\/\/ for a host that is not this machine.*nothing was sent/,
		);
	});
});

describe("the credential's Test applies the nodes' http:// rule: one table (issue 28, finding 2)", () => {
	// A network in which every name and address of the table reaches the simulator, on the port
	// the URL names or 80: a request the Test sends anyway is seen, with the key. A refused row
	// therefore proves that the rule held it back: the Test then asks a reserved name
	// (http-refused-use-https.invalid), which is the DNS error below, and nothing arrives.
	const PUBLIC = '93.184.215.14';
	let network: FakeNetwork;
	beforeAll(() => {
		const simPort = Number(new URL(sim.baseUrl).port);
		network = fakeNetwork(
			{
				'collector.example': () => PUBLIC,
				'127.0.0.1.collector.example': () => PUBLIC,
				'localhost.collector.example': () => PUBLIC,
				'api.localhost': () => '127.0.0.1',
			},
			(host, port) =>
				[PUBLIC, '::1', '127.1.2.3'].includes(host)
					? { host: '127.0.0.1', port: port === 80 ? simPort : port }
					: undefined,
		);
	});
	afterAll(() => network.restore());

	it.each(BASE_URL_TABLE.filter(([url]) => !/^https:/i.test(url.trim())))(
		'%s → %s',
		async (template, verdict) => {
			const baseUrl = template.replace('{port}', new URL(sim.baseUrl).port);
			const result = await testCredential({ apiKey: sim.apiKey, baseUrl });
			if (verdict === 'refused') {
				expect(result).toEqual({
					status: 'Error',
					message: expect.stringMatching(/^(ENOTFOUND|EAI_AGAIN)$/),
				});
				expect(sim.requests).toHaveLength(0);
			} else {
				expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
				expect(sim.requests).toHaveLength(1);
			}
		},
	);
});
