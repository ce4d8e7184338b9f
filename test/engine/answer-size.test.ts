// A hostile or broken service whose status and submit answers never end (issue 28, finding 6):
// the node stops reading at MAX_ANSWER_BYTES with a clear error; a submission whose answer is
// too large may have been accepted, so it is never sent again. Real HTTP on loopback, the node
// through n8n-core's engine.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { MAX_ANSWER_BYTES } from '../../nodes/shared/transport/api';
import { runWorkflow } from '../harness';
import { mediaWorkflow } from './support';

jest.setTimeout(60_000);

const API_KEY = ['sk', 'answer', 'size', '0123456789'].join('-');
let server: http.Server;
let baseUrl = '';
const requests: string[] = [];
/** Bytes the service got to write per answer before the node closed the connection. */
let written = 0;

/** A JSON answer that goes on and on: `{"code":200,"data":{"padding":"xxxx…` without an end. */
function endless(res: http.ServerResponse): void {
	res.writeHead(200, { 'Content-Type': 'application/json' });
	res.write('{"code":200,"data":{"task_id":"task_1234567890","status":"processing","padding":"');
	const chunk = Buffer.alloc(64 * 1024, 'x');
	const pump = () => {
		while (!res.destroyed && written < 64 * 1024 * 1024) {
			written += chunk.length;
			if (!res.write(chunk)) return void res.once('drain', pump);
		}
		res.end('"}}');
	};
	pump();
}

beforeAll(async () => {
	server = http.createServer((req, res) => {
		requests.push(`${req.method} ${req.url}`);
		req.resume();
		endless(res);
	});
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
	server.closeAllConnections();
	await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
	requests.length = 0;
	written = 0;
});

const credentials = () => ({ mediaGenerationApi: { apiKey: API_KEY, baseUrl } });

it('a status answer over the limit: the read stops with a clear error', async () => {
	const result = await runWorkflow(
		mediaWorkflow({ resource: 'task', operation: 'getStatus', taskId: 'task_1234567890' }),
		{ credentials: credentials() },
	);
	expect(result.status).toBe('error');
	expect(result.error?.message).toMatch(
		/answer is larger than 4 MB .*no genuine answer is that large/,
	);
	// The node stopped reading near the limit (socket buffers aside), not at the answer's end.
	expect(written).toBeLessThan(MAX_ANSWER_BYTES * 4);
});

it('a submit answer over the limit: reported as possibly accepted, sent once', async () => {
	const result = await runWorkflow(
		mediaWorkflow({
			resource: 'video',
			operation: 'generate',
			model: 'vidmodel-1.5-pro',
			prompt: 'a red fox in the snow',
			aspectRatio: '1:1',
			duration: 4,
			waitForCompletion: false,
		}),
		{ credentials: credentials() },
	);
	expect(result.status).toBe('error');
	expect(result.error?.message).toMatch(/may have been accepted .*answer is larger than 4 MB/);
	expect(requests.filter((r) => r.startsWith('POST'))).toHaveLength(1);
});
