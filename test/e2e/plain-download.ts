// The baseline of the end-to-end download figures: a plain Node stream-to-disk (http.get piped
// into fs.createWriteStream) of a file from the simulator's file host, in a process of its own
// (the simulator lives in the test process: serving and receiving on one event loop would slow
// both). Prints the time from request to file closed, and the process's peak RSS growth.
/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { Simulator } from '../simulator';

const CHILD = `
const http = require('node:http'), fs = require('node:fs');
const { pipeline } = require('node:stream/promises');
const [url, out] = process.argv.slice(1);
const kb = (k) => Number(new RegExp(k + ':\\\\s+(\\\\d+) kB').exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const base = kb('VmRSS');
try { fs.writeFileSync('/proc/self/clear_refs', '5'); } catch {}
const started = Date.now();
http.get(url, (res) => pipeline(res, fs.createWriteStream(out)).then(() => {
  const ms = Date.now() - started;
  const size = fs.statSync(out).size;
  fs.rmSync(out, { force: true });
  process.stdout.write(JSON.stringify({ ms, size, growth: kb('VmHWM') - base }) + '\\n');
}, (e) => { process.stderr.write(String(e)); process.exit(1); })).on('error', (e) => { process.stderr.write(String(e)); process.exit(1); });
`;

/** File URL of a finished task of `size` bytes, made through the service's API. */
export async function simFileUrl(sim: Simulator, size: number): Promise<string> {
	const res = await fetch(`${sim.baseUrl}/api/generate/submit`, {
		method: 'POST',
		headers: { Authorization: `Bearer ${sim.apiKey}`, 'Content-Type': 'application/json' },
		body: JSON.stringify({
			model: 'generate-music',
			input: { prompt: `plain baseline [sim:duration=0] [sim:files=1] [sim:size=${size}]` },
		}),
	});
	const taskId = ((await res.json()) as { data: { task_id: string } }).data.task_id;
	const task = sim.task(taskId);
	if (!task) throw new Error(`no simulator task ${taskId}`);
	// The file host serves a task's files once its (zero) duration is over.
	await new Promise((r) => setTimeout(r, 20));
	return task.files[0].url;
}

/** Downloads `url` with a plain Node stream in a child process: ms, bytes, peak RSS growth. */
export async function plainDownload(
	url: string,
): Promise<{ ms: number; size: number; growth: number }> {
	const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-plain-')), 'file');
	try {
		return await new Promise((resolve, reject) => {
			const p = spawn(process.execPath, ['-e', CHILD, url, out], {
				stdio: ['ignore', 'pipe', 'pipe'],
			});
			let stdout = '';
			let stderr = '';
			p.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
			p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
			p.on('error', reject);
			p.on('close', (code) => {
				if (code !== 0) return reject(new Error(`plain download failed (${code}): ${stderr}`));
				resolve(JSON.parse(stdout.trim()) as { ms: number; size: number; growth: number });
			});
		});
	} finally {
		fs.rmSync(path.dirname(out), { recursive: true, force: true });
	}
}
