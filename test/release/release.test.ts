// The release rehearsal: the package goes through the release path into a registry and from
// there into a real n8n 2.41.1 the way the README tells self-hosters, then is upgraded in place
// and uninstalled, with saved workflows and a parked execution in between.
//
//   N     published by `npm publish` in the environment of publish.yml's Release step plus
//         RELEASE_MODE=true, what `n8n-node release` runs under GitHub Actions (there also with
//         NPM_CONFIG_PROVENANCE=true, which needs GitHub's OIDC token: the only part not
//         rehearsed here), from the repository itself (releasePath.ts);
//         `npm install n8n-nodes-media-generation` in <user folder>/.n8n/nodes from that registry;
//         the examples run, are saved, and one execution parks with Park Until Callbacks.
//   N+1   a copy of the package with the next patch version and a changed node description,
//         published the same way; `npm install n8n-nodes-media-generation@latest` in place, then
//         n8n restarted: the parked execution completes on N+1, the saved workflows open
//         unchanged and run, and n8n's node types are N+1's.
//   gone  `npm uninstall`, restart: n8n starts, the node is reported missing, nothing crashes.
//
// Why the manual install and not Settings → Community Nodes: n8n's installer takes packages
// only from the public registry unless the instance has an enterprise licence
// (CommunityPackagesService.getNpmRegistry() throws FeatureNotLicensedError): docs/installing.md.
// One n8n user folder, three `n8n start`s and no other n8n command, one Verdaccio: the credential
// and workflows are created, run and saved through n8n's REST API as the editor does.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs npm, a registry and n8n as a user would, under plain Node, never inside n8n (the package ships dist/ only) */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { mediaBuffer, startSimulator, type Simulator } from '../simulator';
import {
	CREDENTIAL_TYPE,
	N8nInstance,
	NODE_TYPE,
	PACKAGE_NAME,
	ROOT,
	listExecutions,
	outputItems,
	removeEmptyRunFolder,
	type BinaryJson,
	type ExecutionSummary,
	type ItemJson,
} from '../e2e/n8n';
import { rest, setupOwner, type RestSession } from '../e2e/rest';
import { CREDENTIAL, exampleWorkflow, type WorkflowNode } from '../e2e/workflows';
import { Registry } from './registry';
import { releasePublishEnv } from './releasePath';

jest.setTimeout(600_000);

const RUN = ['generate-image.json', 'generate-video.json', 'generate-music.json'];
const PARK = 'durable-wait-batch.json';
const PARK_PATH = 'media-generation-batch';
const EXAMPLES = fs
	.readdirSync(path.join(ROOT, 'examples'))
	.filter((f) => f.endsWith('.json'))
	.sort();
const idOf = (file: string) => `mgenRelease${String(EXAMPLES.indexOf(file) + 1).padStart(4, '0')}`;
const NEXT_MARK = 'Release rehearsal: version N+1.';

let stage: string;
let sim: Simulator;
let registry: Registry;
let n8n: N8nInstance;
let session: RestSession;
let apiKey: string;
let versionN: string;
let versionNext: string;
/** What each example looked like when saved on version N. */
const saved = new Map<string, WorkflowJson>();
let parked: ExecutionSummary;
const parkRows = [0, 1].map((i) => ({
	prompt: `rehearsal ${i} [sim:duration=${600_000 + i * 1000}]`,
	ref: `rehearsal-${i}`,
}));

interface WorkflowJson {
	id: string;
	name: string;
	versionId?: string;
	nodes: WorkflowNode[];
	connections: Record<string, unknown>;
	settings?: Record<string, unknown>;
}
interface NodeTypeJson {
	name: string;
	version: number | number[];
	description: string;
	properties: Array<{ name: string }>;
}

const nodesDir = () => path.join(n8n.userFolder, '.n8n', 'nodes');
const installedVersion = () =>
	(
		JSON.parse(
			fs.readFileSync(path.join(nodesDir(), 'node_modules', PACKAGE_NAME, 'package.json'), 'utf8'),
		) as { version: string }
	).version;

async function waitFor<T>(
	what: string,
	fn: () => Promise<T | undefined>,
	timeoutMs = 90_000,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let failure = '';
	for (;;) {
		// n8n answers 503 for a moment while it starts or is very busy: try again until the deadline.
		const value = await fn().catch((error: Error) => {
			failure = ` (last error: ${error.message})`;
			return undefined;
		});
		if (value !== undefined) return value;
		if (Date.now() > deadline)
			throw new Error(`not reached after ${timeoutMs} ms: ${what}${failure}`);
		await new Promise((r) => setTimeout(r, 500));
	}
}

/** Our node types as n8n serves them to its editor (/types/nodes.json). */
async function ourNodeTypes(): Promise<NodeTypeJson[]> {
	const res = await fetch(`${n8n.baseUrl}/types/nodes.json`, {
		headers: { cookie: session.cookie },
	});
	if (!res.ok) throw new Error(`GET /types/nodes.json: HTTP ${res.status}`);
	return ((await res.json()) as NodeTypeJson[]).filter((t) =>
		t.name.startsWith(`${PACKAGE_NAME}.`),
	);
}

/** Every item's file is on disk byte for byte what the service served for its task. */
function expectServedFiles(items: ItemJson[]) {
	expect(items.length).toBeGreaterThan(0);
	for (const item of items) {
		const task = sim.task(String(item.json.task_id));
		expect(task).toBeDefined();
		const [binary] = Object.values(item.binary ?? {}) as BinaryJson[];
		const file = task!.files[0];
		expect(fs.readFileSync(n8n.binaryFile(binary)).equals(mediaBuffer(file.kind, file.size))).toBe(
			true,
		);
	}
}

/** Runs an example in the started n8n as the editor's Execute Workflow does (POST /rest/workflows/:id/run). */
async function runInEditor(file: string): Promise<ExecutionSummary> {
	const id = idOf(file);
	const trigger = exampleWorkflow(file, id).nodes.find(
		(n) => n.type === 'n8n-nodes-base.manualTrigger',
	)!;
	const { executionId } = (
		await rest<{ executionId: string }>(n8n, `/workflows/${id}/run`, {
			method: 'POST',
			session,
			body: { triggerToStartFrom: { name: trigger.name } },
		})
	).data;
	return await waitFor(`execution ${executionId} of ${file} ended`, async () => {
		const e = (await listExecutions(n8n, apiKey, id)).find((x) => x.id === executionId);
		return e && !['new', 'running', 'waiting'].includes(e.status) ? e : undefined;
	});
}

/** An example runs in the editor and its Media Generation node outputs the served files. */
async function runExample(file: string) {
	const execution = await runInEditor(file);
	expect([file, execution.status, execution.data?.resultData.error?.message]).toEqual([
		file,
		'success',
		undefined,
	]);
	// The node that outputs the files: the last Media Generation node that waits (the long-task
	// examples submit with Wait for Completion off, then Task → Wait for Completion).
	const node = exampleWorkflow(file, idOf(file))
		.nodes.filter((n) => n.type === NODE_TYPE && n.parameters.waitForCompletion !== false)
		.pop()!;
	expectServedFiles(outputItems({ data: execution.data! }, node.name));
}

/** Logs how long each step took (the layer's figures; nothing is asserted on them). */
async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
	const started = Date.now();
	try {
		return await fn();
	} finally {
		// eslint-disable-next-line no-console
		console.log(`[release] ${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
	}
}

async function startBatch(body: unknown) {
	// Right after start-up n8n may not have registered the published webhook yet (404).
	await waitFor(
		'the published webhook of the parking example',
		async () => {
			const res = await fetch(`${n8n.baseUrl}/webhook/${PARK_PATH}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			await res.text();
			return res.status === 200 ? true : undefined;
		},
		30_000,
	);
}

const parkExecutions = () => listExecutions(n8n, apiKey, idOf(PARK), undefined, false);

beforeAll(async () => {
	stage = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-release-'));
	sim = await startSimulator({ apiKey: `release-${process.pid}-secret`, defaultDurationMs: 500 });
	registry = await Registry.start(path.join(stage, 'registry'));
	n8n = await N8nInstance.create('release', { install: false });
});

afterAll(async () => {
	await n8n?.dispose();
	await registry?.stop();
	await sim?.close();
	if (stage) fs.rmSync(stage, { recursive: true, force: true });
	removeEmptyRunFolder();
});

test('version N: published through the release path, installed with npm from the registry, the examples run, are saved, and one execution parks', () =>
	n8n.explain(async () => {
		versionN = (
			JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
		).version;
		await timed('publish N', () => registry.npm(['publish'], ROOT, releasePublishEnv()));
		expect(await registry.versions(PACKAGE_NAME)).toEqual({
			versions: [versionN],
			latest: versionN,
		});

		fs.mkdirSync(nodesDir(), { recursive: true });
		await timed('npm install N in .n8n/nodes', () =>
			registry.npm(['install', PACKAGE_NAME], nodesDir()),
		);
		expect(installedVersion()).toBe(versionN);

		await timed('n8n start (N)', () => n8n.start());
		session = await setupOwner(n8n);
		const scopes = (await rest<string[]>(n8n, '/api-keys/scopes', { session })).data;
		const key = (
			await rest<{ rawApiKey?: string; apiKey?: string }>(n8n, '/api-keys', {
				method: 'POST',
				session,
				body: { label: 'release', scopes, expiresAt: null },
			})
		).data;
		apiKey = key.rawApiKey ?? key.apiKey ?? '';
		// The node, its AI-tool variant (usableAsTool) and the trigger.
		expect((await ourNodeTypes()).map((t) => t.name).sort()).toEqual([
			NODE_TYPE,
			`${NODE_TYPE}Tool`,
			`${NODE_TYPE}Trigger`,
		]);

		// Created in the editor: the credential, then every example (imported as a user pastes
		// it, our credential picked), then the parking one published.
		await timed('create the credential and the examples, publish the parking one', async () => {
			const credential = (
				await rest<{ id: string }>(n8n, '/credentials', {
					method: 'POST',
					session,
					body: {
						name: CREDENTIAL.name,
						type: CREDENTIAL_TYPE,
						data: { apiKey: sim.apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
					},
				})
			).data;
			for (const file of EXAMPLES) {
				const wf = exampleWorkflow(file, idOf(file));
				for (const node of wf.nodes) {
					if (node.credentials?.[CREDENTIAL_TYPE])
						node.credentials[CREDENTIAL_TYPE] = { id: credential.id, name: CREDENTIAL.name };
				}
				const { id, name, nodes, connections, settings } = wf as unknown as WorkflowJson;
				await rest(n8n, '/workflows', {
					method: 'POST',
					session,
					body: { id, name, nodes, connections, settings },
				});
			}
			const park = (await rest<WorkflowJson>(n8n, `/workflows/${idOf(PARK)}`, { session })).data;
			await rest(n8n, `/workflows/${idOf(PARK)}/activate`, {
				method: 'POST',
				session,
				body: { versionId: park.versionId },
			});
		});

		await timed('run the examples (N)', async () => {
			for (const file of RUN) await runExample(file);
		});

		// Saved as the editor saves: the workflow as opened, sent back.
		for (const file of EXAMPLES) {
			const opened = (await rest<WorkflowJson>(n8n, `/workflows/${idOf(file)}`, { session })).data;
			const { versionId, name, nodes, connections, settings } = opened;
			const after = (
				await rest<WorkflowJson>(n8n, `/workflows/${idOf(file)}`, {
					method: 'PATCH',
					session,
					body: { versionId, name, nodes, connections, settings },
				})
			).data;
			saved.set(file, after);
		}

		const known = new Set((await parkExecutions()).map((e) => e.id));
		await startBatch({ rows: parkRows });
		parked = await waitFor('the example execution parked (waiting)', async () =>
			(await parkExecutions()).find((e) => !known.has(e.id) && e.status === 'waiting'),
		);
		expect(sim.tasks().filter((t) => t.prompt.startsWith('rehearsal '))).toHaveLength(
			parkRows.length,
		);
	}));

test('version N+1 installed in place and n8n restarted: the parked execution completes on it, every saved workflow opens unchanged and runs, n8n serves N+1', () =>
	n8n.explain(async () => {
		expect(parked).toBeDefined();
		await n8n.stop();

		// The next version: the package as npm packs it, one patch version up, its node described anew.
		const next = path.join(stage, 'next');
		fs.mkdirSync(next, { recursive: true });
		const { stdout } = await registry.npm(['pack', '--json', '--pack-destination', stage], ROOT);
		const [{ filename }] = JSON.parse(stdout) as Array<{ filename: string }>;
		const untar = spawnSync(
			'tar',
			['-xzf', path.join(stage, filename), '-C', next, '--strip-components=1'],
			{ encoding: 'utf8' },
		);
		expect(untar.stderr).toBe('');
		fs.copyFileSync(path.join(ROOT, '.npmrc'), path.join(next, '.npmrc'));
		const pkgFile = path.join(next, 'package.json');
		const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { version: string };
		const [major, minor, patch] = pkg.version.split(/[.-]/).map(Number);
		versionNext = `${major}.${minor}.${patch + 1}`;
		fs.writeFileSync(pkgFile, JSON.stringify({ ...pkg, version: versionNext }, null, 2));
		const nodeFile = path.join(next, 'dist', 'nodes', 'MediaGeneration', 'MediaGeneration.node.js');
		const js = fs.readFileSync(nodeFile, 'utf8');
		const described = /description: '([^']+)',/.exec(js);
		expect(described).not.toBeNull();
		fs.writeFileSync(
			nodeFile,
			js.replace(described![0], `description: '${NEXT_MARK} ${described![1]}',`),
		);

		await timed('publish N+1', () => registry.npm(['publish'], next, releasePublishEnv()));
		expect(await registry.versions(PACKAGE_NAME)).toEqual({
			versions: [versionN, versionNext],
			latest: versionNext,
		});
		await timed('npm install N+1 in place', () =>
			registry.npm(['install', `${PACKAGE_NAME}@latest`], nodesDir()),
		);
		expect(installedVersion()).toBe(versionNext);

		await timed('n8n start (N+1)', () => n8n.start());
		const types = await ourNodeTypes();
		const node = types.find((t) => t.name === NODE_TYPE)!;
		expect(node.description.startsWith(NEXT_MARK)).toBe(true);
		expect(node.description).not.toBe(NEXT_MARK);
		// Installed by hand, the package has no row in n8n's database: Settings → Community Nodes
		// does not list it (docs/installing.md says so).
		const listed = (
			await rest<Array<{ packageName: string }>>(n8n, '/community-packages', { session })
		).data;
		expect(listed.map((p) => p.packageName)).not.toContain(PACKAGE_NAME);

		// The parked execution is still waiting, and completes on N+1 when its tasks end.
		expect((await parkExecutions()).find((e) => e.id === parked.id)?.status).toBe('waiting');
		sim.clock.advance(610_000);
		const done = await waitFor('the parked execution finished', async () => {
			const e = (await listExecutions(n8n, apiKey, idOf(PARK))).find((x) => x.id === parked.id);
			return e && e.status !== 'waiting' && e.status !== 'running' && e.status !== 'new'
				? e
				: undefined;
		});
		expect(done.status).toBe('success');
		const collected = outputItems({ data: done.data! }, 'Collect Results');
		expect(collected.map((i) => i.json.reference)).toEqual(parkRows.map((r) => r.ref));
		expectServedFiles(collected);

		// Every saved workflow opens with every parameter as saved, each known to N+1's node types.
		for (const file of EXAMPLES) {
			const opened = (await rest<WorkflowJson>(n8n, `/workflows/${idOf(file)}`, { session })).data;
			const before = saved.get(file)!;
			expect(opened.nodes.map((n) => [n.name, n.type, n.typeVersion, n.parameters])).toEqual(
				before.nodes.map((n) => [n.name, n.type, n.typeVersion, n.parameters]),
			);
			for (const n of opened.nodes.filter((x) => x.type.startsWith(`${PACKAGE_NAME}.`))) {
				const type = types.find(
					(t) => t.name === n.type && [t.version].flat().includes(n.typeVersion),
				);
				expect(type).toBeDefined();
				const known = new Set(type!.properties.map((p) => p.name));
				expect(Object.keys(n.parameters).filter((k) => !known.has(k))).toEqual([]);
			}
		}
		await timed('run the examples (N+1)', async () => {
			for (const file of RUN) await runExample(file);
		});
	}));

test('uninstalled: n8n starts cleanly and a workflow using the node reports the missing node', () =>
	n8n.explain(async () => {
		expect(versionNext).toBeDefined();
		await n8n.stop();
		await timed('npm uninstall', () => registry.npm(['uninstall', PACKAGE_NAME], nodesDir()));
		expect(fs.existsSync(path.join(nodesDir(), 'node_modules', PACKAGE_NAME))).toBe(false);

		await timed('n8n start (uninstalled)', () => n8n.start());
		expect(await ourNodeTypes()).toEqual([]);
		// Saved workflows still open, with the node and its parameters kept.
		const file = 'generate-image.json';
		const image = (await rest<WorkflowJson>(n8n, `/workflows/${idOf(file)}`, { session })).data;
		expect(image.nodes.find((n) => n.type === NODE_TYPE)?.parameters).toEqual(
			saved.get(file)!.nodes.find((n) => n.type === NODE_TYPE)?.parameters,
		);
		// Running one reports the missing node type, as n8n words it, and n8n stays up.
		const reported = await runInEditor(file).then(
			(e) => `${e.status}: ${e.data?.resultData.error?.message}`,
			(error: Error) => error.message,
		);
		// eslint-disable-next-line no-console
		console.log(`[release] a saved workflow run after the uninstall: ${reported.slice(0, 300)}`);
		expect(reported).toContain(`Unrecognized node type: ${NODE_TYPE}`);
		expect((await fetch(`${n8n.baseUrl}/healthz/readiness`)).status).toBe(200);
		expect(n8n.serverLogText()).not.toMatch(/uncaught|unhandled|fatal/i);
	}));
