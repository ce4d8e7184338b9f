// n8n itself loads the package from its community-package folder and uses its credential:
// an HTTP Request node with the predefined credential type `mediaGenerationApi` reaches the
// simulator with the Bearer key the credential's `authenticate` adds, and the key is nowhere
// in what n8n prints or stores in plain text. All of it with n8n's SSRF protection on
// (N8N_SSRF_PROTECTION_ENABLED=true), which then applies to this package's requests too: the
// service and its file host are allowed as an administrator would (N8N_SSRF_ALLOWED_IP_RANGES,
// N8N_SSRF_ALLOWED_HOSTNAMES; n8n 2.41.1's @n8n/config ssrf-protection.config.js), and an address
// n8n blocks is reported as blocked by n8n, naming what to set.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import { N8nInstance, outputItems, removeEmptyRunFolder } from './n8n';
import {
	CREDENTIAL,
	chain,
	credentialImport,
	manualTrigger,
	mediaNode,
	workflow,
} from './workflows';

jest.setTimeout(180_000);

let sim: Simulator;
let n8n: N8nInstance;

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-secret-${process.pid}-key` });
	n8n = await N8nInstance.create('smoke');
	Object.assign(n8n.env, {
		N8N_SSRF_PROTECTION_ENABLED: 'true',
		// The simulator's API (by address) and its file host (by name) on this machine.
		N8N_SSRF_ALLOWED_IP_RANGES: '127.0.0.1/32',
		N8N_SSRF_ALLOWED_HOSTNAMES: 'localhost',
	});
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

test("n8n loads the package and authenticates with its credential; under n8n's SSRF protection the allowed service works and a blocked address is said to be blocked by n8n", () =>
	n8n.explain(async () => {
		await n8n.importCredentials([credentialImport(`${sim.baseUrl}/`, sim.apiKey)]);
		await n8n.importWorkflows([
			workflow(
				'mgenSmoke000001',
				[
					manualTrigger(),
					{
						id: 'n-status',
						name: 'Status',
						type: 'n8n-nodes-base.httpRequest',
						typeVersion: 4.2,
						position: [200, 0],
						parameters: {
							method: 'GET',
							url: `${sim.baseUrl}/api/generate/status/no-such-task`,
							authentication: 'predefinedCredentialType',
							nodeCredentialType: 'mediaGenerationApi',
							options: { response: { response: { neverError: true, fullResponse: true } } },
						},
						credentials: { mediaGenerationApi: CREDENTIAL },
					},
					mediaNode('Generate', {
						resource: 'image',
						operation: 'generate',
						model: 'image-by-id',
						modelId: sim.imageModelId,
						prompt: 'a lighthouse at dusk',
						imageByIdOptions: { size: '1:1', n: 1 },
					}),
					mediaNode(
						'Blocked',
						{
							resource: 'video',
							operation: 'generate',
							model: 'vidmodel-2.0-fast/image-to-video',
							prompt: 'move',
							// Another loopback address than the one allowed: n8n blocks it.
							startFrameUrl: `http://127.0.0.2:${sim.filePort}/frame.png`,
							waitForCompletion: false,
							options: { checkReferenceImages: true },
						},
						{ onError: 'continueRegularOutput' },
					),
				],
				chain('Start', 'Status', 'Generate', 'Blocked'),
			),
		]);
		const { run, result } = await n8n.execute('mgenSmoke000001');

		const [item] = outputItems(run, 'Status');
		// The simulator answers an unknown task with 404, a wrong or missing key with 401.
		expect(item.json.statusCode).toBe(404);
		const seen = sim.requests.filter(
			(r) => r.endpoint === 'status' && r.path.endsWith('/no-such-task'),
		);
		expect(seen).toHaveLength(1);
		expect(seen[0].headers.authorization).toBe(`Bearer ${sim.apiKey}`);

		// The package's own requests pass n8n's filter where the administrator allowed them.
		const [generated] = outputItems(run, 'Generate');
		expect(generated.json.status).toBe('finished');
		expect(Object.keys(generated.binary ?? {})).toHaveLength(1);
		// An address n8n blocks: said so, with what to set; nothing submitted, nothing fetched.
		const [blocked] = outputItems(run, 'Blocked');
		expect(String(blocked.json.error)).toMatch(
			/blocked by n8n's SSRF protection \(N8N_SSRF_PROTECTION_ENABLED is on\): 127\.0\.0\.2 is in an address range n8n is set to block, so nothing was sent\. .*N8N_SSRF_ALLOWED_HOSTNAMES .*N8N_SSRF_ALLOWED_IP_RANGES/,
		);
		expect(sim.count('submit')).toBe(1);
		expect(
			sim.requests.filter((r) => r.origin === 'files' && r.path.includes('frame')),
		).toHaveLength(0);

		// The key is in no output and not in clear in n8n's database.
		expect(result.stdout + result.stderr).not.toContain(sim.apiKey);
		const dir = path.join(n8n.userFolder, '.n8n');
		const dbFiles = fs.readdirSync(dir).filter((f) => f.startsWith('database.sqlite'));
		expect(dbFiles).toContain('database.sqlite');
		for (const f of dbFiles)
			expect(fs.readFileSync(path.join(dir, f)).includes(sim.apiKey)).toBe(false);
	}));
