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
 * Media Generation one, and those given), created and opened on the canvas.
 */
async function openExample(
	file: string,
	name: string,
	credentials: Record<string, { id: string; name: string }> = {},
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
	await openWorkflow(await createWorkflow(name, example.nodes, example.connections));
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

async function openWorkflow(id: string) {
	await page.goto(`${n8n.baseUrl}/workflow/${id}`);
	await page.getByTestId('canvas-node').first().waitFor();
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

test('no page errors, and no console errors from the package', () => {
	expect(browser.problems.pageErrors).toEqual([]);
	expect(browser.problems.consoleErrors.filter((e) => /media-?generation/i.test(e))).toEqual([]);
});
