// Types of queue-services.js for the TypeScript tests (test/queue) that call it.
export interface RedisServer {
	port: number;
	pid: number;
	log: string;
	command(...args: Array<string | number>): Promise<string | number>;
	stop(): Promise<void>;
}

export interface PostgresServer {
	port: number;
	pid: number;
	log: string;
	/** The OS user the server runs as (never root). */
	runsAs: string;
	database: string;
	user: string;
	password: string;
	/** Rows of one SQL statement (psql), each an array of its columns as text. */
	query(sql: string): string[][];
	stop(): Promise<void>;
}

export declare function ensureQueuePrograms(options?: {
	log?: (message: string) => void;
}):
	| { ok: true; programs: { redis: string; postgresBinDir: string } }
	| { ok: false; reason: string };
export declare function postgresBinDir(): string | undefined;
export declare function redisServerBin(): string | undefined;
export declare function startRedis(options: { dir: string; bin?: string }): Promise<RedisServer>;
export declare function startPostgres(options: {
	dir: string;
	binDir?: string;
}): Promise<PostgresServer>;
export declare function redisCommand(
	port: number,
	...args: Array<string | number>
): Promise<string | number>;
export declare function reapLeftovers(file: string | undefined): string[];
export declare function recordPid(pid: number | undefined, label: string): void;
export declare function signalGroup(pid: number, signal: NodeJS.Signals): void;
export declare function stopChild(
	child: import('node:child_process').ChildProcess | undefined,
	signal: NodeJS.Signals,
	graceMs?: number,
): Promise<void>;
export declare function rssOf(pid: number): { self: number; tree: number; processes: number };
export declare function freePort(): Promise<number>;
