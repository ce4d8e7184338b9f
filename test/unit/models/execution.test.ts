// buildSubmission and checkReferenceImages inside a real n8n execution: n8n-core's
// WorkflowExecute runs a test-only node built from the registry's properties, so parameters
// come through n8n's own getNodeParameter (defaults, expressions, collections) and reference
// images are fetched with n8n's own httpRequest helper from a real local HTTP server.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import {
	buildSubmission,
	checkReferenceImages,
	generateProperties,
	type MediaKind,
} from '../../../nodes/MediaGeneration/models';
import { frame } from './node-frame';
import {
	MANUAL_TRIGGER_TYPE,
	chain,
	registerNodeType,
	runWorkflow,
	type NodeSpec,
} from '../../harness';

const KINDS: MediaKind[] = ['image', 'video', 'music'];

/** Test-only node: outputs each item's submission, or its error with continueOnFail. */
class ModelProbe implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Model Probe',
		name: 'test.modelProbe',
		group: ['transform'],
		version: 1,
		description: 'Test-only: builds submissions with the model registry',
		defaults: { name: 'Probe' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		usableAsTool: true,
		properties: [
			...frame,
			...KINDS.flatMap((k) => generateProperties(k)),
			{
				displayName: 'Check Reference Images',
				name: 'checkImages',
				type: 'boolean',
				default: false,
			},
			{
				displayName: 'Name the Model to the Check',
				name: 'nameModel',
				type: 'boolean',
				default: true,
			},
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const out: INodeExecutionData[] = [];
		for (let i = 0; i < this.getInputData().length; i++) {
			try {
				const submission = buildSubmission(
					this,
					i,
					this.getNodeParameter('resource', i) as MediaKind,
				);
				const urls = submission.input.image_urls;
				if (this.getNodeParameter('checkImages', i) && Array.isArray(urls)) {
					const modelKey = this.getNodeParameter('nameModel', i) ? submission.modelKey : undefined;
					// The image host of these tests is on 127.0.0.1: private addresses allowed.
					await checkReferenceImages(this, i, urls as string[], modelKey, true);
				}
				out.push({ json: submission, pairedItem: { item: i } });
			} catch (error) {
				// The registry throws NodeOperationErrors; wrapping one returns it unchanged.
				const e = new NodeOperationError(this.getNode(), error as Error, { itemIndex: i });
				if (!this.continueOnFail()) throw e;
				out.push({
					json: {
						error: e.message,
						description: e.description ?? null,
						itemIndex: e.context.itemIndex as number,
					},
					pairedItem: { item: i },
				});
			}
		}
		return [out];
	}
}
registerNodeType(new ModelProbe());

function probe(parameters: NodeSpec['parameters'], continueOnFail = true) {
	return chain(
		{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
		{ name: 'Probe', type: 'test.modelProbe', parameters, settings: { continueOnFail } },
	);
}

const proByExpression = {
	resource: 'video',
	operation: 'generate',
	model: 'vidmodel-1.5-pro',
	prompt: '={{ $json.prompt }}',
	aspectRatio: '={{ $json.ratio }}',
	duration: '={{ $json.duration }}',
	vidmodel15ProOptions: { imageUrls: '={{ $json.urls }}' },
};

describe('buildSubmission in a real n8n execution', () => {
	it('reads each item’s parameters through expressions, coerces "8" and reports bad items by index', async () => {
		const result = await runWorkflow(probe(proByExpression), {
			items: [
				{ prompt: 'first', ratio: '16:9', duration: '8', urls: ['https://f.example.com/a.png'] },
				{ prompt: 'second', ratio: '9:16', duration: 10, urls: [] },
				{ prompt: '', ratio: '2:1', duration: 'x', urls: ['a', 'b', 'c'] },
			],
		});
		expect(result.status).toBe('success');
		const out = result.outputOf('Probe');
		expect(out.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		const pro = 'vidmodel-1.5-pro';
		expect(out[0].json).toEqual({
			model: pro,
			modelKey: pro,
			input: {
				prompt: 'first',
				aspect_ratio: '16:9',
				duration: 8,
				image_urls: ['https://f.example.com/a.png'],
			},
		});
		expect(out[1].json).toEqual({
			error: 'Item 1: "duration" is 10 for model vidmodel-1.5-pro; allowed: 4, 8, 12',
			description: '"duration" is 10 for model vidmodel-1.5-pro; allowed: 4, 8, 12',
			itemIndex: 1,
		});
		const third = out[2].json as { error: string; description: string; itemIndex: number };
		expect(third.itemIndex).toBe(2);
		expect(third.description.split('\n').map((e) => /^"([^"]+)"/.exec(e)![1])).toEqual([
			'prompt',
			'aspect_ratio',
			'duration',
			'image_urls',
			'image_urls[0]',
			'image_urls[1]',
			'image_urls[2]',
		]);
		expect(third.error.startsWith('Item 2: "prompt" is empty for model vidmodel-1.5-pro')).toBe(
			true,
		);
	});

	it('fails the execution with a NodeOperationError for the item when Continue On Fail is off', async () => {
		const result = await runWorkflow(probe(proByExpression, false), {
			items: [
				{ prompt: 'ok', ratio: '1:1', duration: 4 },
				{ prompt: 'bad', ratio: '5:4', duration: 4 },
			],
		});
		expect(result.status).toBe('error');
		// The engine keeps the error as n8n records it (serialised): name and item stay.
		expect(result.error).toMatchObject({ name: 'NodeOperationError', context: { itemIndex: 1 } });
		expect(result.error?.message).toBe(
			'Item 1: "aspect_ratio" is "5:4" for model vidmodel-1.5-pro; allowed: 1:1, 21:9, 4:3, 3:4, 16:9, 9:16',
		);
	});

	it('uses the typed model ID and the additional JSON of a by-ID model', async () => {
		const result = await runWorkflow(
			probe({
				resource: 'image',
				operation: 'generate',
				model: 'image-by-id',
				modelId: '={{ $json.id }}',
				prompt: 'A red bicycle',
				imageByIdOptions: { n: 2 },
				additionalInputFields: '={{ JSON.stringify({ seed: $json.seed }) }}',
			}),
			{ items: [{ id: 'acme-image-1', seed: 5 }] },
		);
		expect(result.outputOf('Probe')[0].json).toEqual({
			model: 'acme-image-1',
			modelKey: 'image-by-id',
			input: { prompt: 'A red bicycle', n: 2, seed: 5 },
		});
	});

	it('rejects a saved model that belongs to another resource', async () => {
		const result = await runWorkflow(
			probe({ resource: 'video', operation: 'generate', model: 'generate-music', prompt: 'x' }),
		);
		expect(result.outputOf('Probe')[0].json.error).toMatch(
			/^Item 0: "model" is "generate-music" for resource video; allowed: vidmodel-1\.5-pro, /,
		);
	});

	it('uses the only model of a resource without a Model dropdown, whatever value was saved', async () => {
		// Music has one model and so no Model dropdown: a value left from another resource
		// cannot be seen or changed by the user, and must not break the node.
		const result = await runWorkflow(
			probe({ resource: 'music', operation: 'generate', model: 'vidmodel-1.5-pro', prompt: 'x' }),
		);
		expect(result.outputOf('Probe')[0].json).toEqual({
			model: 'generate-music',
			modelKey: 'generate-music',
			input: { prompt: 'x' },
		});
	});
});

describe('checkReferenceImages against a real file host', () => {
	const MB = 1024 * 1024;
	const png = Buffer.concat([
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		Buffer.alloc(2040),
	]);
	const webp = Buffer.concat([
		Buffer.from('RIFF'),
		Buffer.alloc(4),
		Buffer.from('WEBP'),
		Buffer.alloc(100),
	]);
	const requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }> = [];
	let bigBodyBytesSent = 0;
	let server: http.Server;
	let base: string;

	beforeAll(async () => {
		server = http.createServer((req, res) => {
			requests.push({ method: req.method!, url: req.url!, headers: req.headers });
			const head = req.method === 'HEAD';
			switch (req.url) {
				case '/a.png':
					res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
					return res.end(head ? undefined : png);
				case '/big.jpg':
					// HEAD only: the size alone must decide.
					res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': 11 * MB });
					return res.end();
				case '/anim.gif':
					res.writeHead(200, { 'content-type': 'image/gif', 'content-length': 500 });
					return res.end(head ? undefined : Buffer.alloc(500));
				case '/page':
					res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': 20 });
					return res.end(head ? undefined : '<html>login</html>..');
				case '/missing.png':
					res.writeHead(404);
					return res.end();
				case '/nohead.webp':
					// HEAD refused; a ranged GET answers with the total size and a generic type.
					if (head) {
						res.writeHead(405);
						return res.end();
					}
					res.writeHead(206, {
						'content-type': 'application/octet-stream',
						'content-range': `bytes 0-11/${webp.length}`,
						'content-length': 12,
					});
					return res.end(webp.subarray(0, 12));
				case '/norange.png': {
					// HEAD refused and Range ignored: a 20 MB body the check must not read through.
					if (head) {
						res.writeHead(405);
						return res.end();
					}
					res.writeHead(200, {
						'content-type': 'application/octet-stream',
						'content-length': 20 * MB,
					});
					const chunk = Buffer.concat([png.subarray(0, 8), Buffer.alloc(64 * 1024 - 8)]);
					const pump = () => {
						while (bigBodyBytesSent < 20 * MB) {
							bigBodyBytesSent += chunk.length;
							if (!res.write(chunk)) return void res.once('drain', pump);
						}
						res.end();
					};
					res.on('close', () => undefined);
					return pump();
				}
				default:
					res.writeHead(500);
					return res.end();
			}
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});

	afterAll(async () => {
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	});

	async function check(urls: string[]) {
		const result = await runWorkflow(probe({ ...proByExpression, checkImages: true }), {
			items: [{ prompt: 'p', ratio: '16:9', duration: 8, urls }],
			credentials: {
				// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
				mediaGenerationApi: {
					apiKey: 'sk-never-to-file-hosts',
					baseUrl: 'http://127.0.0.1:1',
					allowPrivateFileHosts: true,
				},
			},
		});
		return result.outputOf('Probe')[0].json as {
			error?: string;
			description?: string;
			input?: unknown;
		};
	}

	it('passes JPEG/PNG/WebP images within 10 MB, sniffing a generic type and asking for the first bytes only', async () => {
		const out = await check([`${base}/a.png`, `${base}/nohead.webp`]);
		expect(out.error).toBeUndefined();
		expect(out.input).toMatchObject({ image_urls: [`${base}/a.png`, `${base}/nohead.webp`] });
		const ranged = requests.find((r) => r.method === 'GET' && r.url === '/nohead.webp');
		expect(ranged?.headers.range).toBe('bytes=0-11');
	});

	it('names every URL with a problem: too large, wrong type, not downloadable', async () => {
		const out = await check([`${base}/big.jpg`, `${base}/anim.gif`]);
		expect(out.description).toBe(
			[
				`reference image "image_urls[0]" (${base}/big.jpg) is 11.0 MB; allowed: at most 10 MB`,
				`reference image "image_urls[1]" (${base}/anim.gif) is of type image/gif; allowed: image/jpeg, image/png, image/webp`,
			].join('\n'),
		);
		expect(out.error).toMatch(/^Item 0: reference image "image_urls\[0\]"/);
		const more = await check([`${base}/missing.png`, `${base}/page`]);
		expect(more.description).toBe(
			[
				`reference image "image_urls[0]" (${base}/missing.png) could not be downloaded (HTTP 404); reference images must be publicly accessible and directly downloadable`,
				`reference image "image_urls[1]" (${base}/page) is of type text/html; allowed: image/jpeg, image/png, image/webp`,
			].join('\n'),
		);
	});

	it('stops reading a host that ignores Range, and judges by its declared size', async () => {
		const out = await check([`${base}/norange.png`]);
		expect(out.description).toBe(
			`reference image "image_urls[0]" (${base}/norange.png) is 20.0 MB; allowed: at most 10 MB`,
		);
		// The server could not push the whole 20 MB into a reader that stopped.
		expect(bigBodyBytesSent).toBeLessThan(20 * MB);
	});

	it('checks only that frames download for the 2.0 fast model, which documents no type or size limit', async () => {
		const run = async (start: string, end: string) =>
			(
				await runWorkflow(
					probe({
						resource: 'video',
						operation: 'generate',
						model: 'vidmodel-2.0-fast/image-to-video',
						prompt: 'p',
						startFrameUrl: start,
						vidmodel20FastOptions: { endFrameUrl: end },
						checkImages: true,
					}),
				)
			).outputOf('Probe')[0].json as { error?: string; description?: string };
		expect((await run(`${base}/anim.gif`, `${base}/big.jpg`)).error).toBeUndefined();
		expect((await run(`${base}/a.png`, `${base}/missing.png`)).description).toBe(
			`reference image "image_urls[1]" (${base}/missing.png) could not be downloaded (HTTP 404); reference images must be publicly accessible and directly downloadable`,
		);
	});

	it('applies the documented limits when no model is named', async () => {
		const result = await runWorkflow(
			probe({
				resource: 'video',
				operation: 'generate',
				model: 'vidmodel-2.0-fast/image-to-video',
				prompt: 'p',
				startFrameUrl: `${base}/anim.gif`,
				checkImages: true,
				nameModel: false,
			}),
		);
		expect(result.outputOf('Probe')[0].json.description).toBe(
			`reference image "image_urls[0]" (${base}/anim.gif) is of type image/gif; allowed: image/jpeg, image/png, image/webp`,
		);
	});

	it('never sends the API key or any authorization to file hosts', () => {
		expect(requests.length).toBeGreaterThan(0);
		for (const r of requests) {
			expect(r.headers.authorization).toBeUndefined();
			expect(JSON.stringify(r.headers)).not.toContain('sk-never-to-file-hosts');
		}
	});
});
