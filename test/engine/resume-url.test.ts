// n8n's resume URL (`$execution.resumeUrl`) carries the execution's token in `signature`: it
// resumes the execution at every later wait (Wait, Form, send-and-wait). The node never shows
// it (output, errors, logs), adds no `sig` of its own to it, and parks only on a signed one
// (issue 19, findings 3 and 5).
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

import type { IDataObject } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, chain } from '../harness';
import {
	NODE,
	TRIGGER,
	imageGenerateParams,
	mediaNode,
	mediaWorkflow,
	nodeLogger,
	run,
	useSimulator,
} from './support';

const sim = useSimulator();

function generate(options: IDataObject, waitForCompletion = false): IDataObject {
	return imageGenerateParams(sim(), 'a cat [sim:duration=60000]', options, { waitForCompletion });
}

test('Generate with {{ $execution.resumeUrl }} as Callback URL: its signature masked in the output, nowhere else, and no sig added', async () => {
	const token = randomBytes(32).toString('hex');
	const result = await run(
		sim(),
		mediaWorkflow(generate({ callbackUrl: '={{ $execution.resumeUrl }}' })),
		{
			resumeToken: token,
		},
	);
	expect(result.status).toBe('success');
	const sent = new URL(sim().tasks()[0].callbackUrl!);
	expect(sent.searchParams.get('signature')).toBe(token);
	expect(sent.searchParams.has('sig')).toBe(false);
	const [item] = result.outputOf(NODE);
	expect(item.json.callback_url).toBe(`${sent.origin}${sent.pathname}?signature=***`);
	expect(result.dump()).not.toContain(token);
});

describe('a service whose answers quote the callback URL', () => {
	let service: http.Server;
	let baseUrl = '';
	const submits: string[] = [];

	beforeAll(async () => {
		// First a 429 (retried: not accepted), then a 400; both quote the callback_url they got.
		service = http.createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (c: Buffer) => chunks.push(c));
			req.on('end', () => {
				const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as IDataObject;
				submits.push(String(body.callback_url));
				const first = submits.length % 2 === 1;
				res.writeHead(first ? 429 : 400, {
					'content-type': 'application/json',
					'retry-after': '0',
				});
				res.end(
					JSON.stringify({
						code: first ? 429 : 400,
						msg: `callback_url ${String(body.callback_url)} is not accepted`,
					}),
				);
			});
		});
		await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
		baseUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
	});
	afterAll(async () => {
		await new Promise<void>((resolve) => service.close(() => resolve()));
	});

	test.each([
		['a Callback URL of {{ $execution.resumeUrl }}', false],
		['Wait Mode: Park Until Callbacks', true],
	])('%s: the token is in no error and no log line', async (_name, park) => {
		submits.length = 0;
		const token = randomBytes(32).toString('hex');
		const logger = await nodeLogger();
		const lines: string[] = [];
		const spies = (['debug', 'info', 'warn', 'error'] as const).map((level) =>
			jest.spyOn(logger, level).mockImplementation((message: string, meta?: object) => {
				lines.push(`${message} ${JSON.stringify(meta ?? {})}`);
			}),
		);
		try {
			const wf = park
				? chain(
						{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
						mediaNode(generate({ waitMode: 'park' }, true)),
						mediaNode(
							{ resource: 'task', operation: 'waitForCompletion', taskId: '={{ $json.task_id }}' },
							{},
							'Finish',
						),
					)
				: mediaWorkflow(generate({ callbackUrl: '={{ $execution.resumeUrl }}' }));
			const result = await run(sim(), wf, {
				resumeToken: token,
				credentials: { mediaGenerationApi: { apiKey: 'quoted-service-key', baseUrl } },
			});
			expect(submits.length).toBe(2);
			expect(submits.every((url) => url.includes(token))).toBe(true);
			expect(result.status).toBe('error');
			// The service's words are kept, the token masked.
			expect(result.error?.message).toMatch(/signature=\*\*\*/);
			expect(result.dump()).not.toContain(token);
			expect(lines.some((line) => line.includes('signature=***'))).toBe(true);
			expect(lines.join('\n')).not.toContain(token);
		} finally {
			for (const spy of spies) spy.mockRestore();
		}
	});
});

test('refuses to park on a resume URL without a signature (an n8n that does not sign it), before any request', async () => {
	const wf = chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		mediaNode(generate({ waitMode: 'park' }, true)),
		mediaNode(
			{ resource: 'task', operation: 'waitForCompletion', taskId: '={{ $json.task_id }}' },
			{},
			'Finish',
		),
	);
	const result = await run(sim(), wf, { withoutResumeToken: true });
	expect(result.status).toBe('error');
	expect(result.error?.message).toMatch(
		/needs a resume URL signed by n8n \(its "signature" query parameter\)/,
	);
	expect(String((result.error as { description?: string }).description)).toMatch(
		/Poll in This Execution/,
	);
	// The version that first signs it (docs/compatibility.md: n8n-io/n8n#24159, in 2.14.0).
	expect(String((result.error as { description?: string }).description)).toMatch(
		/from version 2\.14 on/,
	);
	expect(sim().requests).toHaveLength(0);
});
