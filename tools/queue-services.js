'use strict';
// Redis and PostgreSQL for the queue-mode layer (test/queue): the operating system's own
// programs (Debian's redis-server and postgresql), each started on a random loopback port with a
// private folder, and stopped again. Only Node's built-ins: tools/run.js loads it on a fresh
// machine to decide whether the layer can run.
//
// - PostgreSQL refuses to run as root. As root, initdb and postgres run as the `postgres` user
//   the Debian package creates (else `nobody`), on a data folder owned by that user; otherwise
//   as the current user. Password authentication (scram) over TCP on 127.0.0.1 only, no Unix
//   socket, no fsync (a throw-away database).
// - Redis: no persistence (no RDB snapshot, no AOF), 127.0.0.1 only.
// - Each server gets its own process group. Its pid is appended to the file named by
//   MGEN_QUEUE_PIDS when set: tools/run.js kills whatever is still alive there once jest ends,
//   so nothing outlives the layer even when jest itself dies.

const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const { ensureDebianPackages } = require('./system-packages');

const REDIS_BIN_CANDIDATES = [
	'/usr/bin/redis-server',
	'/usr/local/bin/redis-server',
	'/opt/homebrew/bin/redis-server',
];

function executable(file) {
	try {
		fs.accessSync(file, fs.constants.X_OK);
		return fs.statSync(file).isFile();
	} catch {
		return false;
	}
}

function onPath(name) {
	for (const dir of (process.env.PATH || '').split(path.delimiter)) {
		if (dir && executable(path.join(dir, name))) return path.join(dir, name);
	}
	return undefined;
}

function redisServerBin() {
	return REDIS_BIN_CANDIDATES.find(executable) || onPath('redis-server');
}

/**
 * The folder holding initdb and postgres: Debian puts them in /usr/lib/postgresql/<major>/bin
 * (newest major wins), other systems on PATH.
 */
function postgresBinDir() {
	const has = (dir) =>
		['initdb', 'postgres', 'createdb', 'psql'].every((b) => executable(path.join(dir, b)));
	const debian = '/usr/lib/postgresql';
	try {
		const majors = fs
			.readdirSync(debian)
			.filter((v) => /^\d+(\.\d+)?$/.test(v))
			.sort((a, b) => Number(b) - Number(a));
		for (const v of majors)
			if (has(path.join(debian, v, 'bin'))) return path.join(debian, v, 'bin');
	} catch {
		// Not Debian's layout.
	}
	const initdb = onPath('initdb');
	if (initdb && has(path.dirname(initdb))) return path.dirname(initdb);
	return undefined;
}

/**
 * What the layer needs from the OS; installs Debian's packages when missing (root only). Returns
 * { ok, programs } or { ok: false, reason } naming what is missing and how to get it.
 */
function ensureQueuePrograms({ log = () => undefined } = {}) {
	const started = Date.now();
	const want = [];
	if (!redisServerBin()) want.push('redis-server');
	if (!postgresBinDir()) want.push('postgresql');
	if (want.length) {
		// Paths that do not exist make ensureDebianPackages install; the real check follows.
		const need = want.map((p) =>
			p === 'redis-server' ? '/usr/bin/redis-server' : '/usr/lib/postgresql/<major>/bin/initdb',
		);
		const r = ensureDebianPackages({
			packages: want,
			need,
			what: 'Redis and PostgreSQL (the queue-mode layer runs n8n as users scale it out)',
			log,
		});
		if (!r.ok && !(redisServerBin() && postgresBinDir())) return r;
		log(`queue layer: OS programs installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	}
	const redis = redisServerBin();
	const pg = postgresBinDir();
	if (!redis || !pg) {
		const missing = [
			!redis && 'redis-server',
			!pg && 'PostgreSQL (initdb, postgres, createdb, psql)',
		].filter(Boolean);
		return {
			ok: false,
			reason: `${missing.join(' and ')} not found after installing: install Redis and PostgreSQL for your OS`,
		};
	}
	return { ok: true, programs: { redis, postgresBinDir: pg } };
}

/** The user PostgreSQL runs as: the current one, or an unprivileged one when we are root. */
function postgresUser() {
	if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
		return { name: os.userInfo().username, uid: undefined, gid: undefined };
	}
	for (const name of ['postgres', 'nobody']) {
		const r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
		const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
		if (r.status === 0 && g.status === 0)
			return { name, uid: Number(r.stdout), gid: Number(g.stdout) };
	}
	throw new Error(
		'running as root and neither a `postgres` nor a `nobody` user exists: PostgreSQL refuses to run as root',
	);
}

function freePort() {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.once('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address();
			srv.close(() => resolve(port));
		});
	});
}

function recordPid(pid, label) {
	const file = process.env.MGEN_QUEUE_PIDS;
	if (file && pid) fs.appendFileSync(file, `${pid} ${label}\n`);
}

function alive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
}

/** Sends `signal` to the process group led by `pid` (every server here leads its own group). */
function signalGroup(pid, signal) {
	try {
		process.kill(-pid, signal);
	} catch {
		try {
			process.kill(pid, signal);
		} catch {
			// Gone already.
		}
	}
}

/** Kills every group listed in the pid file that is still alive; returns what it killed. */
function reapLeftovers(file) {
	if (!file || !fs.existsSync(file)) return [];
	const killed = [];
	for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
		const [pidText, ...label] = line.trim().split(' ');
		const pid = Number(pidText);
		if (!pid || !alive(pid)) continue;
		signalGroup(pid, 'SIGKILL');
		killed.push(`${pid} ${label.join(' ')}`);
	}
	fs.rmSync(file, { force: true });
	return killed;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Stops a server: `signal` to its group, SIGKILL after `graceMs`. */
function stopChild(child, signal, graceMs = 10_000) {
	if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
	return new Promise((resolve) => {
		const timer = setTimeout(() => signalGroup(child.pid, 'SIGKILL'), graceMs);
		child.once('exit', () => {
			clearTimeout(timer);
			// Stray members of the group (none expected) go too.
			signalGroup(child.pid, 'SIGKILL');
			resolve();
		});
		signalGroup(child.pid, signal);
	});
}

function tailFile(file, lines = 30) {
	try {
		return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
	} catch {
		return '(no log)';
	}
}

/** One RESP command over a fresh connection; resolves with the first reply line's value. */
function redisCommand(port, ...args) {
	return new Promise((resolve, reject) => {
		const sock = net.connect(port, '127.0.0.1');
		let buf = '';
		sock.setTimeout(5000, () => sock.destroy(new Error('redis: timeout')));
		sock.on('error', reject);
		sock.on('data', (d) => {
			buf += d.toString('utf8');
			const end = buf.indexOf('\r\n');
			if (end < 0) return;
			const line = buf.slice(0, end);
			// Integers and simple strings are all this helper needs (LLEN, PING, DBSIZE...).
			if (line[0] === ':') resolve(Number(line.slice(1)));
			else if (line[0] === '+') resolve(line.slice(1));
			else if (line[0] === '-') reject(new Error(`redis: ${line.slice(1)}`));
			else resolve(line);
			sock.end();
		});
		sock.write(
			args
				.map((a) => `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`)
				.reduce((s, a) => s + a, `*${args.length}\r\n`),
		);
	});
}

/** Starts redis-server on a random loopback port in `dir`; resolves once it answers PING. */
async function startRedis({ dir, bin = redisServerBin() }) {
	if (!bin) throw new Error('redis-server not found');
	fs.mkdirSync(dir, { recursive: true });
	const port = await freePort();
	const log = path.join(dir, 'redis.log');
	const out = fs.openSync(log, 'a');
	const args = [
		'--port',
		String(port),
		'--bind',
		'127.0.0.1',
		'--protected-mode',
		'yes',
		'--save',
		'',
		'--appendonly',
		'no',
		'--dir',
		dir,
		'--daemonize',
		'no',
	];
	const child = spawn(bin, args, { detached: true, stdio: ['ignore', out, out] });
	fs.closeSync(out);
	recordPid(child.pid, 'redis-server');
	const started = Date.now();
	for (;;) {
		if (child.exitCode !== null)
			throw new Error(`redis-server exited with ${child.exitCode}\n${tailFile(log)}`);
		try {
			if ((await redisCommand(port, 'PING')) === 'PONG') break;
		} catch {
			// Not listening yet.
		}
		if (Date.now() - started > 20_000) {
			await stopChild(child, 'SIGKILL');
			throw new Error(`redis-server not answering after 20 s\n${tailFile(log)}`);
		}
		await sleep(100);
	}
	return {
		port,
		pid: child.pid,
		log,
		command: (...a) => redisCommand(port, ...a),
		stop: () => stopChild(child, 'SIGTERM'),
	};
}

/**
 * initdb + postgres on a random loopback port in `dir` (owned by the unprivileged user when we
 * are root), and a database `n8n` owned by user `n8n` with a random password.
 */
async function startPostgres({ dir, binDir = postgresBinDir() }) {
	if (!binDir) throw new Error('PostgreSQL (initdb, postgres) not found');
	const user = postgresUser();
	const asUser = user.uid === undefined ? {} : { uid: user.uid, gid: user.gid };
	fs.mkdirSync(dir, { recursive: true });
	// The unprivileged user must reach its folder: the parents are root's (mkdtemp makes 0700).
	for (
		let d = dir;
		d !== path.dirname(d) && d.startsWith(os.tmpdir()) && d !== os.tmpdir();
		d = path.dirname(d)
	) {
		try {
			fs.chmodSync(d, 0o755);
		} catch {
			// Not ours: leave it.
		}
	}
	const data = path.join(dir, 'data');
	const pwfile = path.join(dir, 'pwfile');
	const password = crypto.randomBytes(18).toString('hex');
	fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
	if (asUser.uid !== undefined) {
		fs.chownSync(dir, asUser.uid, asUser.gid);
		fs.chownSync(pwfile, asUser.uid, asUser.gid);
	}
	const log = path.join(dir, 'postgres.log');
	const init = spawnSync(
		path.join(binDir, 'initdb'),
		[
			'-D',
			data,
			'-U',
			'n8n',
			`--pwfile=${pwfile}`,
			'-A',
			'scram-sha-256',
			'--no-sync',
			'-E',
			'UTF8',
			'--locale=C',
		],
		{ ...asUser, cwd: dir, encoding: 'utf8' },
	);
	fs.rmSync(pwfile, { force: true });
	if (init.status !== 0)
		throw new Error(`initdb failed (as ${user.name}): ${init.stderr || init.stdout}`);
	const port = await freePort();
	const out = fs.openSync(log, 'a');
	const child = spawn(
		path.join(binDir, 'postgres'),
		[
			'-D',
			data,
			'-p',
			String(port),
			'-c',
			'listen_addresses=127.0.0.1',
			'-c',
			'unix_socket_directories=',
			'-c',
			'fsync=off',
			'-c',
			'synchronous_commit=off',
			'-c',
			'full_page_writes=off',
			'-c',
			'max_connections=200',
		],
		{ ...asUser, cwd: dir, detached: true, stdio: ['ignore', out, out] },
	);
	fs.closeSync(out);
	recordPid(child.pid, 'postgres');
	const env = { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '3' };
	const started = Date.now();
	for (;;) {
		if (child.exitCode !== null)
			throw new Error(`postgres exited with ${child.exitCode}\n${tailFile(log)}`);
		const r = spawnSync(
			path.join(binDir, 'createdb'),
			['-h', '127.0.0.1', '-p', String(port), '-U', 'n8n', 'n8n'],
			{ env, encoding: 'utf8' },
		);
		if (r.status === 0) break;
		if (Date.now() - started > 30_000) {
			await stopChild(child, 'SIGKILL');
			throw new Error(`postgres: createdb failed for 30 s: ${r.stderr}\n${tailFile(log)}`);
		}
		await sleep(200);
	}
	return {
		port,
		pid: child.pid,
		log,
		runsAs: user.name,
		/**
		 * Rows of one SQL statement through psql, each an array of its columns as text (what the
		 * tests read of n8n's database: the binary data it stored, hashed by PostgreSQL itself).
		 */
		query: (sql) => psqlRows(binDir, { port, password }, sql),
		database: 'n8n',
		user: 'n8n',
		password,
		// SIGINT = "fast shutdown": active sessions are ended, the data folder stays consistent.
		stop: () => stopChild(child, 'SIGINT', 15_000),
	};
}

function psqlRows(binDir, { port, password }, sql) {
	const r = spawnSync(
		path.join(binDir, 'psql'),
		[
			'-h',
			'127.0.0.1',
			'-p',
			String(port),
			'-U',
			'n8n',
			'-d',
			'n8n',
			'-X',
			'-A',
			'-t',
			'-F',
			'\t',
			'-v',
			'ON_ERROR_STOP=1',
			'-c',
			sql,
		],
		{
			env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '5' },
			encoding: 'utf8',
			maxBuffer: 64 * 1024 * 1024,
		},
	);
	if (r.status !== 0) throw new Error(`psql failed (${r.status}): ${r.stderr || r.stdout}`);
	return r.stdout
		.split('\n')
		.filter((line) => line !== '')
		.map((line) => line.split('\t'));
}

/** Resident set size (VmRSS, bytes) of a process and of its whole tree. */
function rssOf(pid) {
	const parent = new Map();
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
			parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
		} catch {
			// Ended meanwhile.
		}
	}
	const tree = [pid];
	for (let i = 0; i < tree.length; i++)
		for (const [p, pp] of parent) if (pp === tree[i]) tree.push(p);
	const rss = (p) => {
		try {
			return (
				Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) *
				1024
			);
		} catch {
			return 0;
		}
	};
	return { self: rss(pid), tree: tree.reduce((s, p) => s + rss(p), 0), processes: tree.length };
}

module.exports = {
	ensureQueuePrograms,
	postgresBinDir,
	redisServerBin,
	startRedis,
	startPostgres,
	redisCommand,
	reapLeftovers,
	recordPid,
	signalGroup,
	stopChild,
	rssOf,
	freePort,
};
