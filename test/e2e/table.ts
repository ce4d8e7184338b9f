// Test-only. examples/table-rows-to-videos.json and its batch sub-workflow as a user sets them
// up in a real n8n: a Data Table named "products" (the name both workflows look for), the
// videos folder n8n may write (n8n 2.x allows only N8N_RESTRICT_FILE_ACCESS_TO, default
// ~/.n8n-files), both workflows published. Tests start production runs through a Webhook put in
// place of "Try It Now" (the nightly and hourly schedules fire at fixed hours, so they are left
// out: a run at 01:00 or on the hour would be a second run the test did not start). Data Table
// rows are read and written through n8n's public API, as a user's own tooling would.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { mediaChunks, type Simulator } from '../simulator';
import { ROOT, type ExecutionSummary, type N8nInstance } from './n8n';
import { exampleWorkflow, type WorkflowNode } from './workflows';

export const TABLE_EXAMPLE = 'table-rows-to-videos.json';
export const TABLE_BATCH_EXAMPLE = 'table-rows-to-videos-batch.json';
export const TABLE_NAME = 'products';
/** The columns the guide tells the user to create (all text). */
export const TABLE_COLUMNS = [
	'sku',
	'product',
	'prompt',
	'status',
	'task_id',
	'video_file',
	'error',
];
/** The batch workflow's id as shipped: the main workflow's Execute Workflow nodes name it. */
export const BATCH_ID = (
	JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', TABLE_BATCH_EXAMPLE), 'utf8')) as {
		id: string;
	}
).id;

export type TableRow = Record<string, string | number | null>;

/** Rows one batch execution takes: the shipped batch workflow's Rows to Send limit. */
export const BATCH_ROWS = Number(
	(
		JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', TABLE_BATCH_EXAMPLE), 'utf8')) as {
			nodes: Array<{ name: string; parameters: { limit?: number } }>;
		}
	).nodes.find((n) => n.name === 'Rows to Send')?.parameters.limit,
);

type Wf = ReturnType<typeof exampleWorkflow> & {
	nodes: WorkflowNode[];
	connections: Record<string, { main: Array<Array<{ node: string }>> }>;
};

/**
 * Both workflows, videos written to `folder`; "Try It Now" a production Webhook at `hookPath`,
 * the two schedules removed (see above). "When n8n Starts" stays: it is what collects after a
 * restart.
 */
export function tableWorkflows(id: string, folder: string, hookPath: string): [Wf, Wf] {
	const main = exampleWorkflow(TABLE_EXAMPLE, id, folder) as Wf;
	const batch = exampleWorkflow(TABLE_BATCH_EXAMPLE, BATCH_ID, folder) as Wf;
	const start = main.nodes.find((n) => n.name === 'Try It Now');
	if (!start) throw new Error(`${TABLE_EXAMPLE}: no "Try It Now" node`);
	Object.assign(start, {
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: { httpMethod: 'POST', path: hookPath, responseMode: 'onReceived', options: {} },
	});
	for (const name of ['Every Night at 1:00', 'Every Hour']) {
		main.nodes = main.nodes.filter((n) => n.name !== name);
		delete main.connections[name];
	}
	return [main, batch];
}

async function api<T>(n8n: N8nInstance, key: string, method: string, p: string, body?: unknown) {
	const res = await fetch(`${n8n.baseUrl}/api/v1${p}`, {
		method,
		headers: { 'X-N8N-API-KEY': key, 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await res.text();
	if (!res.ok) throw new Error(`${method} /api/v1${p}: HTTP ${res.status} ${text.slice(0, 300)}`);
	return (text ? JSON.parse(text) : undefined) as T;
}

/** A call of n8n's public API: method, path under /api/v1, body; the parsed answer. */
export type ApiCall = <T>(method: string, p: string, body?: unknown) => Promise<T>;

export class Table {
	private constructor(
		private readonly call: ApiCall,
		readonly id: string,
	) {}

	/** The table as the guide has the user create it: its name, text columns. */
	static async create(n8n: N8nInstance, key: string): Promise<Table> {
		return await Table.createWith(
			async <T>(method: string, p: string, body?: unknown) =>
				await api<T>(n8n, key, method, p, body),
		);
	}

	/** The same through another way to call the public API (a queue-mode cluster's main). */
	static async createWith(call: ApiCall): Promise<Table> {
		return await Table.createNamed(
			call,
			TABLE_NAME,
			TABLE_COLUMNS.map((name) => ({ name, type: 'string' })),
		);
	}

	/** Another table a guide has the user create: its name and typed columns. */
	static async createNamed(
		call: ApiCall,
		name: string,
		columns: Array<{ name: string; type: string }>,
	): Promise<Table> {
		const created = await call<{ id: string }>('POST', '/data-tables', { name, columns });
		return new Table(call, created.id);
	}

	/** A call of `n8n`'s public API with `key`. */
	static publicApi(n8n: N8nInstance, key: string): ApiCall {
		return async <T>(method: string, p: string, body?: unknown) =>
			await api<T>(n8n, key, method, p, body);
	}

	async insert(rows: TableRow[]): Promise<void> {
		for (let i = 0; i < rows.length; i += 500)
			await this.call('POST', `/data-tables/${this.id}/rows`, {
				data: rows.slice(i, i + 500),
				returnType: 'count',
			});
	}

	/** Every row, in id order. */
	async rows(): Promise<TableRow[]> {
		const all: TableRow[] = [];
		let cursor: string | null | undefined;
		do {
			const page = await this.call<{ data: TableRow[]; nextCursor?: string | null }>(
				'GET',
				`/data-tables/${this.id}/rows?limit=250&sortBy=${encodeURIComponent('id:asc')}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
			);
			all.push(...page.data);
			cursor = page.nextCursor;
		} while (cursor);
		return all;
	}

	/**
	 * Empties the table (between tests): every row with an id, through rows/delete, whose filter
	 * n8n requires (rows/clear is newer than the oldest n8n the compat layer runs).
	 */
	async clear(): Promise<void> {
		const filter = { type: 'and', filters: [{ columnName: 'id', condition: 'gt', value: 0 }] };
		await this.call(
			'DELETE',
			`/data-tables/${this.id}/rows/delete?filter=${encodeURIComponent(JSON.stringify(filter))}`,
		);
	}

	/** Sets columns of the rows matching `where` (a user editing the table). */
	async update(where: Record<string, string | number>, data: TableRow): Promise<void> {
		await this.call('PATCH', `/data-tables/${this.id}/rows/update`, {
			filter: {
				type: 'and',
				filters: Object.entries(where).map(([columnName, value]) => ({
					columnName,
					condition: 'eq',
					value,
				})),
			},
			data,
		});
	}
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * The row is finished, its video saved in `folder` as `<sku>.mp4`, byte for byte the file the
 * service made for the row's own prompt (e2e and queue layers).
 */
export function expectRowVideo(row: TableRow, folder: string, sim: Simulator) {
	expect(row).toMatchObject({ status: 'finished', error: null });
	expect(row.video_file).toBe(path.join(folder, `${row.sku}.mp4`));
	const task = sim.task(String(row.task_id));
	expect(task?.prompt).toBe(row.prompt);
	const [served] = task!.files;
	const saved = fs.readFileSync(String(row.video_file));
	expect(saved.length).toBe(served.size);
	expect(sha256(saved)).toBe(sha256(Buffer.concat([...mediaChunks(served.kind, served.size)])));
}

type WithData = Pick<ExecutionSummary, 'data'>;

/**
 * Two runs of the table job, each its execution with data: asserts they were sending at the same
 * time (each one's Send 50 Rows runs span overlapping) and, between them, sent every batch of
 * `rows`. Which run wins the claims is the machine's timing: a run that lost every claim of a
 * batch to the other stops sending and collects, so only the total is fixed. Returns what to print.
 */
export function expectSendingOverlapped(runs: [WithData, WithData], rows: number): string {
	const sends = (e: WithData) => e.data?.resultData.runData['Send 50 Rows'] ?? [];
	const span = (e: WithData) => {
		const s = sends(e);
		const last = s[s.length - 1];
		return { from: s[0]?.startTime ?? 0, to: (last?.startTime ?? 0) + (last?.executionTime ?? 0) };
	};
	const sent = runs.map(
		(e) => sends(e).filter((r) => r.data?.main[0]?.[0]?.json.id !== undefined).length,
	);
	const [a, b] = runs.map(span);
	for (const e of runs) expect(sends(e).length).toBeGreaterThan(0);
	expect(a.from).toBeLessThan(b.to);
	expect(b.from).toBeLessThan(a.to);
	expect(sent[0] + sent[1]).toBeGreaterThanOrEqual(Math.ceil(rows / BATCH_ROWS));
	return `batches sent by each run: ${sent.join(' and ')}; sending overlapped ${Math.min(a.to, b.to) - Math.max(a.from, b.from)} ms`;
}
