// The package as a no-code user meets it: n8n 2.41's editor in headless Chromium, the package
// installed as a community package, the simulator behind the credential. Every expectation
// about panels comes from the model registry (nodes/MediaGeneration/models), so a model added
// there is checked here without editing this file. Screenshots of what is checked go to
// docs/images/ (light and dark), so the docs show what the code renders.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { INodeProperties } from 'n8n-workflow';

import {
	MODELS,
	getModel,
	modelsOf,
	type ModelDefinition,
} from '../../nodes/MediaGeneration/models';
import { startSimulator, type Simulator } from '../simulator';
import { ROOT, removeEmptyRunFolder } from '../e2e/n8n';
import {
	GUIDES,
	fieldShows,
	partsOf,
	readExample,
	type Guide,
	type Place,
} from '../unit/docs/guideControls';
import { EditorBrowser, EditorN8n } from './browser';

jest.setTimeout(240_000);

const NODE_TYPE = 'n8n-nodes-media-generation.mediaGeneration';
const TRIGGER_TYPE = 'n8n-nodes-media-generation.mediaGenerationTrigger';
const API_KEY = `editor-key-${process.pid}`;
const CREDENTIAL_NAME = 'Media Generation account';

let sim: Simulator;
let n8n: EditorN8n;
let browser: EditorBrowser;
let page: Page;
let credentialId: string;
let panelsWorkflow: string;
let runWorkflow: string;
let emptyWorkflow: string;

/** Canvas name of the node showing `model`. */
const nodeName = (model: ModelDefinition) => `${model.kind} ${model.displayName}`;

function generateNode(name: string, parameters: Record<string, unknown>, x: number, y = 0) {
	return {
		id: name.replace(/\W+/g, '-'),
		name,
		type: NODE_TYPE,
		typeVersion: 1,
		position: [x, y],
		parameters: { operation: 'generate', ...parameters },
		credentials: { mediaGenerationApi: { id: credentialId, name: CREDENTIAL_NAME } },
	};
}

async function createWorkflow(
	name: string,
	nodes: unknown[],
	connections: Record<string, unknown> = {},
) {
	const wf = await n8n.rest<{ id: string }>('POST', '/workflows', {
		name,
		active: false,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
	});
	return wf.id;
}

/**
 * An example of examples/ as a user imports it: its credentials pointed at this n8n's (the
 * Media Generation one, and those given), created and opened on the canvas (`how`: see
 * openWorkflow).
 */
async function openExample(
	file: string,
	name: string,
	credentials: Record<string, { id: string; name: string }> = {},
	how: 'load' | 'route' = 'load',
): Promise<void> {
	const example = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8')) as {
		nodes: Array<{ credentials?: Record<string, { id: string; name: string }> }>;
		connections: Record<string, unknown>;
	};
	const ours: Record<string, { id: string; name: string }> = {
		mediaGenerationApi: { id: credentialId, name: CREDENTIAL_NAME },
		...credentials,
	};
	for (const node of example.nodes) {
		for (const type of Object.keys(node.credentials ?? {})) {
			if (ours[type]) node.credentials![type] = ours[type];
		}
	}
	await openWorkflow(await createWorkflow(name, example.nodes, example.connections), how);
}

beforeAll(async () => {
	sim = await startSimulator({ apiKey: API_KEY, defaultDurationMs: 1500 });
	n8n = await EditorN8n.start('editor');
	const cred = await n8n.rest<{ id: string }>('POST', '/credentials', {
		name: CREDENTIAL_NAME,
		type: 'mediaGenerationApi',
		// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
		data: { apiKey: API_KEY, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
	});
	credentialId = cred.id;
	// One node per model, side by side, and a trigger: each panel is opened from this canvas.
	panelsWorkflow = await createWorkflow('Panels', [
		...MODELS.map((m, i) =>
			generateNode(
				nodeName(m),
				{ resource: m.kind, ...(modelsOf(m.kind).length > 1 ? { model: m.key } : {}) },
				i * 220,
			),
		),
		{
			id: 'trigger',
			name: 'Media Generation Trigger',
			type: TRIGGER_TYPE,
			typeVersion: 1,
			position: [0, 300],
			parameters: {},
			webhookId: '6f1c3bb4-4a57-4d0e-9a52-3f8a1b2c0d11',
			credentials: { mediaGenerationApi: { id: credentialId, name: CREDENTIAL_NAME } },
		},
	]);
	runWorkflow = await createWorkflow(
		'Video',
		[
			{
				id: 'start',
				name: 'Start',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			generateNode(
				'Media Generation',
				{ resource: 'video', prompt: 'A lighthouse at dawn, slow pan' },
				300,
			),
		],
		{ Start: { main: [[{ node: 'Media Generation', type: 'main', index: 0 }]] } },
	);
	emptyWorkflow = await createWorkflow('Empty', [
		{
			id: 'start',
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
	]);
	browser = await EditorBrowser.launch(n8n);
	page = browser.page;
});

afterAll(async () => {
	await browser?.close();
	await n8n?.n8n.dispose();
	await sim?.close();
	removeEmptyRunFolder();
});

const explain = <T>(fn: () => Promise<T>) => n8n.n8n.explain(fn);

/**
 * Opens a workflow on the canvas: the page loaded anew (`load`), or (`route`) through the open
 * editor's own router, as a click on a link of n8n does (no second load of the editor's code),
 * unless a dialog or menu is open.
 */
async function openWorkflow(id: string, how: 'load' | 'route' = 'load') {
	await goTo(`/workflow/${id}`, how);
	await page.getByTestId('canvas-node').first().waitFor();
}

/** Goes to a route of the editor; see openWorkflow. */
async function goTo(route: string, how: 'load' | 'route' = 'load') {
	// A dialog or menu left open stays over the next page: then the page is loaded anew.
	const open = page.locator('#app-modals [role=dialog], [role=menu]').filter({ visible: true });
	const routed =
		how === 'route' &&
		page.url().startsWith(n8n.baseUrl) &&
		!(await open.count()) &&
		(await page
			.evaluate(async (to) => {
				type Router = { push(to: string): Promise<unknown> };
				const app = (
					globalThis as unknown as {
						document: { querySelector(s: string): { __vue_app__?: unknown } | null };
					}
				).document.querySelector('#app')?.__vue_app__ as
					| { config: { globalProperties: { $router?: Router } } }
					| undefined;
				const router = app?.config.globalProperties.$router;
				if (!router) return false;
				await router.push(to);
				return true;
			}, route)
			.catch(() => false));
	if (!routed) await page.goto(`${n8n.baseUrl}${route}`);
}

async function openNode(name: string) {
	await page.locator(`[data-test-id=canvas-node][data-node-name="${name}"]`).dblclick();
	await page.getByTestId('ndv').waitFor();
	await page.getByTestId('node-parameters').first().waitFor();
}

async function closeNode() {
	const close = page.getByTestId('ndv-close-button');
	if (await close.count()) await close.first().click();
	else await page.keyboard.press('Escape');
	await page.getByTestId('ndv').waitFor({ state: 'hidden' });
}

/** The part of a DOM element read in the page (the tests compile without the DOM library). */
interface PageElement {
	offsetParent: unknown;
	parentElement: PageElement | null;
	textContent: string | null;
	closest(selector: string): PageElement | null;
	querySelector(selector: string): PageElement | null;
	querySelectorAll(selector: string): ArrayLike<PageElement>;
}

/** Labels of the visible top-level parameters of the open node, in order. */
async function panelLabels(): Promise<string[]> {
	await page.waitForTimeout(300);
	return await page
		.getByTestId('node-parameters')
		.first()
		.evaluate((rootNode: unknown) => {
			const root = rootNode as PageElement;
			const items = Array.from(root.querySelectorAll('[data-test-id=parameter-item]'));
			return (
				items
					.filter((item) => item.offsetParent !== null)
					// Top level only: not the fields inside a collection.
					.filter((item) => !item.parentElement?.closest('[data-test-id=parameter-item]'))
					.map((item) => {
						const label = item.querySelector(
							'[data-test-id=input-label] label, [data-test-id=input-label]',
						);
						// The label's row also holds the Fixed/Expression switch and, for JSON, the editor.
						const text = (label?.textContent ?? '').replace(/\s+/g, ' ');
						return text
							.replace(/\s*FixedExpression.*$/, '')
							.replace(/\s*\*$/, '')
							.trim();
					})
					.filter((text) => text !== '')
			);
		});
}

function parameterItem(label: string): Locator {
	return page
		.getByTestId('node-parameters')
		.first()
		.getByTestId('parameter-item')
		.filter({ has: page.getByTestId('input-label').getByText(label, { exact: true }) })
		.first();
}

/** The options a collection's "Add …" dropdown offers. */
async function collectionChoices(label: string): Promise<string[]> {
	await parameterItem(label).getByTestId('collection-parameter-add').click();
	const options = page.locator('[data-test-id=collection-parameter-option]:visible');
	await options.first().waitFor();
	const texts = (await options.allInnerTexts()).map((t) => t.trim());
	await page.keyboard.press('Escape');
	await page.waitForTimeout(200);
	return texts;
}

/** Picks `option` in the dropdown of parameter `name`. */
async function choose(name: string, option: string) {
	await page.getByTestId(`parameter-input-${name}`).first().click();
	await page
		.locator('.el-select-dropdown__item:visible')
		.getByText(option, { exact: true })
		.first()
		.click();
	await page.waitForTimeout(300);
}

/** After a failed step: no dropdown, dialog or node panel left open over the canvas. */
async function closeEverything() {
	for (let i = 0; i < 3; i++) await page.keyboard.press('Escape');
	const close = page.getByTestId('ndv-close-button');
	if (await close.isVisible().catch(() => false)) await close.click().catch(() => undefined);
}

/**
 * Whether a field of the model shows with the model's own choices at these values (default: each
 * choice's default, as in a fresh node): its `show` conditions on other fields of the model
 * (`frameSource`, or `/frameSource` from inside a collection) hold.
 */
function shownWith(
	model: ModelDefinition,
	field: { displayOptions?: { show?: Record<string, unknown> } },
	values: Record<string, unknown> = {},
): boolean {
	return Object.entries(field.displayOptions?.show ?? {}).every(([key, allowed]) => {
		const name = key.replace(/^\//, '');
		const choice = model.properties.find((p) => p.name === name);
		if (!choice) return true;
		return (allowed as unknown[]).includes(name in values ? values[name] : choice.default);
	});
}

/** What the registry says the panel of `model` shows, in order. */
function expectedLabels(model: ModelDefinition, values: Record<string, unknown> = {}): string[] {
	return [
		'Resource',
		'Operation',
		...(modelsOf(model.kind).length > 1 ? ['Model'] : []),
		...(model.modelId === undefined ? ['Model ID'] : []),
		...model.properties.filter((p) => shownWith(model, p, values)).map((p) => p.displayName),
		'Additional Input Fields',
		'Wait for Completion',
		'Options',
	];
}

async function bothThemes(name: string, target: () => Locator) {
	await browser.theme('light');
	await browser.screenshot(`${name}-light`, target());
	await browser.theme('dark');
	await browser.screenshot(`${name}-dark`, target());
	await browser.theme('light');
}

async function searchCreator(query: string): Promise<string[]> {
	await page.getByTestId('node-creator-search-bar').fill(query);
	await page.waitForTimeout(500);
	return (await page.getByTestId('node-creator-item-name').allInnerTexts()).map((t) => t.trim());
}

const QUERIES = ['Media Generation', 'video', 'image', 'music'];

describe('finding the nodes', () => {
	test('the trigger panel of a new workflow lists them by name, "video", "image" and "music"', () =>
		explain(async () => {
			await page.goto(`${n8n.baseUrl}/workflow/new`);
			await page.getByTestId('canvas-add-button').click();
			for (const q of QUERIES)
				expect({ q, found: await searchCreator(q) }).toEqual({
					q,
					found: expect.arrayContaining(['Media Generation']),
				});
			// The trigger itself is in the entry.
			await searchCreator('Media Generation');
			await page
				.getByTestId('node-creator-item-name')
				.getByText('Media Generation', { exact: true })
				.first()
				.click();
			await expect(
				page
					.getByTestId('node-creator')
					.getByText('Triggers', { exact: false })
					.first()
					.isVisible(),
			).resolves.toBe(true);
			await page.keyboard.press('Escape');
		}));

	test('the "What happens next?" panel and its AI view list them too', () =>
		explain(async () => {
			await openWorkflow(emptyWorkflow);
			await page.getByTestId('node-creator-plus-button').click();
			for (const q of QUERIES)
				expect({ q, found: await searchCreator(q) }).toEqual({
					q,
					found: expect.arrayContaining(['Media Generation']),
				});
			await searchCreator('');
			await page
				.getByTestId('node-creator-item-name')
				.getByText('AI', { exact: true })
				.first()
				.click();
			await page.waitForTimeout(500);
			for (const q of QUERIES)
				expect({ q, ai: await searchCreator(q) }).toEqual({
					q,
					ai: expect.arrayContaining(['Media Generation']),
				});
			// The entry describes the package, not only the trigger.
			const entry = page
				.getByTestId('node-creator')
				.getByText(/Generate images, video and music/)
				.first();
			await expect(entry.isVisible()).resolves.toBe(true);
			await page.keyboard.press('Escape');
		}));
});

describe('panels', () => {
	beforeAll(async () => {
		await openWorkflow(panelsWorkflow);
	});
	afterEach(closeEverything);

	test.each(MODELS.map((m) => [m.key, m] as const))(
		'%s shows exactly its fields, in order',
		(key, model) =>
			explain(async () => {
				await openNode(nodeName(model));
				expect(await panelLabels()).toEqual(expectedLabels(model));
				const collection = model.properties.find((p) => p.type === 'collection');
				if (collection) {
					const offered = await collectionChoices(collection.displayName);
					const defined = (collection.options as INodeProperties[])
						.filter((o) => shownWith(model, o))
						.map((o) => o.displayName);
					expect([...offered].sort()).toEqual([...defined].sort());
				}
				// No permanent notices: the 24-hour notice only when files are not downloaded.
				const text = await page.getByTestId('node-parameters').first().innerText();
				expect(text).not.toMatch(/24 hours|Retry On Fail off/);
				// The canvas subtitle speaks the panel's words.
				await bothThemes(`panel-${key.replace(/[^a-z0-9.]+/gi, '-')}`, () =>
					page.getByTestId('ndv').locator('[data-test-id=node-parameters]').first(),
				);
				await closeNode();
				const subtitle = await page
					.locator(`[data-test-id=canvas-node][data-node-name="${nodeName(model)}"]`)
					.innerText();
				const kindWord = model.kind[0].toUpperCase() + model.kind.slice(1);
				expect(subtitle).toContain(`Generate ${kindWord}`);
				expect(subtitle).not.toMatch(/undefined|generate:/);
			}),
	);

	test('Vidmodel 2.0 Fast with Frames From → Binary Files shows the binary fields instead of the URLs (issue 34)', () =>
		explain(async () => {
			const fast = getModel('vidmodel-2.0-fast/image-to-video');
			await openNode(nodeName(fast));
			await choose('frameSource', 'Binary Files');
			const binary = { frameSource: 'binary' };
			expect(await panelLabels()).toEqual(expectedLabels(fast, binary));
			expect(await panelLabels()).toContain('Start Frame Binary Field');
			const collection = fast.properties.find((p) => p.type === 'collection')!;
			const offered = await collectionChoices(collection.displayName);
			expect(offered).toContain('End Frame Binary Field');
			expect(offered).not.toContain('End Frame URL');
			await bothThemes('panel-vidmodel-2.0-fast-binary-frames', () =>
				page.getByTestId('ndv').locator('[data-test-id=node-parameters]').first(),
			);
			// Back to URLs, as the panel was (the next tests open it as saved).
			await choose('frameSource', 'URLs');
			await closeNode();
		}));

	test('switching model and resource leaves no stale value', () =>
		explain(async () => {
			const [pro, fast] = modelsOf('video');
			await openNode(nodeName(pro));
			await choose('aspectRatio', '9:16');
			await choose('model', fast.displayName);
			expect(await panelLabels()).toEqual(expectedLabels(fast));
			await choose('resource', 'Music');
			const music = modelsOf('music')[0];
			expect(await panelLabels()).toEqual(expectedLabels(music));
			await closeNode();
			await page.keyboard.press('Control+s');
			await page.waitForTimeout(1000);
			const wf = await n8n.rest<{
				nodes: Array<{ name: string; parameters: Record<string, unknown> }>;
			}>('GET', `/workflows/${panelsWorkflow}`);
			const saved = wf.nodes.find((n) => n.name === nodeName(pro))!.parameters;
			expect(saved.resource).toBe('music');
			// Nothing of the video models survives: no model key, no aspect ratio, no frames.
			for (const stale of [
				'model',
				'aspectRatio',
				'duration',
				'startFrameUrl',
				'vidmodel15ProOptions',
				'vidmodel20FastOptions',
			])
				expect({ stale, value: saved[stale] }).toEqual({ stale, value: undefined });
		}));

	test('the trigger panel', () =>
		explain(async () => {
			await openNode('Media Generation Trigger');
			// The Production URL is what the user copies into the Generate node's Callback URL.
			await page.getByTestId('ndv').getByText('Webhook URLs', { exact: true }).click();
			const ndv = page.getByTestId('ndv');
			await ndv.getByText('Production URL', { exact: true }).click();
			await page.waitForTimeout(300);
			expect(await ndv.innerText()).toContain(`${n8n.baseUrl}/webhook/`);
			await bothThemes('trigger', () => page.getByTestId('ndv'));
			await closeNode();
		}));

	test('the Download Files notice appears only when files are not downloaded', () =>
		explain(async () => {
			const model = MODELS.find((m) => m.kind === 'music')!;
			await openNode(nodeName(model));
			await parameterItem('Options').getByTestId('collection-parameter-add').click();
			await page
				.locator('[data-test-id=collection-parameter-option]:visible')
				.getByText('Download Files', { exact: true })
				.click();
			await page.waitForTimeout(300);
			const params = page.getByTestId('node-parameters').first();
			expect(await params.innerText()).not.toMatch(/24 hours/);
			await params.getByTestId('parameter-input-downloadFiles').first().click();
			await page.waitForTimeout(300);
			expect(await params.innerText()).toMatch(/The file URLs stay valid for 24 hours/);
			// The hint of "Put Output File in Field" keeps all its words (no text taken as HTML).
			await parameterItem('Options').getByTestId('collection-parameter-add').click();
			await page
				.locator('[data-test-id=collection-parameter-option]:visible')
				.getByText('Put Output File in Field', { exact: true })
				.click();
			await page.waitForTimeout(300);
			expect(await params.innerText()).toContain(
				'Further files go to this name followed by _1, _2, … (e.g. data_1, data_2)',
			);
			await closeNode();
		}));
});

describe('credential', () => {
	async function testWith(
		data: { apiKey: string; baseUrl: string },
		expected: RegExp,
		shot?: string,
	): Promise<string> {
		await page.goto(`${n8n.baseUrl}/home/credentials/${credentialId}`);
		const modal = page.getByTestId('editCredential-modal');
		await modal.waitFor();
		for (const [name, value] of Object.entries(data)) {
			const input = modal.getByTestId(`parameter-input-${name}`).locator('input, textarea').first();
			await input.fill(value);
		}
		await modal.getByTestId('credential-save-button').click();
		// Save runs the test; the message replaces the previous one when the answer is in. A
		// failed test shows "Couldn't connect with these settings" and, behind "More details"
		// (shown outside the dialog), the message of the credential's rule.
		await page.waitForTimeout(500);
		const deadline = Date.now() + 25_000;
		let text = '';
		while (Date.now() < deadline) {
			text = (await page.locator('body').innerText()).replace(/\s+/g, ' ');
			if (expected.test(text)) break;
			const details = modal.getByText('More details', { exact: true });
			if (await details.isVisible().catch(() => false)) {
				await details.click({ timeout: 2000 }).catch(() => undefined);
			}
			await page.waitForTimeout(300);
		}
		if (shot) await bothThemes(shot, () => modal);
		await page.keyboard.press('Escape');
		return text;
	}

	test('Test tells a right key, a wrong key and an unreachable host apart', () =>
		explain(async () => {
			const ok = /Connection tested successfully/;
			const rejected = /The service rejected the API key/;
			// n8n shows the network error code for any request-based test (docs/credentials.md).
			const unreachable = /ECONNREFUSED/;
			try {
				expect(await testWith({ apiKey: 'wrong-key', baseUrl: sim.baseUrl }, rejected)).toMatch(
					rejected,
				);
				expect(
					await testWith({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:9' }, unreachable),
				).toMatch(unreachable);
				// Last the right key: it stays saved for the execution below.
				expect(await testWith({ apiKey: API_KEY, baseUrl: sim.baseUrl }, ok, 'credential')).toMatch(
					ok,
				);
			} finally {
				await closeEverything();
				await n8n.rest('PATCH', `/credentials/${credentialId}`, {
					name: CREDENTIAL_NAME,
					type: 'mediaGenerationApi',
					// The execution below downloads from the simulator on 127.0.0.1 (see beforeAll).
					data: { apiKey: API_KEY, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
				});
			}
		}));
});

describe('execution', () => {
	test('Video → Generate against the simulator shows the file with a preview', () =>
		explain(async () => {
			await openWorkflow(runWorkflow);
			await openNode('Media Generation');
			await page.getByTestId('node-execute-button').first().click();
			const output = page.getByTestId('output-panel');
			await output.getByText(/mp4/i).first().waitFor({ timeout: 60_000 });
			await bothThemes('execution-binary', () => page.getByTestId('ndv'));
			await output.getByRole('button', { name: /View/ }).first().click();
			await page.locator('video').first().waitFor({ timeout: 20_000 });
			expect(await page.locator('video').count()).toBeGreaterThan(0);
		}));
});

describe('AI Agent', () => {
	test('examples/agent-media-generation.json: the agent with its tools on the canvas, and a tool panel with its operation’s description', () =>
		explain(async () => {
			const openAi = await n8n.rest<{ id: string; name: string }>('POST', '/credentials', {
				name: 'OpenAI account',
				type: 'openAiApi',
				data: { apiKey: 'sk-editor-test', url: 'http://127.0.0.1:9/v1', header: false },
			});
			await openExample('agent-media-generation.json', 'AI Agent that makes videos', {
				openAiApi: { id: openAi.id, name: openAi.name },
			});
			await page.waitForTimeout(1500);
			await bothThemes('agent-workflow', () =>
				page.locator('#canvas, [data-test-id=canvas]').first(),
			);
			await openNode('Start Video');
			// The tool's own Description field, with Generate's default; not n8n's one-line choice.
			expect(await panelLabels()).toContain('Description');
			expect(await panelLabels()).not.toContain('Tool Description');
			const description = () =>
				page
					.getByTestId('parameter-input-toolDescription')
					.locator('textarea')
					.first()
					.inputValue();
			expect(await description()).toMatch(/^Generates a video .* paid generation/);
			await bothThemes('agent-tool-panel', () =>
				page.getByTestId('ndv').locator('[data-test-id=node-parameters]').first(),
			);
			// An untouched description follows the operation: Task's default operation is Wait for Completion.
			await choose('resource', 'Task');
			expect(await description()).toMatch(/^Waits for an earlier generation, by its task_id/);
			await closeNode();
		}));
});

describe('the guides', () => {
	test('examples/table-rows-to-videos.json and its batch workflow (docs/spreadsheet-to-videos.md): the job, and Generate Videos keyed by the row id', () =>
		explain(async () => {
			await openExample('table-rows-to-videos.json', 'Table rows to videos');
			await page.waitForTimeout(1500);
			for (const name of [
				'Try It Now',
				'Every Hour',
				'When n8n Starts',
				'Send 50 Rows',
				'Collect 50 Videos',
			])
				await page
					.locator(`[data-test-id=canvas-node][data-node-name="${name}"]`)
					.first()
					.waitFor();
			await bothThemes('table-workflow', () =>
				page.locator('#canvas, [data-test-id=canvas]').first(),
			);
			await openExample('table-rows-to-videos-batch.json', 'Table rows to videos (one batch)');
			await openNode('Generate Videos');
			const ndv = page.getByTestId('ndv').locator('[data-test-id=node-parameters]').first();
			// The options the guide talks about, set as the guide says.
			for (const label of ['Callback Reference', 'Max Tasks in Flight']) {
				await parameterItem(label).waitFor();
			}
			expect(await ndv.innerText()).toContain('{{ $json.id }}');
			await bothThemes('table-generate-videos', () => ndv);
			await closeNode();
		}));

	test("examples/form-photo-to-video.json (docs/form-photos-to-videos.md): Animate Photo takes its start frame from the form's Photo field", () =>
		explain(async () => {
			await openExample('form-photo-to-video.json', 'Photos from a form to videos');
			await openNode('Animate Photo');
			expect(await panelLabels()).toEqual(
				expect.arrayContaining(['Prompt', 'Frames From', 'Start Frame Binary Field']),
			);
			await parameterItem('Start Frame Binary Field').waitFor();
			const ndv = page.getByTestId('ndv').locator('[data-test-id=node-parameters]').first();
			const value = async (name: string) =>
				await page.getByTestId(`parameter-input-${name}`).locator('input').first().inputValue();
			expect(await value('frameSource')).toBe('Binary Files');
			expect(await value('startFrameBinaryField')).toBe('Photo');
			await bothThemes('form-animate-photo', () => ndv);
			await closeNode();
		}));
});

/**
 * How long a word a guide names may take to show: the editor shows what a click opens well within
 * it, so only a word that is missing costs this long.
 */
const SHOWN_MS = 3000;

const shows = (target: Locator, timeout = SHOWN_MS) =>
	target.waitFor({ state: 'visible', timeout }).then(
		() => true,
		() => false,
	);

/**
 * Where a word is in the page but not shown as a control: a sticky note's text, and a canvas
 * node's toolbar (transparent until the pointer is over the node).
 */
const NOT_SHOWN = ['sticky', 'canvas-node-toolbar']
	.map((id) => `@data-test-id="${id}"`)
	.join(' or ');

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The visible control or label reading `text` (its text, or an icon button's aria-label), the
 * last one in `scope`: what a click has just opened (a menu, a dialog) comes last. Not one of
 * NOT_SHOWN. `⋯` is the workflow's menu.
 */
function control(text: string, scope: Page | Locator = page): Locator {
	if (text === '⋯') return page.getByTestId('workflow-menu').filter({ visible: true }).first();
	// A required field's label ends with "*".
	return scope
		.getByText(new RegExp(`^\\s*${escaped(text)}\\s*\\*?\\s*$`))
		.or(scope.getByLabel(text, { exact: true }))
		.and(page.locator(`xpath=//*[not(ancestor-or-self::*[${NOT_SHOWN}])]`))
		.filter({ visible: true })
		.last();
}

/**
 * Clicks a path's parts in turn and sees its last, the first in `scope` (a node's panel), the
 * others wherever the clicks open them. `at.clicked` is what the previous path clicked: a path
 * that goes on from it (Overview → Data tables → Create data table after Overview → Data tables)
 * goes on from there, one it clicked already was seen; any other starts again (`restart`).
 * Returns what was not found.
 */
async function follow(
	parts: string[],
	at: { clicked: string[] },
	restart: () => Promise<unknown>,
	scope: Page | Locator = page,
): Promise<string | undefined> {
	if (parts.every((p, i) => at.clicked[i] === p)) return undefined;
	const goesOn = at.clicked.every((p, i) => parts[i] === p);
	let timeout = SHOWN_MS;
	if (!goesOn) {
		await restart();
		at.clicked = [];
		// A page loaded again takes longer than a click.
		timeout = 15_000;
	}
	const after = (i: number) => (i ? ` after clicking ${parts.slice(0, i).join(' → ')}` : '');
	for (const [i, part] of parts.entries()) {
		if (i < at.clicked.length) continue;
		const target = control(part, i ? page : scope);
		const shown = await shows(target, timeout);
		timeout = SHOWN_MS;
		if (shown && i === parts.length - 1) return undefined;
		const clicked =
			shown &&
			(await target.click({ timeout }).then(
				() => true,
				() => false,
			));
		if (!clicked) {
			at.clicked = ['(lost)'];
			return `${shown ? `"${part}" could not be clicked` : `no visible "${part}"`}${after(i)}`;
		}
		at.clicked.push(part);
	}
	return undefined;
}

/**
 * What a guide's check found missing for a place that is the same whichever guide names it (the
 * Overview page, the workflow menu's paths, the node list), by place: followed once for all guides.
 */
const followedOnce = new Map<string, string | undefined>();

async function once(key: string, check: () => Promise<string | undefined>) {
	if (!followedOnce.has(key)) followedOnce.set(key, await check());
	return followedOnce.get(key);
}

async function reloadCanvas() {
	await page.reload();
	await page.getByTestId('canvas-node').first().waitFor();
}

type PlaceOf<K extends Place['kind']> = Extract<Place, { kind: K }>;

/**
 * Every place of `guide` of kinds ui, node, field, nodes and workflow, looked for in n8n's editor:
 * each example opened once (its nodes, the canvas's controls, its name), each node panel the
 * guide names opened once (its fields, the Settings tab's, the controls the guide clicks there),
 * the Overview page and the node list once. Returns what was not found, one line per word.
 */
async function missingOf(guide: Guide): Promise<string[]> {
	const missing: string[] = [];
	const miss = (word: string, where: string) =>
		missing.push(`${guide.file}: "${word}" not found: ${where}`);
	const places = Object.entries(guide.places);
	const of = <K extends Place['kind']>(kind: K) =>
		places.filter((e): e is [string, PlaceOf<K>] => e[1].kind === kind);
	const ui = of('ui');
	const clicks = (word: string, p: PlaceOf<'ui'>) => p.path ?? partsOf(word);
	const examples = guide.examples.join(', ');

	// The Overview page.
	const home = { clicked: ['(start)'] };
	for (const [word, p] of ui.filter(([, p]) => p.from === 'home')) {
		const parts = clicks(word, p);
		const lost = await once(`home ${parts.join(' → ')}`, () =>
			follow(parts, home, () => goTo('/home/workflows', 'route')),
		);
		if (lost) miss(word, `${lost} from n8n's Overview page (/home/workflows)`);
	}

	// The examples: their nodes, the canvas's controls, their names, the panels the guide opens.
	const canvasWords = ui.filter(([w, p]) => p.from === 'canvas' && clicks(w, p).length === 1);
	const canvasPaths = ui.filter(([w, p]) => p.from === 'canvas' && clicks(w, p).length > 1);
	const onCanvas = new Set<string>();
	const names: string[] = [];
	const panels = new Map<string, { fields: Array<[string, PlaceOf<'field'>]>; ui: typeof ui }>();
	const panel = (node: string) =>
		panels.get(node) ?? panels.set(node, { fields: [], ui: [] }).get(node)!;
	for (const entry of of('field')) panel(entry[1].node).fields.push(entry);
	for (const entry of ui)
		if (typeof entry[1].from === 'object') panel(entry[1].from.node).ui.push(entry);
	for (const file of guide.examples) {
		const example = readExample(file);
		await openExample(file, example.name, {}, 'route');
		await page.getByTestId('workflow-name-input').filter({ hasText: example.name }).waitFor();
		const here = new Set(example.nodes.map((n) => n.name));
		names.push(await page.getByTestId('workflow-name-input').first().innerText());
		await Promise.all([
			...of('node')
				.filter(([w, p]) => here.has(p.name ?? w) && !onCanvas.has(w))
				.map(async ([w, p]) => {
					const name = JSON.stringify(p.name ?? w);
					if (await shows(page.locator(`[data-test-id=canvas-node][data-node-name=${name}]`)))
						onCanvas.add(w);
				}),
			...canvasWords
				.filter(([w]) => !onCanvas.has(w))
				.map(async ([w]) => {
					if (await shows(control(w))) onCanvas.add(w);
				}),
		]);
		for (const [node, { fields, ui: controls }] of panels) {
			if (!here.has(node)) continue;
			panels.delete(node);
			const where = `in the panel of ${node} (${file})`;
			await openNode(node);
			const ndv = page.getByTestId('ndv');
			const checkFields = (list: typeof fields, tab = '') =>
				Promise.all(
					list.map(async ([word, p]) => {
						for (const { label, value } of fieldShows(word, p)) {
							// A parameter's label, or another (the credential's).
							const labelled = ndv
								.getByTestId('input-label')
								.getByText(label, { exact: true })
								.filter({ visible: true })
								.first()
								.or(control(label, ndv))
								.first();
							if (!(await shows(labelled))) {
								miss(word, `no field labelled "${label}" ${where}${tab}`);
								return;
							}
							if (value === undefined) continue;
							const item = ndv
								.getByTestId('parameter-item')
								.filter({ has: page.getByTestId('input-label').getByText(label, { exact: true }) })
								.last();
							const inputs = await item
								.locator('input, textarea')
								.evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
							const lines = (await item.innerText()).split('\n').map((l) => l.trim());
							if (![...inputs, ...lines].includes(value)) {
								miss(
									word,
									`its field "${label}" ${where}${tab} shows ${JSON.stringify(inputs)}, not "${value}"`,
								);
								return;
							}
						}
					}),
				);
			await checkFields(fields.filter(([, p]) => !p.tab));
			const settings = fields.filter(([, p]) => p.tab === 'Settings');
			if (settings.length) {
				const tab = control('Settings', ndv);
				if (await shows(tab)) {
					await tab.click();
					await checkFields(settings, ', Settings tab');
				} else for (const [word] of settings) miss(word, `no Settings tab ${where}`);
			}
			const at = { clicked: [] as string[] };
			for (const [word, p] of controls) {
				const parts = clicks(word, p);
				const lost = await follow(
					parts,
					at,
					async () => {
						await closeEverything();
						await openNode(node);
					},
					ndv,
				);
				if (lost) miss(word, `${lost} ${where}`);
			}
			await closeEverything();
			await ndv.waitFor({ state: 'hidden' });
		}
	}
	for (const [word] of [...of('node'), ...canvasWords])
		if (!onCanvas.has(word)) miss(word, `no visible "${word}" on the canvas of ${examples}`);
	for (const [node, { fields, ui: controls }] of panels)
		for (const [word] of [...fields, ...controls])
			miss(word, `no node "${node}" in ${examples} to open`);
	for (const [word] of of('workflow'))
		if (!names.some((name) => name.includes(word)))
			miss(word, `no example of ${examples} is named so (their names: ${names.join('; ')})`);

	// n8n's node list, from the + button of the last example's canvas: its search, and that of its
	// AI view (where n8n lists the AI sub-nodes: memories, models).
	for (const [word] of of('nodes')) {
		const [name, action] = partsOf(word);
		const lost = await once(`nodes ${word}`, async () => {
			let offered: string[] = [];
			await closeEverything();
			await page.getByTestId('node-creator-plus-button').click();
			const search = page.getByTestId('node-creator-search-bar');
			for (const view of ['', 'AI']) {
				// The list filters in the page at once: a short wait before the AI view's.
				const timeout = view ? SHOWN_MS : 1500;
				if (view) {
					await search.fill('');
					await listed(view).click();
				}
				await search.fill(name);
				if (!(await shows(listed(name), timeout))) {
					offered = await page.getByTestId('node-creator-item-name').allInnerTexts();
					continue;
				}
				if (!action) return undefined;
				await listed(name).click();
				if (await shows(control(action, page.getByTestId('node-creator')))) return undefined;
				return `no action "${action}" after clicking "${name}"`;
			}
			return `no "${name}" (it offered ${JSON.stringify(offered.slice(0, 8))})`;
		});
		if (lost)
			miss(
				word,
				`${lost} in n8n's node list (the canvas's + button, and its AI view), searched for "${name}"`,
			);
	}
	await closeEverything();

	// The paths through the workflow's menu, on the last example's canvas (the next guide's test
	// opens its own page: a menu Escape leaves open does not matter then).
	const menus = { clicked: [] as string[] };
	for (const [word, p] of canvasPaths) {
		const parts = clicks(word, p);
		const lost = await once(`canvas ${parts.join(' → ')}`, () =>
			// Escape leaves the menu open once its Import submenu was: the canvas is loaded again.
			follow(parts, menus, reloadCanvas),
		);
		if (lost) miss(word, `${lost} on the canvas of ${guide.examples[guide.examples.length - 1]}`);
	}
	return missing;
}

/** An entry of the open node list named `name`. */
const listed = (name: string) =>
	page
		.getByTestId('node-creator-item-name')
		.filter({ hasText: new RegExp(`^\\s*${escaped(name)}\\s*$`) })
		.filter({ visible: true })
		.first();

describe('the guides name what n8n shows', () => {
	afterEach(closeEverything);

	test.each(GUIDES.map((g) => [g.file, g] as const))(
		'%s: every control, node, field and node-list entry it names is where guideControls.ts says',
		(_, guide) =>
			explain(async () => {
				expect(await missingOf(guide)).toEqual([]);
			}),
	);
});

/**
 * Page errors of n8n's own editor that no package can cause or prevent, each with where n8n says
 * so. n8n 2.41.1's NDV store throws when a part of the editor reads it outside an open workflow
 * (n8n-io/n8n#32460 made that throw; #31496 lists the credential dialogs it missed): seen once,
 * on a loaded machine, while the guides' credential dialogs opened. Every other page error fails.
 */
const N8N_OWN_PAGE_ERRORS = [
	/^Error: injectNDVStore\(\) was accessed without an active workflow document store\b/,
];

test('no page errors, and no console errors from the package', () => {
	expect(
		browser.problems.pageErrors.filter((e) => !N8N_OWN_PAGE_ERRORS.some((known) => known.test(e))),
	).toEqual([]);
	expect(browser.problems.consoleErrors.filter((e) => /media-?generation/i.test(e))).toEqual([]);
});
