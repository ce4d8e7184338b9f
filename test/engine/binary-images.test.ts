// Reference images from n8n binary data (issue 34): the node checks the files of the input item
// and sends n8n's own signed links to them as image_urls, served here by the harness's stand-in
// of n8n's BinaryDataController (test/harness/binaryData.ts) with n8n-core's real token
// validation and file stream. Every refusal comes before any request; the link lives as long as
// the Timeout; its token is masked wherever the node shows a text.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, chain, type NodeSpec, type RunResult } from '../harness';
import { startBinaryDataServer, type BinaryDataServer } from '../harness/binaryData';
import { MAX_LINK_MS } from '../../nodes/shared/transport/binaryImageLinks';
import { referenceChunks } from '../simulator/media';
import { NODE, TRIGGER, errorText, mediaNode, nodeLogger, run, useSimulator } from './support';

const sim = useSimulator();
let n8n: BinaryDataServer;
beforeAll(async () => {
	n8n = await startBinaryDataServer();
});
afterEach(() => {
	n8n.fetches.length = 0;
	n8n.deleteBeforeServing = false;
});
afterAll(async () => {
	await n8n.close();
});

const PNG = Buffer.concat([...referenceChunks('png', 2000)]);
const WEBP = Buffer.concat([...referenceChunks('webp', 1000)]);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A node writing `bytes` as binary field `property` of each item (n8n's prepareBinaryData). */
function file(
	name: string,
	bytes: Buffer,
	mimeType: string,
	fileName: string,
	property = 'data',
	padToBytes = 0,
	forgetSize = false,
): NodeSpec {
	return {
		name,
		type: 'harness.binary',
		parameters: {
			base64: bytes.toString('base64'),
			mimeType,
			fileName,
			property,
			padToBytes,
			forgetSize,
		},
	};
}

const fast = (more: IDataObject = {}, options: IDataObject = {}): IDataObject => ({
	resource: 'video',
	operation: 'generate',
	model: 'vidmodel-2.0-fast/image-to-video',
	prompt: 'the boat sails off [sim:duration=300]',
	frameSource: 'binary',
	...more,
	options: { maxPollIntervalSeconds: 1, ...options },
});

const pro = (fields: string[], more: IDataObject = {}): IDataObject => ({
	resource: 'video',
	operation: 'generate',
	model: 'vidmodel-1.5-pro',
	prompt: 'animate it [sim:duration=300]',
	aspectRatio: '1:1',
	duration: 4,
	vidmodel15ProOptions: { imageBinaryFields: fields },
	waitForCompletion: false,
	...more,
});

/** Start → the given file nodes → Media Generation. */
const workflow = (files: NodeSpec[], parameters: IDataObject, settings = {}) =>
	chain({ name: TRIGGER, type: MANUAL_TRIGGER_TYPE }, ...files, mediaNode(parameters, settings));

/** The claims of n8n's token in a link (a JWT: header.payload.signature). */
function claims(link: string): { id: string; iat: number; exp: number } {
	const token = new URL(link).searchParams.get('token') ?? '';
	return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as never;
}

const submitted = () =>
	sim()
		.tasks()
		.map((t) => t.input.image_urls as string[]);

/** Fetches a link as the service does (a GET, no credential), returning its answer. */
async function fetchLink(link: string) {
	const res = await fetch(link);
	return {
		status: res.status,
		type: res.headers.get('content-type'),
		body: Buffer.from(await res.arrayBuffer()),
	};
}

async function runWith(wf: ReturnType<typeof workflow>, options: Parameters<typeof run>[2] = {}) {
	return await run(sim(), wf, { baseUrl: n8n.baseUrl, ...options });
}

describe('Vidmodel 2.0 Fast with frames from binary fields', () => {
	test('sends n8n links to the start and end frames, which serve the same bytes for the Timeout, never with the API key; the token is in no output', async () => {
		const result = await runWith(
			workflow(
				[
					file('Start Frame', PNG, 'image/png', 'start.png'),
					file('End Frame', WEBP, 'image/webp', 'end.webp', 'end'),
				],
				fast(
					{
						startFrameBinaryField: 'data',
						vidmodel20FastOptions: { endFrameBinaryField: 'end', duration: 4 },
					},
					{ timeoutMinutes: 2 },
				),
			),
		);
		expect(result.status).toBe('success');
		const [links] = submitted();
		expect(links).toHaveLength(2);
		for (const link of links)
			expect(link.startsWith(`${n8n.baseUrl}rest/binary-data/signed?token=`)).toBe(true);
		// The link lives exactly as long as the node waits (Timeout: 2 minutes).
		expect(claims(links[0]).exp - claims(links[0]).iat).toBe(120);
		// The service fetched each link from n8n and received the very bytes of the file.
		const fetched = [...sim().fetches].sort((a, b) => a.index - b.index);
		expect(fetched.map((f) => [f.url, f.status, f.contentType, f.sha256])).toEqual([
			[links[0], 200, 'image/png', sha256(PNG)],
			[links[1], 200, 'image/webp', sha256(WEBP)],
		]);
		expect(n8n.fetches.map((f) => [f.method, f.status, f.bytes]).sort()).toEqual(
			[
				['GET', 200, PNG.length],
				['GET', 200, WEBP.length],
			].sort(),
		);
		// n8n's link never gets the API key (the node never fetches it; the service's fetch carries none).
		expect(JSON.stringify(n8n.fetches.map((f) => f.headers))).not.toContain(sim().apiKey);
		const [item] = result.outputOf(NODE);
		expect(item.json.status).toBe('finished');
		const dump = result.dump();
		for (const link of links) expect(dump).not.toContain(new URL(link).searchParams.get('token'));
	});

	test('without Wait for Completion the link lives the documented 30 minutes; a wrong token gets 400 and nothing', async () => {
		const result = await runWith(
			workflow(
				[file('Start Frame', PNG, 'image/png', 'start.png')],
				fast({ waitForCompletion: false }),
			),
		);
		expect(result.status).toBe('success');
		const [[link]] = submitted();
		expect(claims(link).exp - claims(link).iat).toBe(30 * 60);
		const forged = `${link.slice(0, -4)}AAAA`;
		expect((await fetchLink(forged)).status).toBe(400);
		const { status, body } = await fetchLink(link);
		expect([status, sha256(body)]).toEqual([200, sha256(PNG)]);
	});

	test('parked (Wait Mode: Park Until Callbacks) the link lives as long as the Timeout too', async () => {
		const wf = chain(
			{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
			file('Start Frame', PNG, 'image/png', 'start.png'),
			mediaNode(fast({}, { waitMode: 'park', timeoutMinutes: 3 })),
			mediaNode(
				{ resource: 'task', operation: 'waitForCompletion', taskId: '={{ $json.task_id }}' },
				{},
				'Finish',
			),
		);
		const result = await runWith(wf);
		expect(result.status).toBe('waiting');
		const [[link]] = submitted();
		expect(claims(link).exp - claims(link).iat).toBe(180);
	});

	test('when n8n deleted the file before the service fetched it (execution data not saved), the task fails naming the link, its token masked', async () => {
		n8n.deleteBeforeServing = true;
		const result = await runWith(
			workflow([file('Start Frame', PNG, 'image/png', 'start.png')], fast()),
		);
		expect(result.status).toBe('error');
		const [[link]] = submitted();
		expect(n8n.fetches.map((f) => f.status)).toEqual([404]);
		const base = link.slice(0, link.indexOf('?'));
		expect(result.error?.message).toContain(
			`image_urls[0] could not be fetched from ${base}?token=***`,
		);
		expect(result.dump()).not.toContain(new URL(link).searchParams.get('token'));
	});

	test('a Retry of a failed execution resumes the accepted task, though its new link would differ: the file is known by its content', async () => {
		const wf = workflow(
			[file('Start Frame', PNG, 'image/png', 'start.png')],
			fast({ prompt: 'slow [sim:duration=1000]' }, { timeoutMinutes: 0.01 }),
		);
		const failed = await runWith(wf, { mode: 'webhook' });
		expect(failed.status).toBe('error');
		expect(errorText({ json: { error: failed.error?.message } })).toMatch(
			/did not finish within the timeout/,
		);
		expect(sim().count('submit')).toBe(1);
		const [task] = sim().tasks();
		while (sim().task(task.id)?.endedAt === undefined) await new Promise((r) => setTimeout(r, 50));
		const retried = await runWith(wf, { retryOf: failed.run });
		expect(retried.status).toBe('success');
		expect(sim().count('submit')).toBe(1);
		expect(retried.outputOf(NODE)[0].json.task_id).toBe(sim().tasks()[0].id);
	});
});

describe('links only to binary data of this workflow, for a bounded time (issue 45, findings 4 and 5)', () => {
	test('a Timeout of ten years gives a link of MAX_LINK_MS (3 hours), not ten years', async () => {
		const tenYears = 5_256_000;
		const result = await runWith(
			workflow(
				[file('Start Frame', PNG, 'image/png', 'start.png')],
				fast({}, { timeoutMinutes: tenYears }),
			),
		);
		expect(result.status).toBe('success');
		const [[link]] = submitted();
		expect(claims(link).exp - claims(link).iat).toBe(MAX_LINK_MS / 1000);
		expect(MAX_LINK_MS).toBe(3 * 60 * 60_000);
	});

	test("an item naming another workflow's file is refused before any request, naming the field and why; the file is never linked", async () => {
		// Another workflow stored a file (n8n's id: <mode>:workflows/<its id>/executions/…).
		const other = await runWith(
			chain(
				{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
				file('Start Frame', PNG, 'image/png', 'start.png'),
			),
			{ workflowId: 'another-workflow' },
		);
		const foreign = other.outputOf('Start Frame')[0].binary!.data;
		expect(foreign.id).toMatch(/^[a-z0-9-]+:workflows\/another-workflow\/executions\//);
		// This workflow gets an item whose binary field names that file.
		const result = await runWith(workflow([], fast()), {
			items: [{ json: {}, binary: { data: foreign } }],
		});
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(
			/binary field "data" \("Start Frame Binary Field"\) \(file "start\.png"\) is a file of another workflow \(id another-workflow\), so no link is made for it; allowed: binary data of an execution of this workflow/,
		);
		// What a sub-workflow given its caller's picture is told to do (issue 51, finding 7).
		expect(result.error?.message).toMatch(
			/A sub-workflow \(Execute Workflow\) receives its caller's files under the caller's ids: run this Generate in the calling workflow, or pass the picture to the sub-workflow as a URL/,
		);
		expect(sim().count('submit')).toBe(0);
		expect(n8n.fetches).toHaveLength(0);
	});
});

describe('Vidmodel 1.5 Pro with reference images from binary fields', () => {
	test('sends up to 2 links in the order of the fields', async () => {
		const result = await runWith(
			workflow(
				[file('A', PNG, 'image/png', 'a.png', 'a'), file('B', WEBP, 'image/webp', 'b.webp', 'b')],
				pro(['b', 'a']),
			),
		);
		expect(result.status).toBe('success');
		const [links] = submitted();
		expect(links).toHaveLength(2);
		await sim().idle();
		const fetched = [...sim().fetches].sort((a, b) => a.index - b.index);
		expect(fetched.map((f) => [f.url, f.sha256])).toEqual([
			[links[0], sha256(WEBP)],
			[links[1], sha256(PNG)],
		]);
	});
});

describe('refused before any request, naming the item, the field and the file', () => {
	const TEN_AND_A_HALF_MIB = 10.5 * 1024 * 1024;
	test.each<[string, NodeSpec[], IDataObject, RegExp]>([
		[
			'a field the item does not have',
			[file('Start Frame', PNG, 'image/png', 'start.png')],
			fast({ startFrameBinaryField: 'photo' }),
			/^Item 0: "Start Frame Binary Field" is "photo", which the input item does not have \(the input item's binary fields: "data"\)/,
		],
		[
			'a text file named .png',
			[file('Start Frame', Buffer.from('not an image at all'), 'image/png', 'fake.png')],
			fast(),
			/^Item 0: binary field "data" \("Start Frame Binary Field"\) \(file "fake\.png"\) is declared image\/png, but its first bytes are not a JPEG, PNG or WebP image/,
		],
		[
			'a type the service does not take',
			[file('Start Frame', Buffer.from('hello'), 'text/plain', 'notes.txt')],
			fast(),
			/is of type text\/plain; allowed: image\/jpeg, image\/png, image\/webp/,
		],
		[
			'a PNG declared as JPEG',
			[file('Start Frame', PNG, 'image/jpeg', 'start.jpg')],
			fast(),
			/is declared image\/jpeg, but its bytes are image\/png/,
		],
		[
			'a file of 10.5 MiB',
			[file('Start Frame', PNG, 'image/png', 'big.png', 'data', TEN_AND_A_HALF_MIB)],
			fast(),
			/\(file "big\.png"\) is 10\.5 MB; allowed: at most 10 MB/,
		],
		[
			// n8n stored no size with it: the node learns it by reading, and stops at the limit
			'a file of 10.5 MiB whose size n8n did not store',
			[file('Start Frame', PNG, 'image/png', 'big.png', 'data', TEN_AND_A_HALF_MIB, true)],
			fast(),
			/\(file "big\.png"\) is more than 10\.0 MB; allowed: at most 10 MB/,
		],
		[
			'3 reference images for 1.5 Pro',
			[file('A', PNG, 'image/png', 'a.png', 'a')],
			pro(['a', 'a', 'a']),
			/"Reference Image Binary Fields" names 3 binary fields \("a", "a", "a"\) for model vidmodel-1\.5-pro; allowed: at most 2/,
		],
		[
			'binary fields together with Reference Image URLs',
			[file('A', PNG, 'image/png', 'a.png', 'a')],
			pro(['a'], {
				vidmodel15ProOptions: {
					imageBinaryFields: ['a'],
					imageUrls: ['https://f.example.com/a.png'],
				},
			}),
			/"image_urls" is set in "Reference Image URLs" while the images come from "Reference Image Binary Fields"/,
		],
	])('%s', async (_name, files, parameters, message) => {
		const result = await runWith(workflow(files, parameters));
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(message);
		expect(sim().count('submit')).toBe(0);
		expect(n8n.fetches).toHaveLength(0);
	});

	test('an item refused for its file keeps its Callback Reference (Continue On Fail)', async () => {
		const result = await runWith(
			workflow(
				[file('Start Frame', Buffer.from('not an image at all'), 'image/png', 'fake.png')],
				fast({}, { callbackReference: 'P-7' }),
				{ continueOnFail: true },
			),
		);
		const [item] = result.outputOf(NODE);
		expect(String(item.json.error)).toMatch(/first bytes are not a JPEG, PNG or WebP image/);
		expect(item.json.reference).toBe('P-7');
		expect(sim().count('submit')).toBe(0);
	});

	test('in-memory binary data: names N8N_DEFAULT_BINARY_DATA_MODE', async () => {
		const result = await runWith(
			workflow([file('Start Frame', PNG, 'image/png', 'start.png')], fast()),
			{
				binaryMode: 'default',
			},
		);
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(
			/binary field "data" \("Start Frame Binary Field"\) \(file "start\.png"\) is held in memory .*N8N_DEFAULT_BINARY_DATA_MODE=filesystem/,
		);
		expect(sim().count('submit')).toBe(0);
	});

	test('an n8n whose public URL is local, with a strict credential: names WEBHOOK_URL and the credential switch', async () => {
		const strict = {
			mediaGenerationApi: {
				apiKey: sim().apiKey,
				baseUrl: sim().baseUrl,
				allowPrivateFileHosts: false,
			},
		};
		for (const baseUrl of [n8n.baseUrl, 'http://localhost:5678/']) {
			const result = await runWith(
				workflow([file('Start Frame', PNG, 'image/png', 'start.png')], fast()),
				{
					baseUrl,
					credentials: strict,
				},
			);
			expect(result.status).toBe('error');
			expect(result.error?.message).toMatch(
				/^Item 0: the service cannot fetch the reference images from this n8n: its public URL http:\/\/(127\.0\.0\.1|localhost):\d+\/ is refused \((127\.0\.0\.1 is a loopback address|localhost is a loopback name).*Set WEBHOOK_URL to it and restart n8n, or, if the service runs on your own network, turn on "Allow Private Network File Hosts"/,
			);
			expect(result.dump()).not.toMatch(/token=(?!\*\*\*)/);
		}
		expect(sim().count('submit')).toBe(0);
	});

	test('one bad item of a batch: nothing is sent for any; with Continue On Fail the others go', async () => {
		const items = [
			{ b64: PNG.toString('base64') },
			{ b64: Buffer.from('text').toString('base64') },
		];
		const bad: NodeSpec = {
			name: 'Files',
			type: 'harness.binary',
			parameters: { base64: '={{ $json.b64 }}', mimeType: 'image/png', fileName: 'item.png' },
		};
		const stopped = await runWith(workflow([bad], fast()), { items });
		expect(stopped.status).toBe('error');
		expect(stopped.error?.message).toMatch(/^Item 1: binary field "data"/);
		expect(sim().count('submit')).toBe(0);

		const going = await runWith(workflow([bad], fast(), { continueOnFail: true }), { items });
		expect(going.status).toBe('success');
		const out = going.outputOf(NODE);
		expect(out[0].json.status).toBe('finished');
		expect(errorText(out[1])).toMatch(/^Item 1: binary field "data"/);
		expect(sim().count('submit')).toBe(1);
	});
});

describe('a service whose refusal quotes the image URL', () => {
	let service: http.Server;
	let baseUrl = '';
	beforeAll(async () => {
		service = http.createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (c: Buffer) => chunks.push(c));
			req.on('end', () => {
				const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
					input?: IDataObject;
				};
				const url = (body.input?.image_urls as string[] | undefined)?.[0];
				res.writeHead(400, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ code: 400, msg: `image_urls[0] ${url} could not be fetched` }));
			});
		});
		await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
		baseUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
	});
	afterAll(async () => {
		await new Promise<void>((resolve) => service.close(() => resolve()));
	});

	test('the token is masked in the error and in every log line', async () => {
		const logger = await nodeLogger();
		const lines: string[] = [];
		const spies = (['debug', 'info', 'warn', 'error'] as const).map((level) =>
			jest.spyOn(logger, level).mockImplementation((message: string, meta?: object) => {
				lines.push(`${message} ${JSON.stringify(meta ?? {})}`);
			}),
		);
		let result: RunResult;
		try {
			result = await runWith(
				workflow([file('Start Frame', PNG, 'image/png', 'start.png')], fast()),
				{
					credentials: {
						mediaGenerationApi: {
							apiKey: 'quoted-service-key',
							baseUrl,
							allowPrivateFileHosts: true,
						},
					},
				},
			);
		} finally {
			for (const spy of spies) spy.mockRestore();
		}
		expect(result.status).toBe('error');
		// The service's words are kept (the link's base too), the token masked.
		expect(result.error?.message).toContain(`${n8n.baseUrl}rest/binary-data/signed?token=***`);
		const dump = result!.dump();
		expect(lines.some((line) => line.includes('links binary reference images'))).toBe(true);
		for (const text of [dump, lines.join('\n')]) {
			expect(text).not.toMatch(/token=(?!\*\*\*)/);
			expect(text).not.toMatch(/eyJ[\w-]+\.eyJ/);
		}
	});
});
