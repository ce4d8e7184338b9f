'use strict';
// Real programs some test layers drive (Chromium for the editor layer, Redis and PostgreSQL for
// queue mode) come from the operating system, not from npm. This installs them the one way that
// works on these machines, Debian's packages through apt-get as root or, where the user is not root
// but sudo needs no password (GitHub's hosted runners), through `sudo -n apt-get`; otherwise it
// says exactly what is missing so the layer can skip with that message (tools/run.js refuses a
// skip under CI=true).
// Only Node's built-ins: it runs from tools/run.js on a fresh machine.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');

let aptUpdated = false;

function isDebian() {
	try {
		return /^ID(_LIKE)?=.*debian/m.test(fs.readFileSync('/etc/os-release', 'utf8'));
	} catch {
		return false;
	}
}

function isRoot() {
	return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Whether `sudo -n` (never prompting) may run commands as root here. */
function sudoWorks() {
	const r = spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore', env: process.env });
	return !r.error && r.status === 0;
}

/**
 * How to run apt-get here: `{ cmd, prefix }` (apt-get's arguments follow prefix), or `{ reason }`
 * when it cannot run as root. sudo resets the environment, so `env` carries DEBIAN_FRONTEND.
 */
function aptRunner({ root = isRoot(), sudo = () => sudoWorks() } = {}) {
	if (root) return { cmd: 'apt-get', prefix: [] };
	if (sudo())
		return { cmd: 'sudo', prefix: ['-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get'] };
	return { reason: 'not root, and `sudo -n` cannot run apt-get without a password' };
}

/** Whether every path in `paths` exists and is executable. */
function present(paths) {
	return paths.every((p) => {
		try {
			fs.accessSync(p, fs.constants.X_OK);
			return true;
		} catch {
			return false;
		}
	});
}

/**
 * Makes sure the programs in `need` (absolute paths) exist, installing the Debian `packages`
 * when they do not and this is Debian as root. Returns `{ ok: true }` or `{ ok: false, reason }`
 * where `reason` names what is missing and how to get it.
 */
function ensureDebianPackages({ packages, need, what, log = () => undefined }) {
	if (present(need)) return { ok: true };
	const missing = need.filter((p) => !present([p]));
	const how = `install the Debian/Ubuntu package(s) ${packages.join(' ')} (as root: apt-get install ${packages.join(' ')})`;
	if (!isDebian())
		return {
			ok: false,
			reason: `${what} is missing (${missing.join(', ')}); not a Debian system: ${how} or the equivalent for your OS`,
		};
	const apt = aptRunner();
	if (apt.reason)
		return {
			ok: false,
			reason: `${what} is missing (${missing.join(', ')}); ${apt.reason}, so it cannot be installed here: ${how}`,
		};
	const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
	const started = Date.now();
	if (!aptUpdated) {
		log(`${apt.cmd === 'sudo' ? 'sudo ' : ''}apt-get update`);
		const u = spawnSync(apt.cmd, [...apt.prefix, 'update', '-q'], {
			stdio: ['ignore', 'pipe', 'pipe'],
			env,
			encoding: 'utf8',
		});
		if (u.status !== 0)
			return { ok: false, reason: `apt-get update failed: ${(u.stderr || '').slice(-500)}` };
		aptUpdated = true;
	}
	log(`${apt.cmd === 'sudo' ? 'sudo ' : ''}apt-get install ${packages.join(' ')} (for ${what})`);
	const r = spawnSync(
		apt.cmd,
		[...apt.prefix, 'install', '-y', '-q', '--no-install-recommends', ...packages],
		{
			stdio: ['ignore', 'pipe', 'pipe'],
			env,
			encoding: 'utf8',
		},
	);
	if (r.status !== 0)
		return {
			ok: false,
			reason: `apt-get install ${packages.join(' ')} failed: ${(r.stderr || '').slice(-500)}`,
		};
	if (!present(need))
		return {
			ok: false,
			reason: `${what}: installed ${packages.join(' ')} but ${missing.join(', ')} is still missing`,
		};
	log(`installed ${packages.join(' ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	return { ok: true };
}

module.exports = { ensureDebianPackages, isDebian, isRoot, aptRunner, sudoWorks };
