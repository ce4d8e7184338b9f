// Test-only. n8n in queue mode on one machine, as n8n supports it: Redis (the queue), PostgreSQL
// (the database), one main process, workers and webhook processes, each process with its own
// user folder holding this package installed as a community package (like one container each).
// Nothing is shared but Redis, PostgreSQL and the environment (the encryption key above all):
// binary data stays in n8n's queue-mode default, `database` mode (N8N_DEFAULT_BINARY_DATA_MODE
// unset), so files live in PostgreSQL's `binary_data` table. A round-robin HTTP balancer in the
// test process stands in front of the webhook processes; WEBHOOK_URL of every process points at
// it, as it would at a load balancer.
//
// The main starts first (it runs the migrations), then workers and webhook processes start
// together. Each n8n process leads its own process group (its task runner is in it), so
// stopping it stops the group; pids also go to MGEN_QUEUE_PIDS for tools/run.js to reap if jest
// dies. `restartMain()` stops and starts the main alone (the workers and webhook processes keep
// running), which is what a test of a parked execution needs.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs n8n as a user would (processes, files, ports) under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';

import {
	freePort,
	recordPid,
	rssOf,
	startPostgres,
	startRedis,
	stopChild,
	type PostgresServer,
	type RedisServer,
} from '../../tools/queue-services';
import { CREDENTIAL_TYPE, N8nInstance, n8nInstall, tailOf, type ExecutionJson } from '../e2e/n8n';

export type Role = 'main' | 'worker' | 'webhook';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Settings of every process of the cluster (what a user sets, see docs/queue-mode.md). */
export interface ClusterSettings {
	/** `n8n worker --concurrency`: executions one worker runs at the same time. */
	workerConcurrency: number;
	/** Extra environment for every process. */
	env?: Record<string, string>;
}

export class N8nProcess {
	child?: ChildProcess;
	private logFile?: string;
	private starts = 0;
	/** Set when the process ended without being asked to. */
	crashed?: string;

	constructor(
		readonly name: string,
		readonly role: Role,
		readonly instance: N8nInstance,
		private readonly args: string[],
		/** A worker's `--concurrency`. */
		readonly concurrency?: number,
	) {}

	/** HTTP port: N8N_PORT of main and webhook processes, the health server of a worker. */
	get port() {
		return this.instance.port;
	}

	get baseUrl() {
		return `http://127.0.0.1:${this.port}`;
	}

	get pid(): number | undefined {
		return this.child?.pid;
	}

	get running(): boolean {
		return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
	}

	/** The child whose /healthz/readiness answered 200. */
	private readyChild?: ChildProcess;

	/** Running and ready: it answered /healthz/readiness since it was started (what a balancer's health check routes by). */
	get ready(): boolean {
		return this.running && !!this.child && this.readyChild === this.child;
	}

	/** Spawns the process and resolves once /healthz/readiness answers 200. */
	async start(timeoutMs = 120_000): Promise<number> {
		const { node, bin } = n8nInstall();
		this.starts++;
		this.logFile = path.join(this.instance.logsDir, `server-${this.role}-${this.starts}.log`);
		const out = fs.openSync(this.logFile, 'a');
		fs.writeSync(out, `$ n8n ${this.args.join(' ')}\n`);
		const started = Date.now();
		const child = spawn(node, [bin, ...this.args], {
			cwd: this.instance.dir,
			env: this.instance.env,
			stdio: ['ignore', out, out],
			detached: true,
		});
		fs.closeSync(out);
		this.child = child;
		this.crashed = undefined;
		recordPid(child.pid, `n8n ${this.name}`);
		child.once('exit', (code, signal) => {
			if (this.child === child && !this.stopping) this.crashed = `exited with ${code ?? signal}`;
		});
		for (;;) {
			if (!this.running)
				throw new Error(`n8n ${this.name} exited during start-up\n${tailOf(this.logFile, 60)}`);
			try {
				const res = await fetch(`${this.baseUrl}/healthz/readiness`);
				if (res.status === 200) {
					this.readyChild = child;
					return Date.now() - started;
				}
			} catch {
				// Not listening yet.
			}
			if (Date.now() - started > timeoutMs) {
				throw new Error(
					`n8n ${this.name} not ready after ${timeoutMs} ms\n${tailOf(this.logFile, 60)}`,
				);
			}
			await sleep(250);
		}
	}

	private stopping = false;

	/** SIGTERM (n8n's graceful shutdown), SIGKILL to the group after `graceMs`. */
	async stop(graceMs = 20_000): Promise<void> {
		this.stopping = true;
		try {
			await stopChild(this.child, 'SIGTERM', graceMs);
		} finally {
			this.stopping = false;
		}
	}

	/**
	 * SIGKILL to the n8n process only, as the kernel's OOM killer or a crashed container would:
	 * no shutdown hook runs. Its task runner (same process group) is reaped by `stop()` later.
	 */
	async kill(): Promise<void> {
		const child = this.child;
		if (!child || !this.running) return;
		this.stopping = true;
		await new Promise<void>((resolve) => {
			child.once('exit', () => resolve());
			child.kill('SIGKILL');
		});
		this.stopping = false;
	}

	/** Everything this process logged, every start included. */
	logText(): string {
		return fs
			.readdirSync(this.instance.logsDir)
			.filter((f) => f.startsWith(`server-${this.role}-`))
			.sort()
			.map((f) => fs.readFileSync(path.join(this.instance.logsDir, f), 'utf8'))
			.join('\n');
	}

	currentLogTail(lines = 40): string {
		return this.logFile ? tailOf(this.logFile, lines) : `--- ${this.name}: not started ---`;
	}

	/** Resident size of the n8n process (self) and of its group (with its task runner). */
	rss() {
		return this.pid && this.running ? rssOf(this.pid) : { self: 0, tree: 0, processes: 0 };
	}
}

/** One request the balancer forwarded. */
export interface BalancedRequest {
	backend: string;
	method: string;
	path: string;
	status: number;
	at: number;
	/** The caller hung up before the backend answered (the balancer then closed its connection to the backend). */
	callerGone?: boolean;
}

/**
 * Round-robin HTTP balancer over the webhook processes (what a user's load balancer does), routing
 * as n8n's own deployment configurations do (n8n-io/n8n-hosting, "webhook processors"):
 * `/webhook/`, `/webhook-waiting/`, `/form/` and `/form-waiting/` to the webhook processes, every
 * other path (`/rest`: n8n's signed links to binary data among them) to the main process. Each request is
 * forwarded whole to one backend; the log says which.
 */
class Balancer {
	readonly log: BalancedRequest[] = [];
	private next = 0;
	private server?: http.Server;
	port = 0;

	/** Set by `only()`: these processes instead of the webhook processes, in this order. */
	private pinned?: N8nProcess[];

	constructor(
		private readonly backends: () => N8nProcess[],
		private readonly main: () => N8nProcess | undefined,
	) {}

	/**
	 * Routes every request to `processes`, round robin starting with the first (sticky routing to
	 * one process, or the main in the rotation), until `restore()`.
	 */
	only(...processes: N8nProcess[]) {
		this.pinned = processes;
		this.next = 0;
	}

	restore() {
		this.pinned = undefined;
	}

	async start() {
		this.port = await freePort();
		this.server = http.createServer((req, res) => {
			const webhookPath = /^\/(webhook|webhook-waiting|form|form-waiting)(\/|\?|$)/.test(
				req.url ?? '',
			);
			const main = this.main();
			// Ready processes only, as a balancer's health check routes (one starting is left out).
			const live = webhookPath
				? (this.pinned ?? this.backends()).filter((b) => b.ready)
				: main?.ready
					? [main]
					: [];
			if (!live.length) {
				res.writeHead(502).end('no webhook process');
				return;
			}
			const backend = live[this.next++ % live.length];
			const entry: BalancedRequest = {
				backend: backend.name,
				method: req.method ?? '',
				path: req.url ?? '',
				status: 0,
				at: Date.now(),
			};
			this.log.push(entry);
			const upstream = http.request(
				{
					host: '127.0.0.1',
					port: backend.port,
					method: req.method,
					path: req.url,
					headers: req.headers,
				},
				(up) => {
					entry.status = up.statusCode ?? 0;
					res.writeHead(up.statusCode ?? 502, up.headers);
					up.pipe(res);
				},
			);
			// A caller that hangs up before the answer (a sender's timeout) closes the connection to
			// the backend too, as load balancers do (nginx by default): n8n sees what it would see.
			res.on('close', () => {
				if (res.writableFinished) return;
				entry.callerGone = true;
				upstream.destroy();
			});
			upstream.on('error', (e) => {
				if (entry.callerGone) return;
				entry.status = 502;
				if (!res.headersSent) res.writeHead(502);
				res.end(String(e));
			});
			req.pipe(upstream);
		});
		await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
	}

	get url() {
		return `http://127.0.0.1:${this.port}`;
	}

	async close() {
		if (!this.server) return;
		this.server.closeAllConnections();
		await new Promise<void>((r) => this.server!.close(() => r()));
	}
}

const MB = 1024 * 1024;

/** "worker-1 445 MB (+runner 114), …": peaks of `withMemory` for a log line. */
export function memoryLine(peaks: Record<string, { self: number; tree: number }>) {
	return Object.entries(peaks)
		.map(
			([name, m]) =>
				`${name} ${Math.round(m.self / MB)} MB${m.tree > m.self + MB ? ` (+runner ${Math.round((m.tree - m.self) / MB)})` : ''}`,
		)
		.join(', ');
}

export interface ExecutionSummary {
	id: string;
	finished: boolean;
	status: string;
	workflowId: string;
	mode?: string;
	retryOf?: string | null;
	startedAt?: string;
	stoppedAt?: string | null;
	data?: ExecutionJson['data'];
}

const OWNER = { email: 'queue@example.com', firstName: 'Queue', lastName: 'Mode' };
const BROWSER_ID = 'mgen-queue-browser';

export class QueueCluster {
	readonly root: string;
	readonly encryptionKey = randomBytes(24).toString('hex');
	redis!: RedisServer;
	postgres!: PostgresServer;
	main!: N8nProcess;
	readonly workers: N8nProcess[] = [];
	readonly webhooks: N8nProcess[] = [];
	readonly balancer = new Balancer(
		() => this.webhooks,
		() => this.main,
	);
	/** Milliseconds each start-up step took (printed by the layer). */
	readonly timings: Record<string, number> = {};
	private apiKey = '';
	private cookie = '';
	private readonly ownerSecret = `${randomUUID()}-Aa1`;
	private failed = false;
	private readonly seq = { worker: 0, webhook: 0 };

	private constructor(
		readonly settings: ClusterSettings,
		template: N8nInstance,
	) {
		// The instances' common run folder: <tmp>/n8n-nodes-media-generation-e2e/<run>/.
		this.root = path.join(path.dirname(template.dir), `queue-services-${process.pid}`);
		fs.mkdirSync(this.root, { recursive: true });
	}

	/**
	 * Redis, PostgreSQL, the balancer and the main process. Workers and webhook processes are
	 * added with add()/addWorker() once the main is up (it runs the migrations).
	 */
	static async create(settings: ClusterSettings): Promise<QueueCluster> {
		const main = await N8nInstance.create(`queue-main-${process.pid}`);
		const cluster = new QueueCluster(settings, main);
		let t = Date.now();
		cluster.redis = await startRedis({ dir: path.join(cluster.root, 'redis') });
		cluster.timings.redis = Date.now() - t;
		t = Date.now();
		cluster.postgres = await startPostgres({ dir: path.join(cluster.root, 'postgres') });
		cluster.timings.postgres = Date.now() - t;
		await cluster.balancer.start();
		cluster.configure(main, 'main');
		cluster.main = new N8nProcess('main', 'main', main, ['start']);
		return cluster;
	}

	/** The environment every process shares, plus the role's own. */
	private configure(instance: N8nInstance, role: Role) {
		Object.assign(instance.env, {
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(this.redis.port),
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(this.postgres.port),
			DB_POSTGRESDB_DATABASE: this.postgres.database,
			DB_POSTGRESDB_USER: this.postgres.user,
			DB_POSTGRESDB_PASSWORD: this.postgres.password,
			// The same key everywhere: credentials are decrypted on workers and webhook processes.
			N8N_ENCRYPTION_KEY: this.encryptionKey,
			// The resume URL and the trigger's production URL are computed where the node runs:
			// every process needs the public address of the webhook processes.
			WEBHOOK_URL: `${this.balancer.url}/`,
			// The main serves production and waiting webhooks too (n8n's default): the balancer
			// sends them to the webhook processes unless a test puts the main in the rotation
			// (a manual run parks on the main, which then receives callbacks itself).
			// A dead worker's job is noticed after the lock expires (default 60 s), by a worker's
			// check for expired locks (every QUEUE_WORKER_STALLED_INTERVAL, default 30 s): both
			// shorter here.
			QUEUE_WORKER_LOCK_DURATION: '10000',
			QUEUE_WORKER_LOCK_RENEW_TIME: '2000',
			QUEUE_WORKER_STALLED_INTERVAL: '1000',
			...(role === 'worker'
				? {
						QUEUE_HEALTH_CHECK_ACTIVE: 'true',
						QUEUE_HEALTH_CHECK_PORT: String(instance.port),
						N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
					}
				: {}),
			...this.settings.env,
		});
		// n8n's queue-mode default, `database`: no binary-data folder to share (N8nInstance sets
		// filesystem mode for the single-process layers).
		if (!this.settings.env?.N8N_DEFAULT_BINARY_DATA_MODE)
			delete instance.env.N8N_DEFAULT_BINARY_DATA_MODE;
		delete instance.env.N8N_BINARY_DATA_STORAGE_PATH;
	}

	/** `n8n <args>` on the main's folder and settings (import, publish...), main stopped or not. */
	cli(args: string[], label?: string) {
		return this.main.instance.cli(args, { label, timeoutMs: 180_000 });
	}

	async startMain() {
		this.timings.main = await this.main.start();
	}

	/** Stops the main process (graceful) and starts it again; the rest keeps running. */
	async restartMain(): Promise<number> {
		await this.main.stop();
		const ms = await this.main.start();
		this.cookie = '';
		return ms;
	}

	async addWorker(concurrency?: number): Promise<N8nProcess> {
		const [worker] = await this.add(['worker'], concurrency);
		return worker;
	}

	/**
	 * Workers and webhook processes, each with its own user folder (made one after another, so
	 * that names and list order follow `roles`), started at the same time: each needs only the
	 * main's migrations to be done, not the others. Workers run `concurrency` executions at once
	 * (default: the cluster's `workerConcurrency`).
	 */
	async add(
		roles: Array<'worker' | 'webhook'>,
		concurrency = this.settings.workerConcurrency,
	): Promise<N8nProcess[]> {
		const added: N8nProcess[] = [];
		for (const role of roles) {
			const n = ++this.seq[role];
			const instance = await N8nInstance.create(`queue-${role}-${n}-${process.pid}`);
			this.configure(instance, role);
			const args = role === 'worker' ? ['worker', `--concurrency=${concurrency}`] : ['webhook'];
			const proc = new N8nProcess(
				`${role}-${n}`,
				role,
				instance,
				args,
				role === 'worker' ? concurrency : undefined,
			);
			(role === 'worker' ? this.workers : this.webhooks).push(proc);
			added.push(proc);
		}
		await Promise.all(added.map(async (proc) => (this.timings[proc.name] = await proc.start())));
		return added;
	}

	get processes(): N8nProcess[] {
		return [this.main, ...this.workers, ...this.webhooks];
	}

	/** The worker whose log says it started this execution (`Worker started execution <id>`). */
	workersThatRan(executionId: string): string[] {
		const re = new RegExp(`Worker started execution ${executionId} \\(job`);
		return this.workers.filter((w) => re.test(w.logText())).map((w) => w.name);
	}

	/** Bull's job id of an execution, from the log of the worker that started it. */
	jobOf(executionId: string): string | undefined {
		const re = new RegExp(`Worker started execution ${executionId} \\(job (\\w+)\\)`);
		for (const w of this.workers) {
			const m = re.exec(w.logText());
			if (m) return m[1];
		}
		return undefined;
	}

	/** Whether Bull still lists the job as active (held by a worker, dead or alive). */
	async jobActive(jobId: string): Promise<boolean> {
		const pos = await this.redis.command('LPOS', 'bull:jobs:active', jobId);
		return typeof pos === 'number';
	}

	/** The editor's "Retry" of an ended execution (POST /rest/executions/:id/retry, saved workflow of the run). */
	async retry(executionId: string): Promise<unknown> {
		return await this.rest(`/executions/${executionId}/retry`, {
			method: 'POST',
			body: { loadWorkflow: false },
		});
	}

	/** n8n's internal REST API on the main, as the editor uses it (owner cookie). */
	async rest<T = unknown>(
		route: string,
		init: { method?: string; body?: unknown } = {},
	): Promise<T> {
		if (!this.cookie && route !== '/owner/setup' && route !== '/login') await this.login();
		const res = await fetch(`${this.main.baseUrl}/rest${route}`, {
			method: init.method ?? 'GET',
			headers: {
				'content-type': 'application/json',
				'browser-id': BROWSER_ID,
				...(this.cookie ? { cookie: this.cookie } : {}),
			},
			body: init.body === undefined ? undefined : JSON.stringify(init.body),
		});
		const text = await res.text();
		if (!res.ok)
			throw new Error(
				`${init.method ?? 'GET'} /rest${route}: HTTP ${res.status} ${text.slice(0, 500)}`,
			);
		const cookies = (res.headers.getSetCookie?.() ?? [])
			.map((c) => c.split(';')[0])
			.filter((c) => c.startsWith('n8n-auth='));
		if (cookies.length) this.cookie = cookies.join('; ');
		return (JSON.parse(text) as { data: T }).data;
	}

	private async login() {
		await this.rest('/login', {
			method: 'POST',
			body: { emailOrLdapLoginId: OWNER.email, password: this.ownerSecret },
		});
	}

	/** Owner account and a public-API key (call once, with the main running). */
	async setUpOwner() {
		await this.rest('/owner/setup', {
			method: 'POST',
			body: { ...OWNER, password: this.ownerSecret },
		});
		const scopes = await this.rest<string[]>('/api-keys/scopes');
		const created = await this.rest<{ rawApiKey?: string; apiKey?: string }>('/api-keys', {
			method: 'POST',
			body: { label: 'queue', scopes, expiresAt: null },
		});
		this.apiKey = created.rawApiKey ?? created.apiKey ?? '';
		if (!this.apiKey) throw new Error('no API key in the answer of POST /rest/api-keys');
	}

	/** n8n's public API on the main. */
	async api<T = unknown>(
		route: string,
		init: { method?: string; body?: unknown } = {},
	): Promise<T> {
		const res = await fetch(`${this.main.baseUrl}/api/v1${route}`, {
			method: init.method ?? 'GET',
			headers: { 'X-N8N-API-KEY': this.apiKey, 'content-type': 'application/json' },
			body: init.body === undefined ? undefined : JSON.stringify(init.body),
		});
		const text = await res.text();
		if (!res.ok)
			throw new Error(
				`${init.method ?? 'GET'} /api/v1${route}: HTTP ${res.status} ${text.slice(0, 300)}`,
			);
		return (text ? JSON.parse(text) : undefined) as T;
	}

	/** A credential through the public API (n8n encrypts it with the shared key); its id. */
	async createCredential(
		name: string,
		type: string,
		data: Record<string, unknown>,
	): Promise<string> {
		return (
			await this.api<{ id: string }>('/credentials', { method: 'POST', body: { name, type, data } })
		).id;
	}

	/**
	 * The package's credential for a simulator, named `name`. allowPrivateFileHosts: the
	 * simulator's file host runs on this machine (127.0.0.1), a loopback address the node refuses
	 * by default.
	 */
	async simulatorCredential(
		name: string,
		sim: { apiKey: string; baseUrl: string },
	): Promise<{ id: string; name: string }> {
		const data = { apiKey: sim.apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: true };
		return { name, id: await this.createCredential(name, CREDENTIAL_TYPE, data) };
	}

	/**
	 * A workflow through the public API, published when `activate` (its production webhooks are
	 * then registered in the database, where the webhook processes look them up); its id.
	 */
	async createWorkflow(
		wf: {
			name: string;
			nodes: unknown[];
			connections: unknown;
			settings?: Record<string, unknown>;
		},
		activate = true,
	): Promise<string> {
		const { name, nodes, connections, settings } = wf;
		const { id } = await this.api<{ id: string }>('/workflows', {
			method: 'POST',
			body: { name, nodes, connections, settings: settings ?? {} },
		});
		if (activate) await this.api(`/workflows/${id}/activate`, { method: 'POST' });
		return id;
	}

	async executions(workflowId: string, includeData = true): Promise<ExecutionSummary[]> {
		const all: ExecutionSummary[] = [];
		let cursor = '';
		for (;;) {
			const page = await this.api<{ data: ExecutionSummary[]; nextCursor?: string | null }>(
				`/executions?workflowId=${workflowId}&includeData=${includeData}&limit=${includeData ? 100 : 250}${cursor ? `&cursor=${cursor}` : ''}`,
			);
			all.push(...page.data);
			if (!page.nextCursor) return all;
			cursor = page.nextCursor;
		}
	}

	async execution(id: string): Promise<ExecutionSummary> {
		return await this.api<ExecutionSummary>(`/executions/${id}?includeData=true`);
	}

	/** Polls until `count` executions of the workflow have ended (or throws with what it saw). */
	async endedExecutions(
		workflowId: string,
		count: number,
		timeoutMs = 120_000,
		includeData = true,
	): Promise<ExecutionSummary[]> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const list = await this.executions(workflowId, false);
			const ended = list.filter((e) => !['running', 'new', 'waiting'].includes(e.status));
			if (ended.length >= count) {
				if (!includeData) return ended;
				return await Promise.all(ended.map((e) => this.execution(e.id)));
			}
			if (Date.now() > deadline) {
				throw new Error(
					`${ended.length} of ${count} executions of ${workflowId} ended after ${timeoutMs} ms: ${JSON.stringify(list.map((e) => [e.id, e.status]))}`,
				);
			}
			await sleep(300);
		}
	}

	/**
	 * Size and SHA-256 of binary items as n8n stored them in PostgreSQL (`database` mode, ids
	 * `database:<fileId>`), hashed by PostgreSQL itself: the bytes never travel to the test.
	 * Throws on an id of another mode (the layer runs n8n's queue-mode default only).
	 */
	storedFiles(binaryIds: Array<string | undefined>): Map<string, { size: number; sha256: string }> {
		const fileIds = binaryIds.map((id) => {
			const m = /^database:([0-9a-f-]{36})$/i.exec(id ?? '');
			if (!m) throw new Error(`binary data is not in database mode: id ${JSON.stringify(id)}`);
			return m[1];
		});
		const out = new Map<string, { size: number; sha256: string }>();
		if (!fileIds.length) return out;
		const rows = this.postgres.query(
			`select "fileId", octet_length(data), encode(sha256(data), 'hex') from binary_data where "fileId" in (${fileIds.map((f) => `'${f}'`).join(',')})`,
		);
		for (const [fileId, size, sha256] of rows)
			out.set(`database:${fileId}`, { size: Number(size), sha256 });
		return out;
	}

	/** RSS of every process now (bytes): n8n processes (self and with their task runner), Redis, Postgres. */
	memory() {
		const out: Record<string, { self: number; tree: number }> = {};
		for (const p of this.processes) if (p.running) out[p.name] = p.rss();
		out.redis = rssOf(this.redis.pid);
		out.postgres = rssOf(this.postgres.pid);
		return out;
	}

	/** Peak RSS per process (bytes, itself and with its task runner) while `fn` runs, sampled every `everyMs`. */
	async withMemory<T>(
		fn: () => Promise<T>,
		everyMs = 500,
	): Promise<{ result: T; peaks: Record<string, { self: number; tree: number }> }> {
		const peaks: Record<string, { self: number; tree: number }> = {};
		const take = () => {
			for (const [name, m] of Object.entries(this.memory())) {
				const p = (peaks[name] ??= { self: 0, tree: 0 });
				p.self = Math.max(p.self, m.self);
				p.tree = Math.max(p.tree, m.tree);
			}
		};
		take();
		const timer = setInterval(take, everyMs);
		try {
			const result = await fn();
			take();
			return { result, peaks };
		} finally {
			clearInterval(timer);
		}
	}

	/** Runs a test body; on failure the message gets every process's log tail, and folders stay. */
	async explain<T>(fn: () => Promise<T>): Promise<T> {
		try {
			return await fn();
		} catch (error) {
			this.failed = true;
			const e = error instanceof Error ? error : new Error(String(error));
			const tails = this.processes.map((p) => p.currentLogTail(25)).join('\n');
			e.message += `\n\n=== queue cluster logs kept under ${path.dirname(this.root)} ===\n${tails}`;
			throw e;
		}
	}

	/** Stops everything this cluster started (even after a failure); removes the folders unless one failed. */
	async dispose(): Promise<void> {
		const stops = [...this.webhooks, ...this.workers, this.main]
			.filter(Boolean)
			.map((p) => p.stop(10_000).catch(() => undefined));
		await Promise.all(stops);
		await this.balancer.close();
		await this.redis?.stop();
		await this.postgres?.stop();
		if (!this.failed && !process.env.MGEN_KEEP_E2E) {
			for (const p of this.processes)
				if (p) fs.rmSync(p.instance.dir, { recursive: true, force: true });
			fs.rmSync(this.root, { recursive: true, force: true });
		}
	}
}
