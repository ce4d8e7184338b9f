/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// Proves the in-process harness with its own test-only nodes: the real n8n engine runs the
// workflow, pinned items flow through, binary data lands in n8n's store, cancellation stops a
// running node, and unknown node types fail with a clear message.
import * as fs from 'node:fs';

import {
	BINARY_DATA_PATH,
	MANUAL_TRIGGER_TYPE,
	NOOP_TYPE,
	chain,
	mediaCredentials,
	runWorkflow,
	startWorkflow,
} from '../harness';

describe('in-process harness (harness nodes only)', () => {
	it('runs Manual Trigger → No Operation through WorkflowExecute', async () => {
		const result = await runWorkflow(
			chain({ name: 'Start', type: MANUAL_TRIGGER_TYPE }, { name: 'Pass', type: NOOP_TYPE }),
		);
		expect(result.status).toBe('success');
		expect(result.error).toBeUndefined();
		expect(result.outputOf('Pass').map((i) => i.json)).toEqual([{}]);
		expect(result.events.filter((e) => e.kind === 'nodeExecuteAfter').map((e) => e.node)).toEqual([
			'Start',
			'Pass',
		]);
	});

	it('pins items on the start node and keeps pairing', async () => {
		const result = await runWorkflow(
			chain({ name: 'Start', type: MANUAL_TRIGGER_TYPE }, { name: 'Pass', type: NOOP_TYPE }),
			{ items: [{ n: 1 }, { n: 2 }, { n: 3 }] },
		);
		const out = result.outputOf('Pass');
		expect(out.map((i) => i.json.n)).toEqual([1, 2, 3]);
		expect(out.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
	});

	it('emits items from the Items node', async () => {
		const result = await runWorkflow(
			chain(
				{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
				{ name: 'Items', type: 'harness.items', parameters: { items: '[{"a":1},{"a":2}]' } },
			),
		);
		expect(result.outputOf('Items').map((i) => i.json)).toEqual([{ a: 1 }, { a: 2 }]);
	});

	it.each(['filesystem', 'default'] as const)('stores binary data (%s mode)', async (mode) => {
		const result = await runWorkflow(
			chain(
				{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
				{
					name: 'Bin',
					type: 'harness.binary',
					parameters: { text: `hello ${mode}`, fileName: 'a.txt' },
				},
			),
			{ binaryMode: mode },
		);
		const [item] = result.outputOf('Bin');
		expect(item.binary?.data.fileName).toBe('a.txt');
		expect(item.binary?.data.mimeType).toBe('text/plain');
		expect((await result.readBinary(item)).toString()).toBe(`hello ${mode}`);
		const file = result.binaryPath(item);
		if (mode === 'filesystem') {
			expect(file?.startsWith(BINARY_DATA_PATH)).toBe(true);
			expect(fs.readFileSync(file!, 'utf8')).toBe(`hello ${mode}`);
		} else {
			expect(file).toBeUndefined();
			expect(item.binary?.data.data).toBe(Buffer.from(`hello ${mode}`).toString('base64'));
		}
	});

	it('cancels a running execution and the node stops', async () => {
		const running = startWorkflow(
			chain(
				{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
				{ name: 'Sleep', type: 'harness.sleep', parameters: { ms: 60_000 } },
				{ name: 'After', type: NOOP_TYPE },
			),
		);
		await new Promise((r) => setTimeout(r, 200));
		const result = await running.cancel();
		expect(result.status).toBe('canceled');
		expect(result.outputOf('After')).toEqual([]);
	});

	it('cancels through an AbortSignal', async () => {
		const controller = new AbortController();
		const running = startWorkflow(
			chain(
				{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
				{ name: 'Sleep', type: 'harness.sleep', parameters: { ms: 60_000 } },
			),
			{ signal: controller.signal },
		);
		setTimeout(() => controller.abort(), 100);
		expect((await running.done).status).toBe('canceled');
	});

	it('reports a node failure as the execution error', async () => {
		const result = await runWorkflow(
			chain(
				{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
				{ name: 'Items', type: 'harness.items', parameters: { items: '{"not":"an array"}' } },
			),
		);
		expect(result.status).toBe('error');
		expect(result.error?.message).toContain('must be a JSON array');
		expect(result.dump()).toContain('must be a JSON array');
	});

	it('rejects unknown node types clearly', async () => {
		await expect(
			runWorkflow(
				chain({ name: 'Start', type: MANUAL_TRIGGER_TYPE }, { name: 'X', type: 'nope.nothing' }),
			),
		).rejects.toThrow(/unknown node type "nope.nothing"/);
	});
});

describe('harness credentials', () => {
	it("applies the package credential's authenticate block as n8n does", async () => {
		const http = await import('node:http');
		const seen: Array<string | undefined> = [];
		const server = http.createServer((req, res) => {
			seen.push(req.headers.authorization);
			res.setHeader('content-type', 'application/json');
			res.end(JSON.stringify({ ok: true }));
		});
		await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
		const { port } = server.address() as { port: number };
		try {
			const result = await runWorkflow(
				chain(
					{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
					{
						name: 'Probe',
						type: 'harness.httpProbe',
						parameters: { url: `http://127.0.0.1:${port}/x` },
						credentials: mediaCredentials(),
					},
				),
				// The credential trims the key: a key pasted with spaces still works.
				{
					credentials: {
						mediaGenerationApi: { apiKey: '  k-123 ', baseUrl: `http://127.0.0.1:${port}` },
					},
				},
			);
			expect(result.error).toBeUndefined();
			expect(result.outputOf('Probe')[0].json).toEqual({ ok: true });
			expect(seen).toEqual(['Bearer k-123']);
		} finally {
			server.close();
		}
	});
});
