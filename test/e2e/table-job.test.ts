// examples/table-rows-to-videos.json (and its batch sub-workflow) in a real n8n 2.41.1, the job a
// shop owner runs every night on n8n's own Data Table: each row paid once whoever runs it (two
// executions at once claim rows with a conditional update, one UPDATE … WHERE status is empty),
// every row's life in its status (tableJob.ts, the cases the compat layer runs too), and here what
// a SIGKILL of n8n costs. Guide: docs/spreadsheet-to-videos.md.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { listExecutions } from './n8n';
import { BATCH, WF, tableJobSuite } from './tableJob';

jest.setTimeout(400_000);

const job = tableJobSuite({ name: 'table-job' });
/** SIGKILL of n8n (an out-of-memory kill, a host that dies) once `when` holds, then n8n started again. */
async function killWhen(what: string, when: () => Promise<boolean>) {
	await job.until(what, async () => await when(), 120_000);
	await job.n8n.kill();
	const killedAt = Date.now();
	await job.n8n.start();
	return killedAt;
}

const statuses = async () => (await job.table.rows()).map((r) => r.status);

test(`killed (SIGKILL) while it sends: when n8n starts again it marks the batch in flight "may have been charged" (at most ${BATCH} rows, none sent twice) and collects what was sent before; the next run sends the rest, and every other row ends with its video`, async () => {
	// The second batch's first 5 rows get their answer late (the service is slow to accept them).
	const rows = job.sampleRows(2 * BATCH + 20, 2_000, 'kill-send');
	for (let i = BATCH; i < BATCH + 5; i++) rows[i].prompt = `${rows[i].prompt} (late)`;
	await job.fresh(rows);
	job.sim.faults.add({ endpoint: 'submit', kind: 'slow', delayMs: 30_000, match: '(late)' });
	const before = (await listExecutions(job.n8n, job.key, WF, undefined, false)).length;
	const secondBatch = new Set(rows.slice(BATCH, 2 * BATCH).map((r) => r.prompt));
	void fetch(`${job.n8n.baseUrl}/webhook/${job.hook}`, { method: 'POST', body: '{}' });
	await killWhen(
		'the second batch partly accepted',
		async () => job.sim.tasks().filter((t) => secondBatch.has(t.prompt)).length >= 5,
	);
	job.sim.faults.clear();
	// "When n8n Starts" ran: the first batch collected, the batch in flight marked.
	await job.ended(before + 2);
	const marked = (await job.table.rows()).filter((r) => r.status === 'may have been charged');
	expect(marked.length).toBeGreaterThan(0);
	expect(marked.length).toBeLessThanOrEqual(BATCH);
	for (const r of marked) {
		expect(secondBatch).toContain(r.prompt);
		expect(String(r.error)).toMatch(/n8n stopped while this row was being sent/);
	}
	// The next night's run.
	await job.runs(1);
	const after = await job.table.rows();
	for (const row of after.filter((r) => r.status !== 'may have been charged')) job.expectVideo(row);
	expect(after.filter((r) => r.status === 'may have been charged')).toEqual(marked);
	// Nothing paid twice; every row outside the batch in flight paid once.
	for (const row of rows) expect(job.submissionsOf(row.prompt)).toBeLessThanOrEqual(1);
	for (const row of rows.filter((r) => !secondBatch.has(r.prompt)))
		expect(job.submissionsOf(row.prompt)).toBe(1);
	process.stdout.write(
		`[e2e] table job killed while sending batch 2: ${marked.length} rows "may have been charged" (at most ${BATCH}), ${marked.filter((r) => job.submissionsOf(r.prompt) === 1).length} of them paid; ${after.filter((r) => r.status === 'finished').length} of ${rows.length} rows finished, none paid twice\n`,
	);
});

test('killed (SIGKILL) while it waits for the videos: when n8n starts again it collects every video on its own, sending nothing again', async () => {
	const rows = job.sampleRows(BATCH + 10, 15_000, 'kill-wait');
	await job.fresh(rows);
	const before = (await listExecutions(job.n8n, job.key, WF, undefined, false)).length;
	void fetch(`${job.n8n.baseUrl}/webhook/${job.hook}`, { method: 'POST', body: '{}' });
	const killedAt = await killWhen('every row submitted', async () =>
		(await statuses()).every((s) => s === 'submitted'),
	);
	expect(
		job.sim
			.tasks()
			.filter((t) => t.prompt.includes('kill-wait') && t.createdAt + t.durationMs <= killedAt),
	).toEqual([]);
	const sent = job.sim.tasks().length;
	await job.ended(before + 2);
	for (const row of await job.table.rows()) job.expectVideo(row);
	expect(job.sim.tasks().length).toBe(sent);
});
