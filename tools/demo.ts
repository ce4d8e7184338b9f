/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// `npm run demo`: the one-item example workflows in examples/ run end to end through n8n's real
// execution engine (n8n-core's WorkflowExecute, in-process) against the embedded simulator of the
// service, over real HTTP; then the table and AI Agent examples, which need n8n's own nodes,
// run in a real n8n (demo-n8n.ts; skipped with --no-n8n). The generated files are written to
// ./demo-output/. Exits non-zero if any example fails. No API key or network access is needed.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INode, INodeExecutionData } from 'n8n-workflow';

import {
	MEDIA_GENERATION_TYPE,
	MANUAL_TRIGGER_TYPE,
	knowsNodeType,
	loadWorkflowFile,
	runWorkflow,
	setPackageSource,
	type PackageSource,
	type RunResult,
	type WorkflowJson,
} from '../test/harness';
import { startSimulator, type Simulator } from '../test/simulator';
import { startBinaryDataServer } from '../test/harness/binaryData';
import { runJobsInN8n, type JobsReport } from './demo-n8n';

const ROOT = path.resolve(__dirname, '..');

export interface DemoOptions {
	/** Where the generated files go (default ./demo-output). */
	outDir?: string;
	/** Node classes from the build (`dist`, as n8n loads them: the default) or the sources. */
	source?: PackageSource;
	/** Example files to run (default: every examples/*.json started by a Manual Trigger). */
	examples?: string[];
	/** Simulated generation time of each task (default 3 s). */
	durationMs?: number;
	log?: (line: string) => void;
	/**
	 * Also run the jobs that need n8n's own nodes (the table and the AI Agent examples) in a
	 * real n8n (demo-n8n.ts). The command does, unless given --no-n8n; the engine layer's test of
	 * this file does not (the e2e and agent layers run those examples).
	 */
	withN8n?: boolean;
}

export interface DemoFile {
	fileName: string;
	mimeType: string;
	bytes: number;
	/** Bytes the simulated file host served for this file. */
	servedBytes?: number;
	path: string;
}

export interface DemoTask {
	taskId: string;
	status: string;
	model?: string;
	statusReads: number;
	waitSeconds?: number;
	error?: string;
	files: DemoFile[];
	/** Reference images the service fetched for this task (image_urls). */
	references: DemoReference[];
}

export interface DemoReference {
	index: number;
	/** The service fetched it from this n8n (a signed link to binary data). */
	fromN8n: boolean;
	ok: boolean;
	bytes: number;
	sha256: string;
	/** The demo's output file of this run with the same bytes (the image generated before). */
	sameAs?: string;
}

export interface DemoRun {
	example: string;
	workflowName: string;
	status: string;
	durationMs: number;
	error?: string;
	tasks: DemoTask[];
}

export interface DemoReport {
	ok: boolean;
	outDir: string;
	/** The jobs run in a real n8n, when asked for. */
	jobs?: JobsReport;
	runs: DemoRun[];
	/** Requests to the file host that carried an Authorization header (must be 0). */
	keyLeaksToFileHost: number;
	fileRequests: number;
}

/** Examples the demo can run unattended: a Manual Trigger, and our node waiting for results. */
export function runnableExamples(dir = path.join(ROOT, 'examples')): string[] {
	if (!fs.existsSync(dir)) return [];
	return fs
		.readdirSync(dir)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((f) => path.join(dir, f))
		.filter((file) => {
			const wf = loadWorkflowFile(file);
			const media = wf.nodes.filter((n) => n.type === MEDIA_GENERATION_TYPE);
			// A Generate that does not wait is fine when a Task → Wait for Completion collects its
			// tasks (the crash-safe layout). Submit-only examples (callback pattern) need a
			// reachable n8n to call back.
			// Examples with n8n nodes the in-process engine lacks (files, Merge, the AI Agent) run
			// in a real n8n instead (demo-n8n.ts).
			return (
				wf.nodes.every((n) => knowsNodeType(n.type)) &&
				wf.nodes.some((n) => n.type === MANUAL_TRIGGER_TYPE) &&
				media.length > 0 &&
				(media.every((n) => n.parameters?.waitForCompletion !== false) ||
					media.some((n) => n.parameters?.operation === 'waitForCompletion'))
			);
		});
}

/** Model IDs the examples type in for models the spec names no identifier for. */
function typedModelIds(workflows: WorkflowJson[]): { image?: string; video?: string } {
	const ids: { image?: string; video?: string } = {};
	for (const node of workflows.flatMap((w) => w.nodes)) {
		if (node.type !== MEDIA_GENERATION_TYPE) continue;
		const modelId = node.parameters?.modelId;
		if (typeof modelId !== 'string' || !modelId || modelId.startsWith('=')) continue;
		if (node.parameters?.resource === 'image') ids.image ??= modelId;
		if (node.parameters?.resource === 'video') ids.video ??= modelId;
	}
	return ids;
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const kB = (n: number) =>
	n < 1024
		? `${n} B`
		: n < 1048576
			? `${(n / 1024).toFixed(1)} kB`
			: `${(n / 1048576).toFixed(1)} MB`;

function uniquePath(dir: string, fileName: string): string {
	const safe = fileName.replace(/[^A-Za-z0-9._-]+/g, '-') || 'file';
	let candidate = path.join(dir, safe);
	const ext = path.extname(safe);
	for (let i = 2; fs.existsSync(candidate); i++) {
		candidate = path.join(dir, `${path.basename(safe, ext)}-${i}${ext}`);
	}
	return candidate;
}

async function saveFiles(
	result: RunResult,
	item: INodeExecutionData,
	sim: Simulator,
	taskId: string,
	outDir: string,
): Promise<DemoFile[]> {
	const files: DemoFile[] = [];
	const simTask = sim.task(taskId);
	for (const [property, binary] of Object.entries(item.binary ?? {})) {
		const target = uniquePath(outDir, binary.fileName ?? `${taskId}-${property}`);
		const stored = result.binaryPath(item, property);
		if (stored) await fs.promises.copyFile(stored, target);
		else await fs.promises.writeFile(target, await result.readBinary(item, property));
		const bytes = (await fs.promises.stat(target)).size;
		// The item's file list ties each binary property to the URL it was downloaded from.
		const described = (
			item.json.files as Array<{ binary_property?: string; url?: string }> | undefined
		)?.find((f) => f.binary_property === property);
		const served = simTask?.files.find((f) => f.url === described?.url)?.size;
		files.push({
			fileName: binary.fileName ?? path.basename(target),
			mimeType: binary.mimeType,
			bytes,
			servedBytes: served,
			path: target,
		});
	}
	return files;
}

function describeNode(node: INode): string {
	const p = node.parameters ?? {};
	return `${p.resource ?? '?'} → ${p.operation ?? 'generate'}`;
}

export async function main(options: DemoOptions = {}): Promise<DemoReport> {
	const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
	const outDir = path.resolve(options.outDir ?? path.join(ROOT, 'demo-output'));
	setPackageSource(options.source ?? 'dist');
	const examples = options.examples ?? runnableExamples();
	if (examples.length === 0) throw new Error('No runnable example workflows found in examples/');
	const workflows = examples.map((file) => loadWorkflowFile(file));
	const ids = typedModelIds(workflows);

	const sim = await startSimulator({
		defaultDurationMs: options.durationMs ?? 3000,
		...(ids.image ? { imageModelId: ids.image } : {}),
		...(ids.video ? { videoModelId: ids.video } : {}),
	});
	// n8n's signed links to binary data (an example animates an image it generated): served as
	// n8n serves them, so that the simulated service fetches the file from "this n8n".
	const n8n = await startBinaryDataServer();
	fs.mkdirSync(outDir, { recursive: true });
	const runs: DemoRun[] = [];
	let jobs: JobsReport | undefined;
	log(
		`Media Generation demo: ${examples.length} example workflow(s) through n8n's execution engine`,
	);
	log(
		`  simulated service ${sim.baseUrl} (files on ${sim.fileBaseUrl}), each task takes ${((options.durationMs ?? 3000) / 1000).toFixed(1)} s`,
	);
	log(`  output folder ${path.relative(process.cwd(), outDir) || outDir}`);
	try {
		// All examples run at once, as separate executions; their reports follow in file order.
		const started = Date.now();
		const results = await Promise.all(
			workflows.map(
				async (workflow) =>
					await runWorkflow(workflow, {
						// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
						credentials: {
							mediaGenerationApi: {
								apiKey: sim.apiKey,
								baseUrl: sim.baseUrl,
								allowPrivateFileHosts: true,
							},
						},
						binaryMode: 'filesystem',
						baseUrl: n8n.baseUrl,
					}),
			),
		);
		log(`  all executions done after ${((Date.now() - started) / 1000).toFixed(1)} s`);
		for (const [index, file] of examples.entries()) {
			const workflow = workflows[index];
			const result = results[index];
			const example = path.relative(ROOT, file);
			log('');
			log(`▶ ${example}: "${workflow.name ?? ''}"`);
			for (const node of workflow.nodes.filter((n) => n.type === MEDIA_GENERATION_TYPE)) {
				log(`  node "${node.name}": ${describeNode(node)}`);
			}
			const run: DemoRun = {
				example,
				workflowName: workflow.name ?? '',
				status: result.status,
				durationMs: result.durationMs,
				tasks: [],
			};
			if (result.error) run.error = result.error.message;
			// The results: what each node that waits outputs (not a Generate that hands its tasks on).
			const waiting = workflow.nodes.filter(
				(n) => n.type === MEDIA_GENERATION_TYPE && n.parameters?.waitForCompletion !== false,
			);
			for (const node of waiting) {
				const items = [...result.outputOf(node.name, 0), ...result.outputOf(node.name, 1)];
				for (const item of items) {
					const json = item.json as Record<string, unknown>;
					const taskId = String(json.task_id ?? '');
					const task: DemoTask = {
						taskId,
						status: String(json.status ?? (json.error ? 'error' : 'unknown')),
						model: typeof json.model === 'string' ? json.model : undefined,
						statusReads: sim.requests.filter((r) => r.endpoint === 'status' && r.taskId === taskId)
							.length,
						waitSeconds: typeof json.wait_seconds === 'number' ? json.wait_seconds : undefined,
						error: typeof json.error === 'string' ? json.error : undefined,
						files: taskId ? await saveFiles(result, item, sim, taskId, outDir) : [],
						references: [],
					};
					run.tasks.push(task);
					const wait = task.waitSeconds !== undefined ? `, ready after ${task.waitSeconds} s` : '';
					// The model as the service received it: what the panel's choice (or Model ID) sends.
					const model = task.model ?? sim.task(taskId)?.model;
					log(
						`  task ${task.taskId || '(none)'}${model ? ` (model ${model})` : ''}: ${task.status}${wait} (${task.statusReads} status read${task.statusReads === 1 ? '' : 's'})`,
					);
					if (task.error) log(`    error: ${task.error}`);
					for (const f of task.files) {
						const check =
							f.servedBytes === undefined
								? ''
								: f.servedBytes === f.bytes
									? ', size as served'
									: `, SERVED ${f.servedBytes} B`;
						log(
							`    file ${f.fileName}  ${f.mimeType}  ${kB(f.bytes)}${check} → ${path.relative(process.cwd(), f.path)}`,
						);
					}
				}
			}
			// What the service fetched for image_urls: from this n8n, the same bytes as the file.
			const saved = run.tasks.flatMap((t) => t.files);
			const digests = new Map(saved.map((f) => [sha256Of(fs.readFileSync(f.path)), f.fileName]));
			for (const task of run.tasks) {
				const fetched = sim.fetches
					.filter((f) => f.taskId === task.taskId)
					.sort((a, b) => a.index - b.index);
				for (const f of fetched) {
					const reference: DemoReference = {
						index: f.index,
						fromN8n: f.url.startsWith(`${n8n.baseUrl}rest/binary-data/signed?`),
						ok: f.ok,
						bytes: f.bytes,
						sha256: f.sha256,
						sameAs: digests.get(f.sha256),
					};
					task.references.push(reference);
					const from = reference.fromN8n
						? 'from this n8n (a temporary link to binary data)'
						: 'from its URL';
					const same = reference.sameAs ? `, the same bytes as ${reference.sameAs}` : '';
					log(
						`  task ${task.taskId}: the service fetched image_urls[${f.index}] ${from}: ${kB(f.bytes)}, SHA-256 ${f.sha256.slice(0, 12)}…${same}${f.ok ? '' : ` (refused: ${f.reason ?? ''})`}`,
					);
				}
			}
			const failed =
				result.status !== 'success' ||
				run.tasks.length === 0 ||
				run.tasks.some(
					(t) =>
						t.status !== 'finished' ||
						t.files.length === 0 ||
						t.files.some((f) => f.servedBytes !== undefined && f.servedBytes !== f.bytes),
				);
			if (failed) run.status = result.status === 'success' ? 'incomplete' : result.status;
			log(
				`  ${failed ? '✗' : '✓'} ${run.status} in ${(result.durationMs / 1000).toFixed(1)} s${run.error ? `: ${run.error}` : ''}`,
			);
			runs.push(run);
		}
		if (options.withN8n) {
			log('');
			log(`In a real n8n: the three jobs of the guides (n8n's own file, Merge, Form and AI nodes)`);
			// The picture made above goes through the form, as a customer's photo would.
			const photo = runs
				.flatMap((r) => r.tasks.flatMap((t) => t.files))
				.find((f) => f.mimeType === 'image/png')?.path;
			jobs = await runJobsInN8n({ sim, outDir, log, photo });
		}
	} finally {
		await n8n.close();
		await sim.close();
	}

	const fileRequests = sim.requests.filter((r) => r.origin === 'files');
	const keyLeaksToFileHost = fileRequests.filter(
		(r) => r.headers.authorization !== undefined,
	).length;
	const ok =
		runs.every((r) => r.status === 'success') && keyLeaksToFileHost === 0 && (jobs?.ok ?? true);
	log('');
	log(`File host requests: ${fileRequests.length}, with the API key: ${keyLeaksToFileHost}`);
	log('Models used (as the service received them):');
	const byModel = new Map<string, number>();
	for (const t of sim.tasks()) byModel.set(t.model, (byModel.get(t.model) ?? 0) + 1);
	for (const [model, count] of [...byModel].sort())
		log(`  ${model}: ${count} task${count === 1 ? '' : 's'}`);
	if (jobs) {
		log(
			`  chat model: ${jobs.chatModel}, as examples/agent-media-generation.json names it, answered by a scripted ` +
				'stand-in (test/agent/fake-openai.ts): no OpenAI account or network was used',
		);
	}
	const rel = (p: string) => path.relative(process.cwd(), p) || p;
	log('Where to look:');
	log(
		`  ${rel(outDir)}/: the picture, video and melody of the one-item examples (open them in any viewer or player)`,
	);
	if (jobs) {
		log(
			`  ${rel(path.join(outDir, 'table'))}/: products.csv, the Data Table's rows with each row's status, video_file and task_id, and each row's video`,
		);
		log(
			`  ${rel(path.join(outDir, 'form'))}/: the video the form page gave back for the uploaded photo`,
		);
		log(
			`  ${rel(path.join(outDir, 'agent'))}/: the video the callback workflow saved while the agent chatted`,
		);
	} else {
		log('  (the table, form and AI Agent jobs were skipped: run without --no-n8n to see them)');
	}
	log(
		'  examples/: the workflows to import into your n8n; the guides: docs/spreadsheet-to-videos.md, ' +
			'docs/form-photos-to-videos.md, docs/agent-videos.md',
	);
	const what = `${runs.length} in-process example(s)${jobs ? ', the table, form and AI Agent jobs' : ''}`;
	log(ok ? `Demo passed: ${what}, files in ${rel(outDir)}` : 'Demo FAILED');
	return {
		ok,
		outDir,
		runs,
		keyLeaksToFileHost,
		fileRequests: fileRequests.length,
		...(jobs ? { jobs } : {}),
	};
}

if (require.main === module) {
	const source = process.argv.includes('--src') ? 'src' : 'dist';
	main({ source, withN8n: !process.argv.includes('--no-n8n') })
		.then((report) => process.exit(report.ok ? 0 : 1))
		.catch((error: Error) => {
			process.stderr.write(`demo failed: ${error.stack ?? error.message}\n`);
			process.exit(1);
		});
}
