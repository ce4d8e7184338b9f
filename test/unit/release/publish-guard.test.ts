// The publish guard, run the way a maintainer would meet it: `npm publish --dry-run` in the
// repository. With `.npmrc`'s ignore-scripts npm never runs prepublishOnly (`n8n-node
// prerelease`), so the guard is `.npmrc`'s dist-tag, which npm refuses before it contacts any
// registry; publish.yml's Release step (releasePath.ts) overrides it, and so does a tag given by
// hand (a guard against accidents only). npm talks to a local stand-in registry that records
// every request and knows no package, so nothing leaves the machine.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs npm as a maintainer would, under plain Node, never inside n8n (the package ships dist/ only) */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import { releasePublishEnv } from '../../release/releasePath';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
	name: string;
	version: string;
};

let server: http.Server;
let registry: string;
let userconfig: string;
const requests: string[] = [];

beforeAll(async () => {
	server = http.createServer((req, res) => {
		requests.push(`${req.method} ${req.url}`);
		res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
	// An empty user config: nothing of the developer's (tokens, registries) takes part.
	userconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-publish-')), 'npmrc');
	fs.writeFileSync(userconfig, '');
});

afterAll(async () => {
	await new Promise((resolve) => server.close(resolve));
	fs.rmSync(path.dirname(userconfig), { recursive: true, force: true });
});

beforeEach(() => {
	requests.length = 0;
});

function npmPublishDryRun(
	extraEnv: Record<string, string>,
	args: string[] = [],
): Promise<{ code: number | null; out: string }> {
	const env: NodeJS.ProcessEnv = { ...process.env };
	// What npm passes to scripts as npm_config_* (the test runner's settings), GitHub's OIDC
	// variables and tokens: none belongs to a maintainer's shell.
	for (const key of Object.keys(env)) if (/^npm_config_/i.test(key)) delete env[key];
	for (const key of [
		'ACTIONS_ID_TOKEN_REQUEST_URL',
		'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
		'NODE_AUTH_TOKEN',
		'NPM_TOKEN',
		'RELEASE_MODE',
		'GITHUB_ACTIONS',
	]) {
		delete env[key];
	}
	Object.assign(
		env,
		{
			npm_config_userconfig: userconfig,
			npm_config_registry: registry,
			npm_config_fetch_retries: '0',
			npm_config_update_notifier: 'false',
		},
		extraEnv,
	);
	return new Promise((resolve, reject) => {
		const child = spawn('npm', ['publish', '--dry-run', ...args], {
			cwd: ROOT,
			env,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let out = '';
		child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
		child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
		child.on('error', reject);
		child.on('close', (code) => resolve({ code, out }));
	});
}

test('a plain `npm publish --dry-run` in the repository fails, before any request to the registry', async () => {
	const { code, out } = await npmPublishDryRun({});
	expect(code).not.toBe(0);
	expect(out).toMatch(/Invalid tag name "publish only through npm run release in publish\.yml"/);
	expect(out).not.toContain(`+ ${PKG.name}@${PKG.version}`);
	expect(requests).toEqual([]);
});

test('RELEASE_MODE=true alone (prepublishOnly is never run) does not open the guard either', async () => {
	const { code, out } = await npmPublishDryRun({ RELEASE_MODE: 'true' });
	expect(code).not.toBe(0);
	expect(out).toMatch(/Invalid tag name/);
});

test("publish.yml's release path gets through: the dry run reaches the registry and would publish", async () => {
	const env = releasePublishEnv();
	expect(env).toMatchObject({ NPM_CONFIG_TAG: 'latest', RELEASE_MODE: 'true' });
	const { code, out } = await npmPublishDryRun(env);
	expect({ code, out: code === 0 ? '' : out }).toEqual({ code: 0, out: '' });
	expect(out).toContain(`+ ${PKG.name}@${PKG.version}`);
	expect(out).toMatch(/with tag latest/);
	// npm asked the registry which versions exist (the check before a real publish).
	expect(requests).toContain(`GET /${PKG.name}`);
});

test('a guard against accidents, not against intent: `npm publish --dry-run --tag latest` by hand gets through', async () => {
	// What the docs say of the guard (CONTRIBUTING.md, docs/verification.md): a plain command is
	// refused, one that names a tag is not. What stops a publish by intent is the registry's
	// side (trusted publishing from publish.yml, 2FA), not this repository.
	const { code, out } = await npmPublishDryRun({}, ['--tag', 'latest']);
	expect({ code, out: code === 0 ? '' : out }).toEqual({ code: 0, out: '' });
	expect(out).toContain(`+ ${PKG.name}@${PKG.version}`);
	expect(requests).toContain(`GET /${PKG.name}`);
});
