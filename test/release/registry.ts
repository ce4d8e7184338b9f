// Test-only. A real npm registry on loopback for the release layer: Verdaccio (from the
// project's cache, tools/ensure-verdaccio.js) with its storage and configuration in a temporary
// folder. Only this package is stored locally; everything else (the peer n8n-workflow and its
// dependencies, which `npm install` in ~/.n8n/nodes also installs) comes through Verdaccio's
// uplink from the registry npm is configured with. npm runs with a private user config that holds
// only this registry and the publishing user's token, so nothing reaches the developer's.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs npm and a registry as a user would (processes, files, ports) under plain Node, never inside n8n (the package ships dist/ only) */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ensureVerdaccio } from '../../tools/ensure-verdaccio';
import { freePort, tailOf } from '../e2e/n8n';

export interface NpmResult {
	stdout: string;
	stderr: string;
}

export class Registry {
	private constructor(
		readonly dir: string,
		readonly url: string,
		private readonly child: ChildProcess,
		private readonly npmrc: string,
	) {}

	/** Starts Verdaccio in `dir` and creates the publishing user (PUT /-/user/org.couchdb.user:<name>). */
	static async start(dir: string): Promise<Registry> {
		const { bin } = ensureVerdaccio({ log: () => undefined, env: process.env });
		const upstream = spawnSync('npm', ['config', 'get', 'registry'], {
			encoding: 'utf8',
		}).stdout.trim();
		const port = await freePort();
		fs.mkdirSync(dir, { recursive: true });
		const config = path.join(dir, 'config.yaml');
		// JSON is YAML: no YAML writer needed.
		fs.writeFileSync(
			config,
			JSON.stringify({
				storage: path.join(dir, 'storage'),
				auth: { htpasswd: { file: path.join(dir, 'htpasswd') } },
				// maxage: the upgrade's install reuses what the first one fetched (default 2 minutes).
				uplinks: { upstream: { url: upstream || 'https://registry.npmjs.org/', maxage: '30m' } },
				packages: {
					// This package only ever comes from here: no uplink, so the public one never mixes in.
					'n8n-nodes-media-generation': { access: '$all', publish: '$authenticated' },
					'**': { access: '$all', publish: '$authenticated', proxy: 'upstream' },
				},
				log: { type: 'file', path: path.join(dir, 'verdaccio.log'), level: 'warn' },
			}),
		);
		const log = fs.openSync(path.join(dir, 'verdaccio.out'), 'a');
		const child = spawn(
			process.execPath,
			[bin, '--config', config, '--listen', `127.0.0.1:${port}`],
			{
				cwd: dir,
				stdio: ['ignore', log, log],
			},
		);
		fs.closeSync(log);
		const url = `http://127.0.0.1:${port}/`;
		const deadline = Date.now() + 60_000;
		for (;;) {
			if (child.exitCode !== null)
				throw new Error(
					`verdaccio exited with ${child.exitCode}\n${tailOf(path.join(dir, 'verdaccio.out'))}`,
				);
			try {
				if ((await fetch(`${url}-/ping`)).ok) break;
			} catch {
				// Not listening yet.
			}
			if (Date.now() > deadline)
				throw new Error(
					`verdaccio not answering after 60 s\n${tailOf(path.join(dir, 'verdaccio.out'))}`,
				);
			await new Promise((r) => setTimeout(r, 250));
		}
		const name = `rehearsal-${randomBytes(4).toString('hex')}`;
		const res = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
			method: 'PUT',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ name, password: randomBytes(12).toString('base64url') }),
		});
		const body = (await res.json()) as { token?: string };
		if (!res.ok || !body.token)
			throw new Error(`creating the registry user: HTTP ${res.status} ${JSON.stringify(body)}`);
		const npmrc = path.join(dir, 'npmrc');
		fs.writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${body.token}\n`, {
			mode: 0o600,
		});
		return new Registry(dir, url, child, npmrc);
	}

	/** `npm <args>` in `cwd` against this registry; rejects with npm's output on failure. */
	npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<NpmResult> {
		const childEnv: NodeJS.ProcessEnv = { ...process.env };
		// npm passes its own settings to scripts as npm_config_*: none of the test runner's apply here.
		for (const key of Object.keys(childEnv)) if (/^npm_config_/i.test(key)) delete childEnv[key];
		// In publish.yml's job the tests run where GitHub could mint an OIDC token for npm: the
		// rehearsal never gets to use it, nor any npm token.
		for (const key of [
			'ACTIONS_ID_TOKEN_REQUEST_URL',
			'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
			'NODE_AUTH_TOKEN',
			'NPM_TOKEN',
		])
			delete childEnv[key];
		Object.assign(childEnv, {
			npm_config_userconfig: this.npmrc,
			npm_config_registry: this.url,
			npm_config_audit: 'false',
			npm_config_fund: 'false',
			npm_config_update_notifier: 'false',
			npm_config_yes: 'true',
			...env,
		});
		return new Promise((resolve, reject) => {
			const child = spawn('npm', args, { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
			const out: Buffer[] = [];
			const err: Buffer[] = [];
			child.stdout!.on('data', (c: Buffer) => out.push(c));
			child.stderr!.on('data', (c: Buffer) => err.push(c));
			child.on('error', reject);
			child.on('close', (code) => {
				const result = {
					stdout: Buffer.concat(out).toString('utf8'),
					stderr: Buffer.concat(err).toString('utf8'),
				};
				if (code === 0) resolve(result);
				else
					reject(
						new Error(
							`npm ${args.join(' ')} in ${cwd} exited with ${code}\n${result.stderr.slice(-3000)}`,
						),
					);
			});
		});
	}

	/** The versions of a package the registry holds, and its `latest` tag. */
	async versions(name: string): Promise<{ versions: string[]; latest?: string }> {
		const res = await fetch(`${this.url}${name}`);
		if (!res.ok) throw new Error(`GET ${this.url}${name}: HTTP ${res.status}`);
		const doc = (await res.json()) as {
			versions: Record<string, unknown>;
			'dist-tags': { latest?: string };
		};
		return { versions: Object.keys(doc.versions), latest: doc['dist-tags'].latest };
	}

	async stop(): Promise<void> {
		if (this.child.exitCode !== null) return;
		await new Promise<void>((resolve) => {
			this.child.once('exit', () => resolve());
			this.child.kill('SIGTERM');
		});
	}
}
