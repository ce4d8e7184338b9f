// Contract: the standalone simulator (`npm run simulator`) starts, prints what a user needs,
// serves the API, stops on Ctrl-C, and names a bad flag.
/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

import axios from 'axios';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const CLI = path.join(__dirname, 'cli.ts');

function start(args: string[]): {
	child: ChildProcess;
	out: () => string;
	exit: Promise<number | null>;
} {
	const child = spawn(process.execPath, [TSX, CLI, ...args], {
		cwd: ROOT,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let out = '';
	child.stdout!.on('data', (d) => (out += d));
	child.stderr!.on('data', (d) => (out += d));
	const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
	return { child, out: () => out, exit };
}

async function until(cond: () => boolean, ms = 20000) {
	const end = Date.now() + ms;
	while (!cond()) {
		if (Date.now() > end) throw new Error('timed out waiting for the CLI');
		await new Promise((r) => setTimeout(r, 50));
	}
}

jest.setTimeout(30000);

it('prints base URL, file host and key, serves the API with the given options, and stops on SIGINT', async () => {
	const cli = start([
		'--',
		'--port',
		'0',
		'--file-port',
		'0',
		'--key',
		'cli-key',
		'--image-model',
		'pix',
		'--duration',
		'0',
	]);
	try {
		await until(() => cli.out().includes('Ctrl-C'));
		const base = /API base URL : (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.out())![1];
		expect(cli.out()).toMatch(/File host {4}: http:\/\/localhost:\d+/);
		expect(cli.out()).toContain('API key      : cli-key');
		const headers = { Authorization: 'Bearer cli-key' };
		const sub = await axios.post(
			`${base}/api/generate/submit`,
			{ model: 'pix', input: { prompt: 'x' } },
			{ headers },
		);
		const st = await axios.get(`${base}/api/generate/status/${sub.data.data.task_id}`, { headers });
		expect(st.data.data.status).toBe('finished');
		const file = await axios.get(st.data.data.files[0].file_url, { responseType: 'arraybuffer' });
		expect(Buffer.from(file.data).subarray(1, 4).toString()).toBe('PNG');
	} finally {
		cli.child.kill('SIGINT');
	}
	expect(await cli.exit).toBe(0);
});

it('names an unknown flag or a bad value and exits 1', async () => {
	for (const [args, text] of [
		[['--colour', 'red'], 'unknown option "--colour"'],
		[['--port', 'abc'], '--port: "abc" is not a non-negative integer'],
		[['--callback-shape', 'xml'], '--callback-shape: "xml" is not one of status, flat, altKeys'],
	] as const) {
		const cli = start([...args]);
		expect(await cli.exit).toBe(1);
		expect(cli.out()).toContain(text);
	}
});
