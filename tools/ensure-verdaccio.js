'use strict';
// Fetches Verdaccio (a real npm registry) into the project's cache for the release layer
// (test/release), once per machine. Only Node's built-ins, like ensure-n8n.js.
//
// Verdaccio 6.10.4 depends on `node-fetch@cjs`, a dist-tag the registry copy reached here lacks:
// the override holds node-fetch at 2.7.0, the version that tag names. Install scripts stay off
// (Verdaccio has no native module). The install happens in a scratch folder renamed into place,
// so a half install never looks complete; two runs racing both install, the second rename loses
// and its scratch folder is removed.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const VERDACCIO_VERSION = '6.10.4';
const OVERRIDES = { 'node-fetch': '2.7.0' };

/**
 * Ensures Verdaccio is installed in `$MGEN_CACHE_DIR/verdaccio-<version>` and returns where.
 * @param {{ log?: (m: string) => void, env?: Record<string, string | undefined> }} options
 * @returns {{ dir: string, bin: string, version: string }}
 */
function ensureVerdaccio({
	log = (m) => process.stdout.write(`[verdaccio] ${m}\n`),
	env = process.env,
} = {}) {
	const cacheDir =
		env.MGEN_CACHE_DIR || path.join(os.homedir(), '.cache', 'n8n-nodes-media-generation');
	const dir = path.join(cacheDir, `verdaccio-${VERDACCIO_VERSION}`);
	const bin = path.join(dir, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
	const result = { dir, bin, version: VERDACCIO_VERSION };
	if (fs.existsSync(bin)) return result;

	const scratch = `${dir}.partial-${process.pid}`;
	fs.rmSync(scratch, { recursive: true, force: true });
	fs.mkdirSync(scratch, { recursive: true });
	try {
		fs.writeFileSync(
			path.join(scratch, 'package.json'),
			`${JSON.stringify({ private: true, dependencies: { verdaccio: VERDACCIO_VERSION }, overrides: OVERRIDES }, null, 2)}\n`,
		);
		log(`installing Verdaccio ${VERDACCIO_VERSION} into ${dir} (once)`);
		const started = Date.now();
		const r = spawnSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], {
			cwd: scratch,
			env: { ...env, npm_config_yes: 'true', npm_config_update_notifier: 'false' },
			encoding: 'utf8',
		});
		if (r.error || r.status !== 0) {
			const error = new Error(
				`npm install of verdaccio@${VERDACCIO_VERSION} failed:\n${(r.stderr || String(r.error)).slice(-2000)}`,
			);
			error.exitCode = 1;
			throw error;
		}
		try {
			fs.renameSync(scratch, dir);
		} catch (error) {
			// Another run put its install in place meanwhile: use that one.
			if (!fs.existsSync(bin)) throw error;
		}
		log(`Verdaccio ${VERDACCIO_VERSION} ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
		return result;
	} finally {
		fs.rmSync(scratch, { recursive: true, force: true });
	}
}

module.exports = { ensureVerdaccio, VERDACCIO_VERSION };
