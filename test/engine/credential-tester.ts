// The credential's declarative test, run the way n8n runs it when a user clicks "Test" (n8n's
// packages/cli/src/services/credentials-tester.service.ts, `testCredentials`): the test request
// becomes the routing of a temporary No-Op node, n8n-core's RoutingNode runs it through an
// ExecuteContext with the credential's `authenticate` applied, then the outcome is read:
// a thrown HTTP error → `responseCode` rules or the status text, a thrown network error → its
// code, an answer → the `responseSuccessBody` rules, else "Connection successful!". That last
// reading step lives in n8n's CLI, which is not a dependency: `outcome()` below restates it (the
// e2e layer runs n8n's own tester: test/e2e/credential-test.test.ts).
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

const TYPE = 'mediaGenerationApi';
const credential = new MediaGenerationApi();

export async function testCredential(
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
