// n8n itself loads the package from its community-package folder and uses its credential:
// an HTTP Request node with the predefined credential type `mediaGenerationApi` reaches the
// simulator with the Bearer key the credential's `authenticate` adds, and the key is nowhere
// in what n8n prints or stores in plain text.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { startSimulator, type Simulator } from '../simulator';
import { N8nInstance, outputItems, removeEmptyRunFolder } from './n8n';
import { CREDENTIAL, chain, credentialImport, manualTrigger, workflow } from './workflows';

jest.setTimeout(180_000);

let sim: Simulator;
let n8n: N8nInstance;

beforeAll(async () => {
	sim = await startSimulator({ apiKey: `e2e-secret-${process.pid}-key` });
	n8n = await N8nInstance.create('smoke');
});

afterAll(async () => {
	await n8n?.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

test('n8n loads the package and authenticates with its credential', () =>
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
				],
				chain('Start', 'Status'),
			),
		]);
		const { run, result } = await n8n.execute('mgenSmoke000001');

		const [item] = outputItems(run, 'Status');
		// The simulator answers an unknown task with 404, a wrong or missing key with 401.
		expect(item.json.statusCode).toBe(404);
		const seen = sim.requests.filter((r) => r.endpoint === 'status');
		expect(seen).toHaveLength(1);
		expect(seen[0].headers.authorization).toBe(`Bearer ${sim.apiKey}`);

		// The key is in no output and not in clear in n8n's database.
		expect(result.stdout + result.stderr).not.toContain(sim.apiKey);
		const dir = path.join(n8n.userFolder, '.n8n');
		const dbFiles = fs.readdirSync(dir).filter((f) => f.startsWith('database.sqlite'));
		expect(dbFiles).toContain('database.sqlite');
		for (const f of dbFiles) expect(fs.readFileSync(path.join(dir, f)).includes(sim.apiKey)).toBe(false);
	}));
