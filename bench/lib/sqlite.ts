// n8n's SQLite database, read-only beside a running n8n, through Node's built-in SQLite (Node
// 22.5+; the benchmarks that use it run under Node 24), so the benches need no SQLite package.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- benchmark code: runs under plain Node, never inside n8n (the package ships dist/ only) */
type Row = Record<string, number | string>;

export interface ReadOnlyDb {
	prepare(sql: string): {
		get(...params: unknown[]): Row | undefined;
		all(...params: unknown[]): Row[];
	};
	close(): void;
}

/** Runs `fn` on the database opened read-only, and closes it. */
export function withDatabase<T>(dbFile: string, fn: (db: ReadOnlyDb) => T): T {
	const { DatabaseSync } = (
		process as unknown as { getBuiltinModule(id: string): unknown }
	).getBuiltinModule('node:sqlite') as {
		DatabaseSync: new (file: string, options: { readOnly: boolean }) => ReadOnlyDb;
	};
	const db = new DatabaseSync(dbFile, { readOnly: true });
	try {
		return fn(db);
	} finally {
		db.close();
	}
}
