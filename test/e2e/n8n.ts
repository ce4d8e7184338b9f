// Test-only. Runs a real n8n (the version tools/ensure-n8n.js caches) the way a user runs it:
// its own CLI, its own database, this package installed as a community package in a private
// user folder. Nothing here touches n8n's database directly: credentials and workflows go in
// through `n8n import:*`, executions come out through `n8n execute` or the public API.
//
// Every instance gets a folder under <tmp>/n8n-nodes-media-generation-e2e/<run>/<name>/ (outside
// the repository, where eslint would walk into n8n's own files) with its user folder and one log
// file per n8n command. `explain()` wraps a test body: on failure the error message carries the
// tails of those logs, and the folder is kept; on success it is removed.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs n8n as a user would (processes, files, ports) under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import { N8N_VERSION, ensureN8n, type N8nInstall } from '../../tools/ensure-n8n';

export const ROOT = path.resolve(__dirname, '..', '..');
const OUT_ROOT =
	process.env.MGEN_E2E_DIR || path.join(os.tmpdir(), 'n8n-nodes-media-generation-e2e');
const RUN_ID = `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`;
export const PACKAGE_NAME = 'n8n-nodes-media-generation';
export const NODE_TYPE = `${PACKAGE_NAME}.mediaGeneration`;
export const TRIGGER_TYPE = `${PACKAGE_NAME}.mediaGenerationTrigger`;
export const CREDENTIAL_TYPE = 'mediaGenerationApi';

const installs = new Map<string, N8nInstall>();
/** The cached n8n (installed on first use when the runner has not done it already). */
export function n8nInstall(version = N8N_VERSION): N8nInstall {
	const known = installs.get(version);
	if (known) return known;
	const node = process.env.MGEN_NODE24 || process.execPath;
	const install = ensureN8n(node, { log: () => undefined, env: process.env, version });
	installs.set(version, install);
	return install;
}

/** A port nothing listens on right now (the kernel's choice), on loopback. */
export function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.once('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address() as net.AddressInfo;
			srv.close(() => resolve(port));
		});
	});
}

let tarball: string | undefined;
/** `npm pack` of the built package, once per test process: exactly what npm would publish. */
function packedPackage(): string {
	if (tarball) return tarball;
	// MGEN_E2E_TARBALL: test a given tarball instead (say, the one `npm publish` would upload).
	if (process.env.MGEN_E2E_TARBALL) return (tarball = path.resolve(process.env.MGEN_E2E_TARBALL));
	const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
		n8n: { nodes: string[]; credentials: string[] };
	};
	const missing = [...pkg.n8n.nodes, ...pkg.n8n.credentials].filter(
		(f) => !fs.existsSync(path.join(ROOT, f)),
	);
	if (missing.length) {
		throw new Error(
			`the package is not built (missing ${missing.join(', ')}): run \`npm run build\``,
		);
	}
	const dest = path.join(OUT_ROOT, RUN_ID);
	fs.mkdirSync(dest, { recursive: true });
	const r = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], {
		cwd: ROOT,
		encoding: 'utf8',
		env: { ...process.env, npm_config_yes: 'true', npm_config_update_notifier: 'false' },
	});
	if (r.status !== 0) throw new Error(`npm pack failed:\n${r.stderr}`);
	const [{ filename }] = JSON.parse(r.stdout) as Array<{ filename: string }>;
	tarball = path.join(dest, filename);
	return tarball;
}

export interface CliResult {
	code: number | null;
	stdout: string;
	stderr: string;
	log: string;
}

export interface MemorySample {
	/** Kernel-tracked peak resident size of the process n8n runs in (VmHWM), bytes. */
	mainPeak: number;
	/** Highest sum of the resident sizes of n8n's process tree seen while sampling, bytes. */
	treePeak: number;
	samples: number;
}

export interface CredentialImport {
	id: string;
	name: string;
	type: string;
	data: Record<string, unknown>;
}

/** Reads a process's VmRSS/VmHWM (bytes); undefined once it is gone. */
function procStatus(pid: number): { rss: number; hwm: number } | undefined {
	try {
		const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
		const kb = (key: string) =>
			Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) * 1024;
		return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
	} catch {
		return undefined;
	}
}

/** The pid and all its descendants, from /proc/<pid>/stat parent ids. */
function processTree(root: number): number[] {
	const parent = new Map<number, number>();
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
			// The command name is in parentheses and may contain spaces: read after the last ')'.
			const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			parent.set(Number(entry), Number(fields[1]));
		} catch {
			// The process ended between readdir and read.
		}
	}
	const tree = [root];
	for (let i = 0; i < tree.length; i++) {
		for (const [pid, ppid] of parent) if (ppid === tree[i]) tree.push(pid);
	}
	return tree;
}

/**
 * Samples the memory of a process tree every `intervalMs` until stopped. `resetPeak`: for a
 * process that runs on (a started n8n), first resets its VmHWM to its current resident size
 * (Linux's /proc/<pid>/clear_refs, "5"), so that `mainPeak` is the peak of this window only, as
 * it is for a process started for the window (`n8n execute`).
 */
export function sampleMemory(pid: number, intervalMs = 100, options: { resetPeak?: boolean } = {}) {
	if (options.resetPeak) fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
	let treePeak = 0;
	let mainPeak = 0;
	let samples = 0;
	const take = () => {
		let sum = 0;
		for (const p of processTree(pid)) {
			const s = procStatus(p);
			if (!s) continue;
			sum += s.rss;
			if (p === pid) mainPeak = Math.max(mainPeak, s.hwm);
		}
		treePeak = Math.max(treePeak, sum);
		samples++;
	};
	take();
	const timer = setInterval(take, intervalMs);
	return {
		/** Takes a last sample (call it before the process exits, or VmHWM is lost). */
		sample: take,
		stop(): MemorySample {
			clearInterval(timer);
			return { mainPeak, treePeak, samples };
		},
	};
}

export class N8nInstance {
	readonly dir: string;
	readonly userFolder: string;
	readonly logsDir: string;
	readonly binaryDataDir: string;
	readonly env: NodeJS.ProcessEnv;
	private logSeq = 0;
	private server?: ChildProcess;
	private serverLog?: string;
	private failed = false;

	private constructor(
		readonly name: string,
		readonly port: number,
		readonly brokerPort: number,
		/** The n8n it runs (default: the cached N8N_VERSION). */
		readonly install: N8nInstall,
	) {
		this.dir = path.join(OUT_ROOT, RUN_ID, name);
		this.userFolder = path.join(this.dir, 'user');
		this.logsDir = path.join(this.dir, 'logs');
		// n8n 2.x's default N8N_BINARY_DATA_STORAGE_PATH (1.x used .n8n/binaryData).
		this.binaryDataDir = path.join(this.userFolder, '.n8n', 'storage');
		fs.mkdirSync(this.logsDir, { recursive: true });
		const env: NodeJS.ProcessEnv = { ...process.env };
		// Nothing of the developer's or the test runner's n8n settings leaks in.
		for (const key of Object.keys(env)) {
			if (key.startsWith('N8N_') || key.startsWith('DB_') || key.startsWith('EXECUTIONS_'))
				delete env[key];
			if (/^(https?|all|no)_proxy$/i.test(key)) delete env[key];
		}
		Object.assign(env, {
			NODE_ENV: 'production',
			N8N_USER_FOLDER: this.userFolder,
			N8N_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			N8N_HOST: '127.0.0.1',
			N8N_PORT: String(port),
			N8N_PROTOCOL: 'http',
			WEBHOOK_URL: `http://127.0.0.1:${port}/`,
			N8N_RUNNERS_BROKER_PORT: String(brokerPort),
			N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
			N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem',
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_PERSONALIZATION_ENABLED: 'false',
			N8N_HIRING_BANNER_ENABLED: 'false',
			N8N_SECURE_COOKIE: 'false',
			N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
			// info, not debug: at debug the console format prefixes every line, execute's JSON included.
			N8N_LOG_LEVEL: 'info',
			N8N_LOG_OUTPUT: 'console',
			NO_COLOR: '1',
		});
		this.env = env;
	}

	/**
	 * A fresh user folder with the packed package installed as a community package
	 * (`install: false`: nothing installed, the test installs it its own way). `n8nVersion`: the
	 * n8n to run (default the cached N8N_VERSION).
	 */
	static async create(
		name: string,
		options: { install?: boolean; n8nVersion?: string } = {},
	): Promise<N8nInstance> {
		const install = n8nInstall(options.n8nVersion);
		const instance = new N8nInstance(name, await freePort(), await freePort(), install);
		if (options.install !== false) instance.installPackage();
		return instance;
	}

	/** What n8n's community-package installer leaves: the package unpacked under
	 * .n8n/nodes/node_modules without dev/peer dependencies, and the nodes/package.json ledger. */
	private installPackage() {
		const nodesDir = path.join(this.userFolder, '.n8n', 'nodes');
		const target = path.join(nodesDir, 'node_modules', PACKAGE_NAME);
		fs.mkdirSync(target, { recursive: true });
		const r = spawnSync('tar', ['-xzf', packedPackage(), '-C', target, '--strip-components=1'], {
			encoding: 'utf8',
		});
		if (r.status !== 0) throw new Error(`tar failed: ${r.stderr}`);
		const pkgFile = path.join(target, 'package.json');
		const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as Record<string, unknown> & {
			version: string;
		};
		delete pkg.devDependencies;
		delete pkg.peerDependencies;
		delete pkg.optionalDependencies;
		fs.writeFileSync(pkgFile, JSON.stringify(pkg, null, 2));
		fs.writeFileSync(
			path.join(nodesDir, 'package.json'),
			JSON.stringify(
				{ name: 'installed-nodes', private: true, dependencies: { [PACKAGE_NAME]: pkg.version } },
				null,
				2,
			),
		);
	}

	/** Puts a test-only node file (`<Name>.node.js`) in n8n's custom-nodes folder; its type is `CUSTOM.<name>`. */
	installCustomNode(file: string) {
		const dir = path.join(this.userFolder, '.n8n', 'custom');
		fs.mkdirSync(dir, { recursive: true });
		fs.copyFileSync(file, path.join(dir, path.basename(file)));
	}

	/** Where the package sits in the user folder. */
	get packageDir() {
		return path.join(this.userFolder, '.n8n', 'nodes', 'node_modules', PACKAGE_NAME);
	}

	get baseUrl() {
		return `http://127.0.0.1:${this.port}`;
	}

	private newLog(label: string) {
		this.logSeq++;
		return path.join(this.logsDir, `${String(this.logSeq).padStart(2, '0')}-${label}.log`);
	}

	/** Runs `n8n <args>` to completion under Node 24; rejects (with the log tail) on a non-zero exit. */
	cli(
		args: string[],
		options: {
			label?: string;
			timeoutMs?: number;
			allowFailure?: boolean;
			onSpawn?: (pid: number) => void;
		} = {},
	): Promise<CliResult> {
		const { node, bin } = this.install;
		const log = this.newLog(options.label ?? args[0].replace(/[^a-z0-9]+/gi, '-'));
		const timeoutMs = options.timeoutMs ?? 120_000;
		return new Promise((resolve, reject) => {
			const child = spawn(node, [bin, ...args], {
				cwd: this.dir,
				env: this.env,
				stdio: ['ignore', 'pipe', 'pipe'],
			});
			options.onSpawn?.(child.pid!);
			const out: Buffer[] = [];
			const err: Buffer[] = [];
			const file = fs.createWriteStream(log);
			file.write(`$ n8n ${args.join(' ')}\n`);
			child.stdout!.on('data', (c: Buffer) => {
				out.push(c);
				file.write(c);
			});
			child.stderr!.on('data', (c: Buffer) => {
				err.push(c);
				file.write(c);
			});
			const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
			child.on('error', reject);
			child.on('close', (code, signal) => {
				clearTimeout(timer);
				file.end(`\n[exit ${code ?? signal}]\n`);
				const result = {
					code,
					stdout: Buffer.concat(out).toString('utf8'),
					stderr: Buffer.concat(err).toString('utf8'),
					log,
				};
				if (code !== 0 && !options.allowFailure) {
					reject(
						new Error(
							`n8n ${args.join(' ')} exited with ${code ?? signal}${signal === 'SIGKILL' ? ` (killed after ${timeoutMs} ms)` : ''}\n${tailOf(log)}`,
						),
					);
				} else resolve(result);
			});
		});
	}

	async importCredentials(credentials: CredentialImport[]) {
		const file = path.join(this.dir, `credentials-${this.logSeq + 1}.json`);
		fs.writeFileSync(file, JSON.stringify(credentials, null, 2));
		try {
			await this.cli(['import:credentials', `--input=${file}`], { label: 'import-credentials' });
		} finally {
			// The file holds the API key in clear: it lives only as long as the import.
			fs.rmSync(file, { force: true });
		}
	}

	/** One `n8n import:workflow` for them all (each n8n command costs seconds of start-up). */
	async importWorkflows(workflows: Array<Record<string, unknown>>) {
		const label = `import-workflows-${workflows.map((w) => String(w.id)).join('-')}`.slice(0, 80);
		const file = path.join(this.dir, `${label}.json`);
		fs.writeFileSync(file, JSON.stringify(workflows, null, 2));
		await this.cli(['import:workflow', `--input=${file}`], { label });
	}

	/**
	 * `n8n execute --id <id> --rawOutput`: the run's JSON (n8n's own log lines come first on
	 * stdout, then the JSON document). With `memory`, the process tree is sampled meanwhile.
	 */
	async execute(
		id: string,
		options: { memory?: boolean; timeoutMs?: number } = {},
	): Promise<{ run: ExecutionJson; memory?: MemorySample; result: CliResult }> {
		let sampler: ReturnType<typeof sampleMemory> | undefined;
		const result = await this.cli(['execute', `--id=${id}`, '--rawOutput'], {
			label: `execute-${id}`,
			timeoutMs: options.timeoutMs,
			allowFailure: true,
			// VmHWM vanishes with the process: the sampler's 100 ms ticks read it while it runs.
			onSpawn: (p) => {
				if (options.memory) sampler = sampleMemory(p);
			},
		});
		const memory = sampler?.stop();
		const run = parseRunJson(result.stdout);
		if (result.code !== 0 || !run) {
			throw new Error(`n8n execute --id=${id} failed (exit ${result.code})\n${tailOf(result.log)}`);
		}
		return { run, memory, result };
	}

	/**
	 * `n8n start` in the background; resolves once /healthz/readiness answers 200. The task
	 * broker's port was free when the instance was made, but an outgoing connection of another
	 * process can take it before the start (the kernel hands out the same ephemeral ports): then
	 * the start is tried again on a port free now (the broker's port is n8n's own business, unlike
	 * the main port, which the workflows' URLs hold).
	 */
	async start(): Promise<void> {
		let failure = '';
		for (let attempt = 1; attempt <= 3; attempt++) {
			try {
				return await this.startOnce();
			} catch (error) {
				failure = (error as Error).message;
			}
			if (!/Task Broker's port \d+ is already in use/.test(failure)) break;
			this.env.N8N_RUNNERS_BROKER_PORT = String(await freePort());
		}
		throw new Error(failure);
	}

	private async startOnce(): Promise<void> {
		const { node, bin } = this.install;
		this.serverLog = this.newLog('start');
		const file = fs.openSync(this.serverLog, 'a');
		const child = spawn(node, [bin, 'start'], {
			cwd: this.dir,
			env: this.env,
			stdio: ['ignore', file, file],
		});
		fs.closeSync(file);
		this.server = child;
		const deadline = Date.now() + 90_000;
		let exited: number | null | undefined;
		child.once('exit', (code) => {
			exited = code;
		});
		for (;;) {
			if (exited !== undefined)
				throw new Error(`n8n start exited with ${exited}\n${tailOf(this.serverLog)}`);
			try {
				const res = await fetch(`${this.baseUrl}/healthz/readiness`);
				if (res.status === 200) return;
			} catch {
				// Not listening yet.
			}
			if (Date.now() > deadline)
				throw new Error(`n8n start not ready after 90 s\n${tailOf(this.serverLog)}`);
			await new Promise((r) => setTimeout(r, 250));
		}
	}

	get serverPid(): number | undefined {
		return this.server?.pid;
	}

	/** The server's log so far (to look for what n8n said about the package). */
	serverLogText(): string {
		return this.serverLog ? fs.readFileSync(this.serverLog, 'utf8') : '';
	}

	async stop(): Promise<void> {
		const child = this.server;
		if (!child || child.exitCode !== null) return;
		await new Promise<void>((resolve) => {
			const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
			child.once('exit', () => {
				clearTimeout(timer);
				resolve();
			});
			child.kill('SIGTERM');
		});
		this.server = undefined;
	}

	/**
	 * SIGKILL to the server process, as the kernel's OOM killer or a host that dies would: no
	 * shutdown hook runs, nothing more is saved. Its task runner loses its broker and exits.
	 */
	async kill(): Promise<void> {
		const child = this.server;
		if (!child || child.exitCode !== null || child.signalCode !== null) return;
		await new Promise<void>((resolve) => {
			child.once('exit', () => resolve());
			child.kill('SIGKILL');
		});
		this.server = undefined;
	}

	/** Absolute path of a binary item n8n stored in filesystem mode. */
	binaryFile(binary: { id?: string }): string {
		const id = binary.id ?? '';
		const m = /^filesystem(?:-v2)?:(.+)$/.exec(id);
		if (!m) throw new Error(`binary data is not in filesystem mode: id ${JSON.stringify(id)}`);
		const file = path.join(this.binaryDataDir, m[1]);
		if (!file.startsWith(this.binaryDataDir + path.sep))
			throw new Error(`binary id escapes the store: ${id}`);
		return file;
	}

	/**
	 * Tails of this instance's logs, newest last: the server's (when started) and the three most
	 * recent commands'; the others stay in the folder.
	 */
	logTails(lines = 40): string {
		const files = fs.readdirSync(this.logsDir).sort();
		const pick = new Set(files.slice(-3));
		if (this.serverLog) pick.add(path.basename(this.serverLog));
		const skipped = files.length - pick.size;
		const head = skipped > 0 ? `(${skipped} older logs not shown)\n` : '';
		return (
			head +
			files
				.filter((f) => pick.has(f))
				.map((f) => tailOf(path.join(this.logsDir, f), lines))
				.join('\n')
		);
	}

	/** Runs a test body; on failure the message gets the n8n logs' tails and the folder is kept. */
	async explain<T>(fn: () => Promise<T>): Promise<T> {
		try {
			return await fn();
		} catch (error) {
			this.failed = true;
			const e = error instanceof Error ? error : new Error(String(error));
			e.message += `\n\n=== n8n logs kept in ${this.logsDir} ===\n${this.logTails()}`;
			throw e;
		}
	}

	/** Stops the server; removes the folder unless a test failed (then it is kept to read). */
	async dispose(): Promise<void> {
		await this.stop();
		if (!this.failed && !process.env.MGEN_KEEP_E2E)
			fs.rmSync(this.dir, { recursive: true, force: true });
	}
}

/**
 * Last lines of a log file, headed by its name. The noise is left out: database migration lines,
 * and the execution JSON `execute` prints (it is in the file).
 */
export function tailOf(file: string, lines = 40): string {
	let text = '';
	try {
		text = fs.readFileSync(file, 'utf8');
	} catch {
		return `--- ${file}: (missing) ---`;
	}
	const all = text.split('\n');
	const kept: string[] = [];
	for (let i = 0; i < all.length; i++) {
		if (/^(Starting|Finished) migration /.test(all[i])) continue;
		if (all[i] === '{') {
			const end = all.indexOf('}', i);
			if (end > i) {
				kept.push(`[execution JSON, ${end - i + 1} lines, in the file]`);
				i = end;
				continue;
			}
		}
		kept.push(all[i]);
	}
	return `--- ${file} (last ${Math.min(lines, kept.length)} lines, noise left out) ---\n${kept.slice(-lines).join('\n')}`;
}

/** The part of IRun that `n8n execute --rawOutput` prints and the tests read. */
export interface ExecutionJson {
	status?: string;
	data: {
		resultData: {
			error?: { message?: string };
			runData: Record<string, Array<NodeRunJson>>;
			lastNodeExecuted?: string;
		};
	};
}

export interface NodeRunJson {
	executionStatus?: string;
	/** Epoch ms the node run started. */
	startTime?: number;
	/** Milliseconds the node ran. */
	executionTime?: number;
	error?: { message?: string; description?: string };
	data?: { main: Array<Array<ItemJson> | null> };
}

export interface ItemJson {
	json: Record<string, unknown>;
	binary?: Record<string, BinaryJson>;
	pairedItem?: unknown;
}

export interface BinaryJson {
	id?: string;
	data?: string;
	fileName?: string;
	mimeType?: string;
	fileSize?: string;
	fileExtension?: string;
}

/**
 * The run's JSON document in `execute --rawOutput` stdout. n8n's own log lines share stdout, so
 * take the first block from a line `{` to a line `}` (JSON.stringify with indent 2) that parses.
 */
export function parseRunJson(stdout: string): ExecutionJson | undefined {
	const lines = stdout.split('\n');
	for (let i = 0; i < lines.length; i++) {
		if (lines[i] !== '{') continue;
		for (let j = i + 1; j < lines.length; j++) {
			if (lines[j] !== '}') continue;
			try {
				const doc = JSON.parse(lines.slice(i, j + 1).join('\n')) as ExecutionJson;
				if (doc?.data?.resultData) return doc;
			} catch {
				// A log line that happens to be "}": keep looking.
			}
		}
	}
	return undefined;
}

/** Items of one output of a node's last run. */
export function outputItems(run: ExecutionJson, node: string, output = 0): ItemJson[] {
	const runs = run.data.resultData.runData[node];
	if (!runs?.length)
		throw new Error(
			`node "${node}" did not run; ran: ${Object.keys(run.data.resultData.runData).join(', ')}`,
		);
	return runs[runs.length - 1].data?.main[output] ?? [];
}

/** Deletes the run folder when every instance cleaned up after itself. */
export function removeEmptyRunFolder() {
	const dir = path.join(OUT_ROOT, RUN_ID);
	try {
		const left = fs.readdirSync(dir).filter((f) => !f.endsWith('.tgz'));
		if (!left.length) fs.rmSync(dir, { recursive: true, force: true });
	} catch {
		// Already gone.
	}
}

/** CPU time (user + system, ms) used so far by a process and its descendants. */
export function processTreeCpuMs(root: number): number {
	const tick = 10; // USER_HZ is 100 on Linux
	let total = 0;
	for (const pid of processTree(root)) {
		try {
			const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
			const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			total += (Number(fields[11]) + Number(fields[12])) * tick;
		} catch {
			// Gone meanwhile.
		}
	}
	return total;
}

/** An execution as n8n's public API lists it (with its data). */
export interface ExecutionSummary {
	id: string;
	finished: boolean;
	status: string;
	workflowId: string;
	startedAt?: string;
	stoppedAt?: string;
	waitTill?: string | null;
	data?: ExecutionJson['data'];
}

/** Sets up the owner account of a started instance and returns a public-API key. */
export async function createOwnerApiKey(instance: N8nInstance): Promise<string> {
	const call = async (
		pathname: string,
		init: { method?: string; body?: unknown; cookie?: string } = {},
	) => {
		const res = await fetch(`${instance.baseUrl}/rest${pathname}`, {
			method: init.method ?? 'GET',
			headers: {
				'content-type': 'application/json',
				'browser-id': 'mgen-e2e-browser',
				...(init.cookie ? { cookie: init.cookie } : {}),
			},
			body: init.body === undefined ? undefined : JSON.stringify(init.body),
		});
		const text = await res.text();
		if (!res.ok)
			throw new Error(
				`${init.method ?? 'GET'} /rest${pathname}: HTTP ${res.status} ${text.slice(0, 300)}`,
			);
		return { res, json: JSON.parse(text) as { data: unknown } };
	};
	const { res } = await call('/owner/setup', {
		method: 'POST',
		body: {
			email: 'e2e@example.com',
			firstName: 'End',
			lastName: 'ToEnd',
			password: `${randomBytes(8).toString('hex')}-Aa1`,
		},
	});
	const cookie = (res.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
	const scopes = (await call('/api-keys/scopes', { cookie })).json.data as string[];
	const created = (
		await call('/api-keys', {
			method: 'POST',
			cookie,
			body: { label: 'e2e', scopes, expiresAt: null },
		})
	).json.data as { rawApiKey?: string; apiKey?: string };
	const key = created.rawApiKey ?? created.apiKey;
	if (!key) throw new Error('no key in the api-keys answer');
	return key;
}

/** Executions of a workflow through the public API, with their data. */
export async function listExecutions(
	instance: N8nInstance,
	apiKey: string,
	workflowId: string,
	status?: string,
	includeData = true,
): Promise<ExecutionSummary[]> {
	const query = `workflowId=${workflowId}&includeData=${includeData}&limit=100${status ? `&status=${status}` : ''}`;
	const res = await fetch(`${instance.baseUrl}/api/v1/executions?${query}`, {
		headers: { 'X-N8N-API-KEY': apiKey },
	});
	if (!res.ok)
		throw new Error(
			`GET /api/v1/executions: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`,
		);
	return ((await res.json()) as { data: ExecutionSummary[] }).data;
}
