'use strict';
// Fetches a pinned n8n into the project's cache for the end-to-end layer (test/e2e), once per
// machine. Only Node's built-ins: it runs from tools/run.js on a fresh machine that has Node 20,
// npm and the cached Node 24 binary.
//
// Why 2.41.1 and not the newest 2.41.x: the registry reached here lacks @n8n/agents@0.26.2,
// which 2.41.3 needs; 2.41.1 installs once linkedom is held at 0.18.14 (newer linkedom releases
// are not on that registry either). The same version as our n8n-core devDependency.
//
// Install steps, and why each:
//   1. `npm install --ignore-scripts`: plain installs fail on the native packages that download
//      their own binaries at install time (offline here), and on Node 20 isolated-vm cannot compile.
//   2. `npm rebuild` of the native modules `n8n start` / `n8n execute` load, under Node 24 with
//      its headers (npm_config_nodedir): sqlite3 (the default database; its prebuilt binary is
//      a download the offline install cannot make, so it compiles from source, about a minute)
//      and isolated-vm (n8n 2.x's default "vm" expression engine; without it every command exits
//      with "Could not initialize the vm expression engine"; it ships a Node 24 prebuild).
//      The other packages with install scripts (kafka, oracledb, ssh2's cpu-features, sentry's
//      profilers, msgpackr-extract) are optional or only loaded by nodes these tests do not use.
//   3. a smoke run of `n8n --version` under Node 24, then a stamp, so later runs take no time.
// The install happens in a scratch folder renamed into place at the end, under a lock folder,
// so two runs on the same machine neither race nor leave a half install that looks complete.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// Not 2.41.3, the newest on the npm registry: it needs @n8n/agents 0.26.2, which the registry copy
// these machines reach lacks (docs/compatibility.md). Move it when `npm view @n8n/agents@0.26.2` answers.
const N8N_VERSION = '2.41.1';
// The oldest n8n the package supports (docs/compatibility.md says why), which the compat layer
// (test/compat) runs next to N8N_VERSION.
const N8N_OLDEST_VERSION = '2.14.2';
const OVERRIDES = { linkedom: '0.18.14' };
// Per version, on top of OVERRIDES. n8n-nodes-base 2.14 takes xlsx as a tarball from
// cdn.sheetjs.com, which only the npm registry being reachable rules out; 0.18.5 is the last
// xlsx on npm (only the Spreadsheet File nodes load it, none of which the tests use).
const VERSION_OVERRIDES = { [N8N_OLDEST_VERSION]: { xlsx: '0.18.5' } };
const NATIVE_MODULES = ['sqlite3', 'isolated-vm'];
const STAMP_NAME = '.mgen-n8n-stamp';

function overridesOf(version) {
	return { ...OVERRIDES, ...VERSION_OVERRIDES[version] };
}

function stampText(node24Bin, version) {
	return JSON.stringify({
		n8n: version,
		overrides: overridesOf(version),
		native: NATIVE_MODULES,
		node: nodeVersion(node24Bin),
	});
}

function nodeVersion(node24Bin) {
	const r = spawnSync(node24Bin, ['--version'], { encoding: 'utf8' });
	return (r.stdout || '').trim();
}

function sleepMs(ms) {
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
}

function tail(file, lines = 60) {
	try {
		return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
	} catch {
		return '(no log)';
	}
}

function duKb(dir) {
	const r = spawnSync('du', ['-sk', dir], { encoding: 'utf8' });
	return Number((r.stdout || '0').split('\t')[0]) || 0;
}

/** Runs a command with its output going to `logFile`; throws with the log's tail on failure. */
function logged(cmd, args, { cwd, env, logFile, what }) {
	const fd = fs.openSync(logFile, 'a');
	fs.writeSync(fd, `\n$ ${[cmd, ...args].join(' ')}\n`);
	const started = Date.now();
	const r = spawnSync(cmd, args, { cwd, env, stdio: ['ignore', fd, fd] });
	fs.closeSync(fd);
	if (r.error || r.status !== 0) {
		const why = r.error ? r.error.message : `exit ${r.status ?? r.signal}`;
		const error = new Error(
			`${what} failed (${why}): ${[cmd, ...args].join(' ')}\n--- last lines of ${logFile} ---\n${tail(logFile)}`,
		);
		error.exitCode = 1;
		throw error;
	}
	return Date.now() - started;
}

/**
 * Native modules another cached n8n (same Node 24) has already built in the same version are
 * copied instead of compiled: sqlite3 compiles from source for minutes, and n8n versions share
 * it (5.1.7 in 2.14.2 and 2.41.1). Returns the modules copied; the load check below still runs.
 */
function reuseNativeBuilds(scratch, cacheDir, version, node24Bin, modules) {
	const node = nodeVersion(node24Bin);
	const versionOf = (dir, m) => {
		try {
			return JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', m, 'package.json'), 'utf8'))
				.version;
		} catch {
			return undefined;
		}
	};
	const others = fs
		.readdirSync(cacheDir)
		.filter((d) => /^n8n-[0-9.]+$/.test(d) && d !== `n8n-${version}`)
		.map((d) => path.join(cacheDir, d))
		.filter((dir) => {
			try {
				return JSON.parse(fs.readFileSync(path.join(dir, STAMP_NAME), 'utf8')).node === node;
			} catch {
				return false;
			}
		});
	return modules.filter((m) => {
		const want = versionOf(scratch, m);
		const from = others.find(
			(dir) =>
				want &&
				versionOf(dir, m) === want &&
				fs.existsSync(path.join(dir, 'node_modules', m, 'build', 'Release')),
		);
		if (!from) return false;
		fs.rmSync(path.join(scratch, 'node_modules', m, 'build'), { recursive: true, force: true });
		fs.cpSync(
			path.join(from, 'node_modules', m, 'build'),
			path.join(scratch, 'node_modules', m, 'build'),
			{ recursive: true },
		);
		return true;
	});
}

function cacheDirOf(env = {}) {
	return (
		env.MGEN_CACHE_DIR ||
		process.env.MGEN_CACHE_DIR ||
		path.join(os.homedir(), '.cache', 'n8n-nodes-media-generation')
	);
}

/** Where `ensureN8n` installs a version (the folder exists only once the install is complete). */
function n8nDir(version = N8N_VERSION, env = {}) {
	return path.join(cacheDirOf(env), `n8n-${version}`);
}

/** Whether a complete install of `version` is in the cache (its stamp is written last). */
function n8nInstalled(version = N8N_VERSION, env = {}) {
	const dir = n8nDir(version, env);
	return (
		fs.existsSync(path.join(dir, STAMP_NAME)) &&
		fs.existsSync(path.join(dir, 'node_modules', 'n8n', 'package.json'))
	);
}

/**
 * Ensures n8n is installed in `$MGEN_CACHE_DIR/n8n-<version>` and returns where.
 * @param {string} node24Bin the Node 24 binary
 * @param {{ log?: (m: string) => void, env?: Record<string, string>, version?: string }} options
 *   env: PATH with Node 24 first, npm_config_nodedir, MGEN_CACHE_DIR (from tools/run.js);
 *   version: the n8n version (default N8N_VERSION)
 * @returns {{ dir: string, bin: string, version: string, node: string }}
 */
function ensureN8n(
	node24Bin,
	{ log = (m) => process.stdout.write(`[n8n] ${m}\n`), env = {}, version = N8N_VERSION } = {},
) {
	const cacheDir = cacheDirOf(env);
	const dir = n8nDir(version, env);
	const bin = path.join(dir, 'node_modules', 'n8n', 'bin', 'n8n');
	const result = { dir, bin, version, node: node24Bin };
	const want = stampText(node24Bin, version);
	const ready = () => {
		try {
			return fs.readFileSync(path.join(dir, STAMP_NAME), 'utf8') === want && fs.existsSync(bin);
		} catch {
			return false;
		}
	};
	if (ready()) {
		log(`n8n ${version}: cached in ${dir}`);
		return result;
	}

	fs.mkdirSync(cacheDir, { recursive: true });
	const lock = path.join(cacheDir, `n8n-${version}.lock`);
	let waitedSince = 0;
	for (;;) {
		try {
			fs.mkdirSync(lock);
			fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
			break;
		} catch (error) {
			if (error.code !== 'EEXIST') throw error;
			const pid = Number(fs.readFileSync(path.join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }));
			if (pid && !alive(pid)) {
				log(`removing stale install lock of process ${pid}`);
				fs.rmSync(lock, { recursive: true, force: true });
				continue;
			}
			if (!waitedSince) {
				waitedSince = Date.now();
				log(`another process (${pid || '?'}) is installing n8n ${version}; waiting`);
			}
			if (Date.now() - waitedSince > 30 * 60 * 1000) {
				throw new Error(`gave up waiting for the n8n install lock ${lock}`);
			}
			sleepMs(2000);
		}
	}

	let scratch = '';
	try {
		if (ready()) {
			log(`n8n ${version}: installed by another run meanwhile`);
			return result;
		}
		scratch = `${dir}.partial-${process.pid}`;
		fs.rmSync(scratch, { recursive: true, force: true });
		fs.mkdirSync(scratch, { recursive: true });
		const logFile = path.join(cacheDir, `n8n-${version}-install.log`);
		fs.writeFileSync(logFile, `install of n8n ${version} started ${new Date().toISOString()}\n`);
		fs.writeFileSync(
			path.join(scratch, 'package.json'),
			JSON.stringify(
				{
					private: true,
					name: 'mgen-n8n-cache',
					dependencies: { n8n: version },
					overrides: overridesOf(version),
				},
				null,
				2,
			) + '\n',
		);
		const installEnv = {
			...process.env,
			...env,
			// The machines' user npmrc sets yes=false and nodedir=/usr (Node 20's headers).
			npm_config_yes: 'true',
			npm_config_nodedir: env.npm_config_nodedir || path.dirname(path.dirname(node24Bin)),
			npm_config_fund: 'false',
			npm_config_audit: 'false',
			npm_config_update_notifier: 'false',
			npm_config_loglevel: 'http',
			npm_config_progress: 'false',
			CI: 'true',
		};
		installEnv.PATH = `${path.dirname(node24Bin)}${path.delimiter}${installEnv.PATH || ''}`;

		log(`installing n8n ${version} into ${dir} (a few minutes, once; log: ${logFile})`);
		const tInstall = logged('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], {
			cwd: scratch,
			env: installEnv,
			logFile,
			what: 'npm install of n8n',
		});
		// Older n8n versions have no isolated-vm (their expression engine runs in-process).
		const native = NATIVE_MODULES.filter((m) =>
			fs.existsSync(path.join(scratch, 'node_modules', m)),
		);
		const reused = reuseNativeBuilds(scratch, cacheDir, version, node24Bin, native);
		const rebuild = native.filter((m) => !reused.includes(m));
		log(
			`npm install: ${(tInstall / 1000).toFixed(0)} s; ${reused.length ? `${reused.join(', ')} build reused from another cached n8n; ` : ''}rebuilding ${rebuild.join(', ') || 'nothing'} for Node 24`,
		);
		const tRebuild = rebuild.length
			? logged('npm', ['rebuild', ...rebuild], {
					cwd: scratch,
					env: installEnv,
					logFile,
					what: 'npm rebuild of the native modules',
				})
			: 0;
		// Load the native modules under Node 24 now, so a broken build fails here, not mid-test.
		logged(node24Bin, ['-e', native.map((m) => `require(${JSON.stringify(m)});`).join('')], {
			cwd: path.join(scratch, 'node_modules', 'n8n'),
			env: installEnv,
			logFile,
			what: 'loading the native modules',
		});
		logged(node24Bin, [path.join(scratch, 'node_modules', 'n8n', 'bin', 'n8n'), '--version'], {
			cwd: scratch,
			env: {
				...installEnv,
				N8N_USER_FOLDER: fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-n8n-version-')),
			},
			logFile,
			what: 'n8n --version',
		});
		fs.writeFileSync(path.join(scratch, STAMP_NAME), want);
		fs.rmSync(dir, { recursive: true, force: true });
		fs.renameSync(scratch, dir);
		const sizeMb = duKb(dir) / 1024;
		log(
			`n8n ${version} ready: install ${(tInstall / 1000).toFixed(0)} s, rebuild ${(tRebuild / 1000).toFixed(0)} s, ${sizeMb.toFixed(0)} MB on disk`,
		);
		return result;
	} finally {
		// A failed install leaves its log (named in the error), not 2-3 GB of scratch.
		if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
		fs.rmSync(lock, { recursive: true, force: true });
	}
}

module.exports = { ensureN8n, n8nDir, n8nInstalled, N8N_VERSION, N8N_OLDEST_VERSION };

if (require.main === module) {
	// `node tools/ensure-n8n.js [node24-binary] [n8n-version]`: install by hand (the test runner
	// does it itself).
	const node24 = process.argv[2] || process.env.MGEN_NODE24;
	if (!node24) {
		process.stderr.write('usage: node tools/ensure-n8n.js <node24-binary> [n8n-version]\n');
		process.exit(2);
	}
	try {
		const r = ensureN8n(node24, { version: process.argv[3] || N8N_VERSION });
		process.stdout.write(`${JSON.stringify(r)}\n`);
	} catch (error) {
		process.stderr.write(`${error.message}\n`);
		process.exit(error.exitCode || 1);
	}
}
