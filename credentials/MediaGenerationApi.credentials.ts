import type {
	IAuthenticateGeneric,
	IAuthenticateRuleResponseSuccessBody,
	ICredentialTestRequest,
	ICredentialType,
	Icon,
	INodeProperties,
} from 'n8n-workflow';

import {
	BASE_URL_SENDABLE_EXPRESSION,
	USED_BASE_URL_EXPRESSION,
} from '../nodes/shared/transport/baseUrlRule';

// Task id of the credential test's probe. The service has no account endpoint, so the test asks
// for the status of a task that cannot exist: a good key then gets "task not found", a bad key
// an authentication error. No task is created and nothing is charged.
const PROBE_TASK_ID = 'n8n-credential-test';

const rejectedKey =
	'The service rejected the API key. Check that it is copied completely from the service console and has not been revoked.';

const rule = (
	key: string,
	value: unknown,
	message: string,
): IAuthenticateRuleResponseSuccessBody => ({
	type: 'responseSuccessBody',
	properties: { key, value, message },
});

export class MediaGenerationApi implements ICredentialType {
	name = 'mediaGenerationApi';

	displayName = 'Media Generation API';

	icon: Icon = {
		light: 'file:../nodes/MediaGeneration/mediaGeneration.svg',
		dark: 'file:../nodes/MediaGeneration/mediaGeneration.dark.svg',
	};

	// A page without #anchor: n8n appends ?utm_… to this address, after any anchor.
	documentationUrl =
		'https://github.com/n8n-nodes-media-generation/n8n-nodes-media-generation/blob/main/docs/credentials.md';

	properties: INodeProperties[] = [
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			description: 'The key created in the service console. It is shown only once there.',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'https://api.example.com',
			description:
				'Root address of the service, starting with https://, e.g. https://api.example.com, without /api/…. http:// only for a service on this machine (localhost, 127.x.x.x, ::1): for any other host, or any other text, it is refused, as the key would travel unencrypted (the Test then fails with ENOTFOUND). Trailing slashes and spaces are ignored.',
		},
		{
			displayName: 'Allow Private Network File Hosts',
			name: 'allowPrivateFileHosts',
			type: 'boolean',
			default: false,
			description:
				'Whether result files and reference images may be fetched from private, loopback or link-local addresses (10.x, 192.168.x, 127.x, 169.254.x, fc00::/7, …). Off: such addresses are refused, names after DNS resolution, and the node connects to the address it checked (on n8n 2.14 the address is checked once connected and the answer dropped unread). Turn on only when the file host really is on your own network.',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{String($credentials.apiKey).trim()}}',
			},
		},
	};

	// n8n runs this request and, as HTTP errors are not thrown here, checks the rules below on
	// the answer's JSON body, first match wins; no match means the key works. Unreachable hosts
	// are reported by n8n with the network error code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT…).
	// The error body's shape is not documented: `code` is the envelope the service uses
	// everywhere, the other keys are the common framework shapes of a 401.
	test: ICredentialTestRequest = {
		request: {
			// The one rule of the nodes (nodes/shared/transport/baseUrlRule.ts), decided on the very
			// text sent (trimmed as it is sent, read as a URL parser reads it): anything else than the
			// allow-list that would be http:// (to another machine, "ht\ttp://…", "\u00A0http://…")
			// could send the key in clear text: the test then asks a reserved name that never
			// resolves (RFC 2606), so nothing is sent and it fails.
			baseURL: `={{ ${BASE_URL_SENDABLE_EXPRESSION} ? ${USED_BASE_URL_EXPRESSION} : "http://http-refused-use-https.invalid" }}`,
			url: `/api/generate/status/${PROBE_TASK_ID}`,
			method: 'GET',
			ignoreHttpStatusErrors: true,
			// n8n's credential tester copies every key of this request into the request it sends
			// (RoutingNode), so these hold there too. A redirect is not followed: its answer has
			// no "code" and gets the Base URL message below. And were one followed, the key would
			// not go along to another origin (n8n's default is to send it).
			disableFollowRedirect: true,
			sendCredentialsOnCrossOriginRedirect: false,
		},
		rules: [
			rule('code', 401, rejectedKey),
			rule('code', 403, rejectedKey),
			rule('statusCode', 401, rejectedKey),
			rule('statusCode', 403, rejectedKey),
			rule('status', 401, rejectedKey),
			rule('status', 403, rejectedKey),
			rule(
				'code',
				429,
				'The service is rate limiting requests right now, so the key could not be checked. Try again in a moment.',
			),
			...[500, 502, 503, 504].map((code) =>
				rule(
					'code',
					code,
					`The service answered with a server error (code ${code}), so the key could not be checked. Try again later.`,
				),
			),
			rule(
				'code',
				undefined,
				'The Base URL answered, but not like this service (no "code" in its reply to /api/generate/status). Check the Base URL: it is the root address of the service, without /api/…. Redirects are not followed (so the API key never reaches another address): if the address redirects, for example from http:// to https://, enter the address it leads to.',
			),
		],
	};
}
