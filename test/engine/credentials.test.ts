// The credential's declarative test, run the way n8n runs it when a user clicks "Test" (n8n's
// packages/cli/src/services/credentials-tester.service.ts, `testCredentials`): the test request
// becomes the routing of a temporary No-Op node, n8n-core's RoutingNode runs it through an
// ExecuteContext with the credential's `authenticate` applied, then the outcome is read:
// a thrown HTTP error → `responseCode` rules or the status text, a thrown network error → its
// code, an answer → the `responseSuccessBody` rules, else "Connection successful!". That last
// reading step lives in n8n's CLI, which is not a dependency: `outcome()` below restates it.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { ExecuteContext, RoutingNode } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialsDecrypted,
	INode,
	INodeCredentialTestResult,
	INodeExecutionData,
	INodeType,
	INodeTypes,
} from 'n8n-workflow';
import { NodeHelpers, Workflow } from 'n8n-workflow';

import { MediaGenerationApi } from '../../credentials/MediaGenerationApi.credentials';
import { createAdditionalData } from '../harness';
import { startSimulator, type Simulator } from '../simulator';

const TYPE = 'mediaGenerationApi';
const credential = new MediaGenerationApi();

async function testCredential(
	data: ICredentialDataDecryptedObject,
): Promise<INodeCredentialTestResult> {
	const testRequest = credential.test as ICredentialTestRequest;
	const nodeType: INodeType = {
		description: {
			displayName: 'Temp',
			name: 'n8n-nodes-base.noOp',
			group: ['transform'],
			version: 1,
			description: '',
			defaults: { name: 'Temp' },
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: TYPE, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: testRequest.request },
					default: '',
				},
			],
		},
	};
	const node: INode = {
		id: 'temp',
		name: 'Temp-Node',
		type: nodeType.description.name,
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: { [TYPE]: { id: 'c1', name: 'Media Generation API' } },
	};
	const nodeTypes: INodeTypes = {
		getByName: () => nodeType,
		getByNameAndVersion: () => NodeHelpers.getVersionedNodeType(nodeType, 1) as INodeType,
		getKnownTypes: () => ({}),
	};
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	const additionalData = createAdditionalData({
		baseUrl: 'http://127.0.0.1:5678/',
		credentials: { [TYPE]: data },
		executionId: 'credential-test',
		workflowId: 'credential-test',
	} as Parameters<typeof createAdditionalData>[0]);
	const context = new ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		{ resultData: { runData: {} } } as never,
		0,
		[],
		{ main: [[{ json: {} }]] },
		{ node, data: {}, source: null },
		[],
	);
	const decrypted: ICredentialsDecrypted = {
		id: 'c1',
		name: 'Media Generation API',
		type: TYPE,
		data,
	};
	let response: INodeExecutionData[][] | null | undefined;
	try {
		response = await new RoutingNode(context, nodeType, decrypted).runNode();
	} catch (error) {
		return outcome(testRequest, { error: error as ThrownByN8n });
	}
	return outcome(testRequest, { body: response![0][0].json });
}

/** lodash `get` on a dotted path, as n8n uses for `responseSuccessBody` keys. */
const get = (obj: unknown, key: string): unknown =>
	key
		.split('.')
		.reduce<unknown>(
			(o, k) =>
				o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined,
			obj,
		);

/** What httpRequestWithAuthentication throws: a NodeApiError whose cause is the axios error. */
interface ThrownByN8n {
	message?: unknown;
	cause?: { response?: { status: number; statusText?: string }; code?: string };
}

/** n8n's reading of the result (credentials-tester.service.ts), restated. */
function outcome(
	testRequest: ICredentialTestRequest,
	r: { error?: ThrownByN8n; body?: unknown },
): INodeCredentialTestResult {
	const rules = testRequest.rules ?? [];
	if (r.error) {
		const e = r.error;
		if (e.cause?.response) {
			for (const rule of rules)
				if (rule.type === 'responseCode' && rule.properties.value === e.cause.response.status)
					return { status: 'Error', message: rule.properties.message };
			const { status, statusText } = e.cause.response;
			if (status < 199 || status > 299)
				return { status: 'Error', message: statusText || `Received HTTP status code: ${status}` };
		} else if (e.cause?.code) {
			return { status: 'Error', message: e.cause.code };
		}
		return { status: 'Error', message: String(e.message) };
	}
	for (const rule of rules)
		if (
			rule.type === 'responseSuccessBody' &&
			get(r.body, rule.properties.key) === rule.properties.value
		)
			return { status: 'Error', message: rule.properties.message };
	return { status: 'OK', message: 'Connection successful!' };
}

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

	it('an unknown host name → the DNS error, not a key message', async () => {
		const result = await testCredential({
			apiKey: 'anything',
			baseUrl: 'http://media-generation.invalid',
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
