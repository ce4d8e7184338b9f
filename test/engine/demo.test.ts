/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// `npm run demo` is the README's main command: its main function runs here on every test run so
// that the example workflows and the demo keep working (sources instead of the build, a temp
// output folder, short simulated tasks).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { main, runnableExamples } from '../../tools/demo';

jest.setTimeout(90_000);

describe('npm run demo', () => {
	const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-demo-'));
	afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

	it('runs the image, video and music examples end to end and writes their files; the service fetches the generated image from n8n to animate it', async () => {
		const lines: string[] = [];
		const report = await main({
			source: 'src',
			outDir,
			durationMs: 300,
			log: (l) => lines.push(l),
		});
		const text = lines.join('\n');

		expect(report.ok).toBe(true);
		expect(report.runs.map((r) => path.basename(r.example)).sort()).toEqual([
			'animate-generated-image.json',
			'generate-image.json',
			'generate-music.json',
			'generate-video.json',
		]);
		const mimes = report.runs
			.flatMap((r) => r.tasks.flatMap((t) => t.files.map((f) => f.mimeType)))
			.sort();
		expect(mimes).toEqual(['audio/mpeg', 'image/png', 'image/png', 'video/mp4', 'video/mp4']);
		// Animate Image sent n8n's link to the image Generate Image had downloaded, and the service
		// fetched exactly those bytes from n8n.
		const animate = report.runs.find((r) => r.example.endsWith('animate-generated-image.json'))!;
		const [image, video] = animate.tasks;
		expect(video.references).toEqual([
			expect.objectContaining({
				index: 0,
				fromN8n: true,
				ok: true,
				sameAs: image.files[0].fileName,
			}),
		]);
		expect(text).toContain(
			`the service fetched image_urls[0] from this n8n (a temporary link to binary data)`,
		);
		expect(text).not.toMatch(/token=/);
		for (const run of report.runs) {
			expect(run.status).toBe('success');
			for (const task of run.tasks) {
				expect(task.status).toBe('finished');
				expect(text).toContain(task.taskId);
				for (const file of task.files) {
					expect(fs.statSync(file.path).size).toBe(file.bytes);
					expect(file.bytes).toBe(file.servedBytes);
					expect(path.dirname(file.path)).toBe(outDir);
					expect(text).toContain(file.fileName);
				}
			}
		}
		expect(report.fileRequests).toBe(5);
		expect(report.keyLeaksToFileHost).toBe(0);
		// Every model used is named as the service received it, and the demo ends saying where to look.
		const used = new Map<string, number>();
		for (const t of report.runs.flatMap((r) => r.tasks))
			used.set(String(t.model), (used.get(String(t.model)) ?? 0) + 1);
		expect([...used.keys()].sort()).toEqual([
			'generate-music',
			'image-1',
			'vidmodel-1.5-pro',
			'vidmodel-2.0-fast/image-to-video',
		]);
		for (const [model, count] of used)
			expect(text).toContain(`  ${model}: ${count} task${count === 1 ? '' : 's'}\n`);
		expect(text).toMatch(/Where to look:\n/);
		expect(text).toMatch(/Demo passed/);
	});

	it('every example file is a workflow n8n can import, using the published node type names', () => {
		const dir = path.resolve(__dirname, '..', '..', 'examples');
		const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
		expect(files.length).toBeGreaterThanOrEqual(3);
		for (const f of files) {
			const wf = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
			expect(typeof wf.name).toBe('string');
			for (const node of wf.nodes) {
				expect(node.type).not.toMatch(/^CUSTOM\./);
				if (String(node.type).startsWith('n8n-nodes-media-generation.')) {
					expect(Object.keys(node.credentials ?? {})).toEqual(['mediaGenerationApi']);
					expect(node.credentials.mediaGenerationApi.name).toBe('Media Generation API');
				}
			}
		}
		expect(runnableExamples().map((f) => path.basename(f))).toEqual([
			'animate-generated-image.json',
			'generate-image.json',
			'generate-music.json',
			'generate-video.json',
		]);
	});
});
