// The bounds of downloads through the real node and n8n's engine (issue 19, finding 2; issue 21,
// part 2): the credential's private-address rule, Options → Max File Size (MB) and the default
// that follows n8n's binary data mode, and the reference-image pre-check under the same rule.
// Each failure keeps task_id, the file URLs and expires_at, and stores nothing.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { BINARY_DATA_PATH, triggerWorkflow } from '../harness';
import { startCallbackReceiver } from '../harness/webhook';
import type { Simulator } from '../simulator';
import { client } from '../simulator/client';
import { signCallbackUrl } from '../../nodes/shared/callbackUrl';
import {
	NODE,
	expectKeyNowhere,
	mediaWorkflow,
	run,
	useSimulator,
	videoWithReferenceImages,
} from './support';

const sim = useSimulator();
jest.setTimeout(60_000);

const fileRequests = (s: Simulator) => s.requests.filter((r) => r.endpoint === 'file');
const storeFiles = () =>
	fs.existsSync(BINARY_DATA_PATH)
		? fs
				.readdirSync(BINARY_DATA_PATH, { recursive: true, withFileTypes: true })
				.filter((e) => e.isFile())
				.map((e) => path.join(e.parentPath, e.name))
		: [];

function music(prompt: string, options: IDataObject = {}): IDataObject {
	return { resource: 'music', operation: 'generate', model: 'generate-music', prompt, options };
}

/** Runs with errors kept in the item (Settings → On Error: Continue), as users keep task_id. */
async function failedItem(
	parameters: IDataObject,
	options: Parameters<typeof run>[2] = {},
): Promise<{ json: IDataObject; message: string; result: Awaited<ReturnType<typeof run>> }> {
	const result = await run(
		sim(),
		mediaWorkflow(parameters, { onError: 'continueRegularOutput' }),
		options,
	);
	expect(result.error).toBeUndefined();
	const [item] = result.outputOf(NODE);
	expect(item.binary).toBeUndefined();
	return { json: item.json, message: String(item.json.error ?? ''), result };
}

function expectTaskKept(json: IDataObject): void {
	expect(json.task_id).toEqual(expect.stringMatching(/^task_/));
	expect(json.status).toBe('finished');
	expect(json.expires_at).toEqual(expect.any(String));
	const files = json.files as IDataObject[];
	expect(files).toHaveLength(1);
	expect(String(files[0].url)).toContain(`/files/${String(json.task_id)}/`);
}

describe('files from private, loopback and link-local addresses (the credential decides)', () => {
	it("off (the default): the simulator's file host on localhost is refused before any request, the item keeps the task", async () => {
		const before = storeFiles();
		const { json, message, result } = await failedItem(music('private [sim:duration=0]'), {
			// The credential as a user creates it: the field left at its default.
			credentials: { mediaGenerationApi: { apiKey: sim().apiKey, baseUrl: sim().baseUrl } },
		});
		expect(message).toMatch(/localhost/);
		expect(message).toMatch(/loopback/);
		expect(message).toContain('"Allow Private Network File Hosts"');
		expect(message).toContain(String(json.task_id));
		expectTaskKept(json);
		expect(fileRequests(sim())).toHaveLength(0);
		expect(storeFiles()).toEqual(before);
		expectKeyNowhere(sim(), result);
	});

	it('off: the reference-image pre-check sends no request to a loopback image host either', async () => {
		const image = sim().referenceUrl('start.png');
		const result = await run(sim(), mediaWorkflow(videoWithReferenceImages([image])), {
			credentials: { mediaGenerationApi: { apiKey: sim().apiKey, baseUrl: sim().baseUrl } },
		});
		expect(result.status).toBe('error');
		const error = result.error as { message?: string; description?: string };
		expect(`${error.message} ${error.description}`).toMatch(
			/image_urls\[0\].*refused: localhost.*Allow Private Network File Hosts/s,
		);
		expect(sim().requests.filter((r) => r.endpoint === 'reference')).toHaveLength(0);
		expect(sim().count('submit')).toBe(0);
	});
});

describe('the Trigger downloads under the same rule', () => {
	it('off: a genuine callback starts the execution with the task and the error, no file is fetched', async () => {
		const receiver = await startCallbackReceiver({
			workflow: triggerWorkflow(),
			credentials: { mediaGenerationApi: { apiKey: sim().apiKey, baseUrl: sim().baseUrl } },
		});
		try {
			const taskId = await client(sim()).create(
				sim().imageModelId,
				{ prompt: 'via the trigger [sim:duration=0]' },
				{ callback_url: signCallbackUrl(receiver.callbackUrl({ ref: 'r1' }), sim().apiKey) },
			);
			const [delivery] = await receiver.waitFor(1);
			await sim().idle();
			const execution = await delivery.execution!;
			const [item] = execution.outputOf('Downstream');
			expect(item.json.task_id).toBe(taskId);
			expect(String(item.json.error)).toContain('"Allow Private Network File Hosts"');
			expect(item.binary ?? {}).toEqual({});
			expect(fileRequests(sim())).toHaveLength(0);
		} finally {
			await receiver.close();
		}
	});
});

describe('Options → Max File Size (MB)', () => {
	it('a Content-Length over the limit: one request, no byte stored, the error names size, limit and setting', async () => {
		const before = storeFiles();
		const { json, message } = await failedItem(
			music('big [sim:duration=0] [sim:size=3000000]', { maxFileSizeMb: 1 }),
		);
		expect(message).toContain('2.9 MB (3000000 bytes, its Content-Length)');
		expect(message).toContain('the limit of 1 MB set in Options → Max File Size (MB)');
		expect(message).toMatch(/turn off Options → Download Files/);
		expect(message).toContain(String(json.task_id));
		expectTaskKept(json);
		// One attempt, not a retry.
		expect(fileRequests(sim())).toHaveLength(1);
		expect(storeFiles()).toEqual(before);
	});

	it('under the limit: downloaded as usual', async () => {
		const result = await run(
			sim(),
			mediaWorkflow(music('fits [sim:duration=0] [sim:size=900000]', { maxFileSizeMb: 1 })),
		);
		expect(result.error).toBeUndefined();
		const [item] = result.outputOf(NODE);
		expect((await result.readBinary(item, 'data')).length).toBe(900_000);
	});

	it("unset, in n8n's memory (default) binary mode: a 300 MB file is refused before its body, naming the mode", async () => {
		const { json, message } = await failedItem(
			music('huge [sim:duration=0] [sim:size=300000000]'),
			{ binaryMode: 'default' },
		);
		expect(message).toContain('286.1 MB (300000000 bytes, its Content-Length)');
		expect(message).toContain(`the default limit of 256 MB for n8n's "default" binary data mode`);
		expect(message).toContain('Options → Max File Size (MB) changes the limit');
		expectTaskKept(json);
		expect(fileRequests(sim())).toHaveLength(1);
	});
});
