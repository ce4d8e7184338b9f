// n8n's own SSRF protection (N8N_SSRF_PROTECTION_ENABLED=true) applies to this package's
// requests too: n8n-core's request helper and the lookup getSecureEgressFilter hands to nodes
// check every address against n8n's ranges. This runs the real node in n8n-core's engine with
// that protection on, configured as an administrator would (N8N_SSRF_ALLOWED_IP_RANGES for the
// service on this machine, N8N_SSRF_ALLOWED_HOSTNAMES for its file host, a blocked name), and
// checks what a user sees when n8n blocks a request: that n8n blocked it and what to set, not
// "could not be resolved" nor a lost submission. DNS is real, but for one name (see below).
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @typescript-eslint/no-require-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); require() loads n8n-core's own copies of @n8n/di and @n8n/config */
import * as path from 'node:path';

import type { Container as ContainerType } from '@n8n/di';

import { run, imageGenerateParams, mediaWorkflow, NODE, useSimulator } from './support';

// The name of a file host on an internal network, as its DNS answers it.
const INTERNAL_NAME = 'files.internal.example';
const INTERNAL_ADDRESS = '10.20.30.40';
// A name on n8n's deny-list (N8N_SSRF_BLOCKED_HOSTNAMES): blocked before any lookup.
const BLOCKED_NAME = 'blocked.example';

const sim = useSimulator();
jest.setTimeout(60_000);

const dns = require('node:dns') as typeof import('node:dns');

beforeAll(() => {
	// n8n-core's own copies (the top-level ones are other versions, with another container).
	const core = path.dirname(require.resolve('n8n-core'));
	const { Container } = require(require.resolve('@n8n/di', { paths: [core] })) as {
		Container: typeof ContainerType;
	};
	const { SsrfProtectionConfig } = require(require.resolve('@n8n/config', { paths: [core] })) as {
		SsrfProtectionConfig: new () => {
			enabled: boolean;
			allowedIpRanges: string[];
			allowedHostnames: string[];
			blockedHostnames: string[];
		};
	};
	// What the environment variables set, before n8n's SSRF service is first built.
	Object.assign(Container.get(SsrfProtectionConfig), {
		enabled: true,
		allowedIpRanges: ['127.0.0.1/32'],
		allowedHostnames: ['localhost'],
		blockedHostnames: [BLOCKED_NAME],
	});
	// n8n's resolver (dns.promises.lookup) answers an internal address for one name.
	const original = dns.promises.lookup.bind(dns.promises);
	jest.spyOn(dns.promises, 'lookup').mockImplementation((async (host: string, options: object) => {
		if (host !== INTERNAL_NAME) return await original(host, options as never);
		const all = (options as { all?: boolean }).all === true;
		return all
			? [{ address: INTERNAL_ADDRESS, family: 4 }]
			: { address: INTERNAL_ADDRESS, family: 4 };
	}) as never);
});
afterAll(() => jest.restoreAllMocks());

const credentials = (allowPrivateFileHosts: boolean, baseUrl = sim().baseUrl) => ({
	mediaGenerationApi: { apiKey: sim().apiKey, baseUrl, allowPrivateFileHosts },
});

/** Video → Generate with the reference-image pre-check on one URL (nothing is submitted if it fails). */
const preChecked = (url: string) =>
	mediaWorkflow({
		resource: 'video',
		operation: 'generate',
		model: 'vidmodel-2.0-fast/image-to-video',
		prompt: 'move',
		startFrameUrl: url,
		waitForCompletion: false,
		options: { checkReferenceImages: true },
	});

const BLOCKED = /blocked by n8n's SSRF protection \(N8N_SSRF_PROTECTION_ENABLED is on\)/;
const WHAT_TO_SET =
	/N8N_SSRF_ALLOWED_HOSTNAMES \(host names\) or N8N_SSRF_ALLOWED_IP_RANGES \(addresses\)/;

test('allowed by the administrator (the service by address, its file host by name): Generate submits, waits and downloads as usual', async () => {
	const result = await run(sim(), mediaWorkflow(imageGenerateParams(sim(), 'a red fox')), {
		credentials: credentials(true),
	});
	expect(result.error).toBeUndefined();
	const [item] = result.outputOf(NODE);
	expect(item.json.status).toBe('finished');
	expect(Object.keys(item.binary ?? {})).toHaveLength(1);
	expect(sim().count('submit')).toBe(1);
});

test("a file host whose name resolves to an internal address: refused as n8n's SSRF protection blocks it (was: the name could not be resolved)", async () => {
	const url = `http://${INTERNAL_NAME}/frame.png`;
	const result = await run(sim(), preChecked(url), { credentials: credentials(false) });
	const message = result.error?.message ?? '';
	expect(message).toContain(url);
	expect(message).toMatch(BLOCKED);
	expect(message).toContain(
		`${INTERNAL_NAME} (${INTERNAL_ADDRESS}) is in an address range n8n is set to block`,
	);
	expect(message).toMatch(WHAT_TO_SET);
	expect(message).toMatch(
		/also needs "Allow Private Network File Hosts" in the Media Generation credential/,
	);
	expect(message).not.toMatch(/could not be resolved/);
	expect(sim().count('submit')).toBe(0);
});

test("a name on n8n's deny-list: refused, naming N8N_SSRF_BLOCKED_HOSTNAMES", async () => {
	const result = await run(sim(), preChecked(`http://${BLOCKED_NAME}/frame.png`), {
		credentials: credentials(false),
	});
	expect(result.error?.message).toMatch(BLOCKED);
	expect(result.error?.message).toContain(
		`${BLOCKED_NAME} is on n8n's blocked host names (N8N_SSRF_BLOCKED_HOSTNAMES)`,
	);
	expect(sim().count('submit')).toBe(0);
});

test("Allow Private Network File Hosts on: n8n's own check still applies, said as such and not retried", async () => {
	const port = new URL(sim().fileBaseUrl).port;
	const url = `http://127.0.0.2:${port}/frame.png`;
	const result = await run(sim(), preChecked(url), { credentials: credentials(true) });
	expect(result.error?.message).toMatch(BLOCKED);
	expect(result.error?.message).toContain('127.0.0.2 is in an address range n8n is set to block');
	expect(sim().requests.filter((r) => r.origin === 'files')).toHaveLength(0);
	expect(sim().count('submit')).toBe(0);
});

test('a Base URL n8n blocks: nothing was sent, and the error says so (not "may have been accepted")', async () => {
	const baseUrl = `http://127.0.0.3:${new URL(sim().baseUrl).port}`;
	const result = await run(sim(), mediaWorkflow(imageGenerateParams(sim(), 'a red fox')), {
		credentials: credentials(true, baseUrl),
	});
	const message = result.error?.message ?? '';
	expect(message).toMatch(BLOCKED);
	expect(message).toContain(
		'127.0.0.3 is in an address range n8n is set to block, so nothing was sent',
	);
	expect(message).not.toMatch(/may have been accepted/);
	expect(sim().requests).toHaveLength(0);
});
