// Test-only. n8n's editor in Debian's headless Chromium, driven by playwright-core (no browser
// download: the executable is the system's). One n8n with an owner, one browser; pages get the
// owner's cookie. Notes on the editor's test ids: ../../docs/editor.md (Contributors).
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { chromium, selectors, type Browser, type BrowserContext, type Page } from 'playwright-core';

import { N8nInstance, ROOT } from '../e2e/n8n';

export const CHROMIUM = process.env.MGEN_CHROMIUM || '/usr/bin/chromium';
export const IMAGES_DIR = path.join(ROOT, 'docs', 'images');

const OWNER = {
	email: 'owner@example.com',
	firstName: 'Ada',
	lastName: 'Owner',
	password: 'Editor-test-1',
};

/** A started n8n with an owner, and the owner's session cookie for REST calls and pages. */
export class EditorN8n {
	private constructor(
		readonly n8n: N8nInstance,
		readonly cookie: string,
	) {}

	static async start(name: string): Promise<EditorN8n> {
		const n8n = await N8nInstance.create(name);
		await n8n.start();
		const res = await fetch(`${n8n.baseUrl}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(OWNER),
		});
		if (res.status !== 200) throw new Error(`owner setup: HTTP ${res.status} ${await res.text()}`);
		const cookie = (res.headers.getSetCookie?.() ?? [])
			.map((c) => c.split(';')[0])
			.find((c) => c.startsWith('n8n-auth='));
		if (!cookie) throw new Error('owner setup set no n8n-auth cookie');
		return new EditorN8n(n8n, cookie);
	}

	get baseUrl() {
		return this.n8n.baseUrl;
	}

	/** A call to n8n's internal REST API as the owner; returns `data` of the answer. */
	async rest<T = unknown>(method: string, route: string, body?: unknown): Promise<T> {
		const res = await fetch(`${this.baseUrl}/rest${route}`, {
			method,
			headers: { 'content-type': 'application/json', cookie: this.cookie },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await res.text();
		if (res.status >= 300)
			throw new Error(`${method} /rest${route}: HTTP ${res.status} ${text.slice(0, 500)}`);
		return (JSON.parse(text) as { data: T }).data;
	}
}

export interface PageProblems {
	pageErrors: string[];
	consoleErrors: string[];
}

export class EditorBrowser {
	readonly problems: PageProblems = { pageErrors: [], consoleErrors: [] };

	private constructor(
		readonly browser: Browser,
		readonly context: BrowserContext,
		readonly page: Page,
	) {}

	static async launch(n8n: EditorN8n): Promise<EditorBrowser> {
		selectors.setTestIdAttribute('data-test-id');
		const browser = await chromium.launch({
			executablePath: CHROMIUM,
			args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
		});
		const context = await browser.newContext({
			// Tall enough for the longest panel to fit in one screenshot.
			viewport: { width: 1280, height: 1280 },
			colorScheme: 'light',
		});
		const [name, value] = n8n.cookie.split(/=(.*)/s);
		await context.addCookies([{ name, value, url: n8n.baseUrl }]);
		const page = await context.newPage();
		page.setDefaultTimeout(20_000);
		const b = new EditorBrowser(browser, context, page);
		// Each error names the test during which the page raised it, so a failure says where to look.
		const during = () => {
			const name = expect.getState().currentTestName;
			return name ? ` (during "${name}")` : '';
		};
		page.on('pageerror', (e) => b.problems.pageErrors.push(`${e.name}: ${e.message}${during()}`));
		page.on('console', (m) => {
			if (m.type() === 'error') b.problems.consoleErrors.push(m.text());
		});
		return b;
	}

	async close() {
		await this.browser.close();
	}

	/** Light or dark: n8n follows the system's colour scheme unless the user picked one. */
	async theme(scheme: 'light' | 'dark') {
		await this.page.emulateMedia({ colorScheme: scheme });
		await this.page.waitForTimeout(300);
	}

	/** Saves a PNG of `target` (a locator's box, padded) under docs/images/. */
	async screenshot(name: string, target?: ReturnType<Page['locator']>) {
		fs.mkdirSync(IMAGES_DIR, { recursive: true });
		const file = path.join(IMAGES_DIR, `${name}.png`);
		if (target) await target.screenshot({ path: file, animations: 'disabled' });
		else await this.page.screenshot({ path: file, animations: 'disabled' });
		return file;
	}
}
