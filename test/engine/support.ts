// Shared set-up of the engine tests: one simulator per test file, workflows of Manual Trigger →
// Media Generation built through the harness, and the checks every test repeats.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as path from 'node:path';

import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

import {
	MANUAL_TRIGGER_TYPE,
	MEDIA_GENERATION_TYPE,
	chain,
	connect,
	mediaCredentials,
	runWorkflow,
	startWorkflow,
	type NodeSpec,
	type RunOptions,
	type RunResult,
	type WorkflowJson,
} from '../harness';
import { POLL_PACES } from '../../nodes/MediaGeneration/polling/schedule';
import { downloadTaskFiles } from '../../nodes/shared/transport/downloads';
import { TransportError } from '../../nodes/shared/transport/faults';
import { mediaBuffer, startSimulator, type SimTask, type Simulator } from '../simulator';

/** The logger n8n-core gives nodes (ctx.logger): its own copies of @n8n/di and backend-common. */
export async function nodeLogger(): Promise<
	Record<'debug' | 'info' | 'warn' | 'error', (message: string, meta?: object) => void>
> {
	const from = { paths: [path.dirname(require.resolve('n8n-core'))] };
	const { Container } = (await import(
		require.resolve('@n8n/di', from)
	)) as typeof import('@n8n/di');
	const { Logger } = (await import(
		require.resolve('@n8n/backend-common', from)
	)) as typeof import('@n8n/backend-common');
	return Container.get(Logger) as never;
}

export const TRIGGER = 'Start';
export const NODE = 'Media Generation';

/** Starts a simulator for the file; resets its log, tasks and faults after each test. */
export function useSimulator(options: Parameters<typeof startSimulator>[0] = {}): () => Simulator {
	let sim: Simulator | undefined;
	beforeAll(async () => {
		sim = await startSimulator(options);
	});
	afterEach(() => sim?.reset());
	afterAll(async () => {
		await sim?.close();
	});
	return () => {
		if (!sim) throw new Error('simulator not started');
		return sim;
	};
}

export function credentialsFor(sim: Simulator, apiKey = sim.apiKey): RunOptions['credentials'] {
	// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
	return { mediaGenerationApi: { apiKey, baseUrl: sim.baseUrl, allowPrivateFileHosts: true } };
}

export type NodeSettings = NonNullable<NodeSpec['settings']>;

/**
 * The test pace: Sooner with its first reads and closest steps cut to the simulator's tasks of
 * 300 ms, so that a test that only waits for a task pays about 0.4 s for it, not Sooner's 2.5 s
 * (Balanced: 5.5 s). Every engine test file that imports this module gets it in place of Sooner
 * (jest gives each file its own copy of the node's modules); the node's own paces, bound in the
 * docs, stay as they are, and a file that measures Sooner itself calls realSoonerPace().
 */
const SOONER = POLL_PACES.sooner;
POLL_PACES.sooner = {
	...SOONER,
	firstDelayMs: 400,
	coldFirstDelayMs: 400,
	coldMinDelayMs: 500,
	scoutMinDelayMs: 500,
};

/** For a file that measures the Sooner pace itself: the node's real Sooner, not the test pace. */
export function realSoonerPace(): void {
	POLL_PACES.sooner = SOONER;
}

/**
 * Where a test waits for a task without being about how often the node reads its status, it
 * reads at the test pace (Sooner, quickened above) rather than the default's 5.5 s (issue 37),
 * which would add seconds to each such test. Tests of polling set Check for Results.
 */
function atTestPace(parameters: IDataObject): IDataObject {
	const waits =
		parameters.operation === 'generate'
			? parameters.waitForCompletion !== false
			: parameters.operation === 'waitForCompletion';
	const options = (parameters.options ?? {}) as IDataObject;
	if (!waits || options.checkForResults !== undefined) return parameters;
	return { ...parameters, options: { ...options, checkForResults: 'sooner' } };
}

/** A Media Generation node with the package's credential. */
export function mediaNode(
	parameters: IDataObject,
	settings: NodeSettings = {},
	name = NODE,
): NodeSpec {
	return {
		name,
		type: MEDIA_GENERATION_TYPE,
		parameters: atTestPace(parameters) as INode['parameters'],
		credentials: mediaCredentials(),
		settings,
	};
}

/** Image → Generate with the simulator's image model, one square image. */
export function imageGenerateParams(
	sim: Simulator,
	prompt: string,
	options: IDataObject = {},
	extra: IDataObject = {},
): IDataObject {
	return {
		resource: 'image',
		operation: 'generate',
		model: 'image-by-id',
		modelId: sim.imageModelId,
		prompt,
		imageByIdOptions: { size: '1:1', n: 1 },
		...extra,
		options,
	};
}

/** A video Generate with reference images and the pre-check on (returns the task_id at once). */
export function videoWithReferenceImages(urls: string[]): IDataObject {
	return {
		resource: 'video',
		operation: 'generate',
		model: 'vidmodel-1.5-pro',
		prompt: 'animate it',
		aspectRatio: '1:1',
		duration: 4,
		waitForCompletion: false,
		vidmodel15ProOptions: { imageUrls: urls },
		options: { checkReferenceImages: true },
	};
}

/** Manual Trigger → Media Generation. */
export function mediaWorkflow(parameters: IDataObject, settings: NodeSettings = {}): WorkflowJson {
	return chain({ name: TRIGGER, type: MANUAL_TRIGGER_TYPE }, mediaNode(parameters, settings));
}

/**
 * Manual Trigger → Media Generation (On Error: continue using error output) with a No
 * Operation node on each output, as a user wires it.
 */
export function errorOutputWorkflow(parameters: IDataObject): WorkflowJson {
	const wf = chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		mediaNode(parameters, { onError: 'continueErrorOutput' }),
		{ name: 'Succeeded', type: 'n8n-nodes-base.noOp' },
	);
	wf.nodes.push({
		id: 'failed-noop',
		name: 'Failed',
		type: 'n8n-nodes-base.noOp',
		typeVersion: 1,
		position: [440, 200],
		parameters: {},
	});
	connect(wf.connections, NODE, 'Failed', 1);
	return wf;
}

export async function run(
	sim: Simulator,
	workflow: WorkflowJson,
	options: RunOptions = {},
): Promise<RunResult> {
	return await runWorkflow(workflow, { credentials: credentialsFor(sim), ...options });
}

export function start(sim: Simulator, workflow: WorkflowJson, options: RunOptions = {}) {
	return startWorkflow(workflow, { credentials: credentialsFor(sim), ...options });
}

/** The bytes the simulator serves for a task's file. */
export function servedBytes(task: SimTask, index = 0): Buffer {
	const file = task.files[index];
	return mediaBuffer(file.kind, file.size);
}

/** What the checks below read from a simulator: the live one or a snapshot of it. */
export type SimView = Pick<Simulator, 'apiKey' | 'requests' | 'task' | 'fetches'>;

/** A copy of the simulator's log and tasks, which outlives its reset after each test. */
export function snapshot(sim: Simulator): SimView {
	const tasks = new Map(sim.tasks().map((t) => [t.id, { ...t, files: [...t.files] }]));
	return {
		apiKey: sim.apiKey,
		requests: [...sim.requests],
		fetches: [...sim.fetches],
		task: (id) => tasks.get(id),
	};
}

/** The simulator's task whose id an output item carries. */
export function simTaskOf(sim: SimView, item: INodeExecutionData): SimTask {
	const id = String(item.json.task_id ?? '');
	const task = sim.task(id);
	if (!task) throw new Error(`no simulator task "${id}" for item ${JSON.stringify(item.json)}`);
	return task;
}

/**
 * The API key is never sent to the file host and never appears in anything the execution
 * produced (items, errors, UI messages).
 */
export function expectKeyNowhere(sim: SimView, result: RunResult, apiKey = sim.apiKey): void {
	const fileRequests = sim.requests.filter((r) => r.origin === 'files');
	for (const request of fileRequests) {
		expect(request.headers.authorization).toBeUndefined();
		expect(JSON.stringify(request.headers)).not.toContain(apiKey);
	}
	expect(result.dump()).not.toContain(apiKey);
}

/** Items of the node's error output (index 1) or, with continueOnFail, items carrying `error`. */
export function errorText(item: INodeExecutionData): string {
	const error = item.json.error;
	if (typeof error === 'string') return error;
	return JSON.stringify(error ?? item.json);
}

/** Start times of a task's submit and end: from the simulator's own log and task records. */
export function taskWindow(sim: Simulator, task: SimTask): { start: number; end: number } {
	const submit = sim.requests.find((r) => r.endpoint === 'submit' && r.taskId === task.id);
	return {
		start: submit?.at ?? task.createdAt,
		end: task.endedAt ?? task.createdAt + task.durationMs,
	};
}

/**
 * What the download probes of the file-host tests output: the task's files as an item, or the
 * refusal's message and fault kind (so a test reads what a user would see in the item).
 */
export async function downloadAsItem(
	ctx: Parameters<typeof downloadTaskFiles>[0],
	taskId: string,
	urls: string[],
	options: Parameters<typeof downloadTaskFiles>[2],
): Promise<INodeExecutionData> {
	try {
		const { binary, files } = await downloadTaskFiles(
			ctx,
			{ task_id: taskId, status: 'finished', files: urls.map((file_url) => ({ file_url })) },
			options,
		);
		return { json: { files }, binary, pairedItem: { item: 0 } };
	} catch (error) {
		const fault = error instanceof TransportError ? error.fault : undefined;
		return {
			json: { error: (error as Error).message, kind: fault?.kind ?? 'other' },
			pairedItem: { item: 0 },
		};
	}
}
