/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @typescript-eslint/no-require-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply; require() loads the files package.json lists, by path, and n8n-core's own copy of @n8n/di */
// Test-only. Runs real n8n workflows in-process through n8n-core's WorkflowExecute (the engine
// n8n itself runs), with this package's real node and credential classes, a credentials helper
// that applies the credential type's `authenticate` the way n8n's CLI does, and n8n's binary
// data service (filesystem mode in a temporary folder, so streamed downloads really go to
// disk; `default` mode keeps them in memory). What is not n8n here: no database, no UI, no
// HTTP server; the few built-in nodes our workflows use are stand-ins (./nodes.ts).
// First: sets n8n's environment (user folder, binary data) before n8n-core is loaded.
import { BINARY_DATA_PATH, HARNESS_ROOT } from './env';

import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';

import type { Container as ContainerType } from '@n8n/di';
import {
	BinaryDataConfig,
	BinaryDataService,
	ExecutionLifecycleHooks,
	ExternalSecretsProxy,
	WorkflowExecute,
} from 'n8n-core';
import type {
	ExecutionBaseError,
	ExecutionStatus,
	IBinaryData,
	ICredentialType,
	IConnections,
	IDataObject,
	INode,
	INodeExecutionData,
	INodeType,
	INodeTypes,
	IPinData,
	IRun,
	IRunData,
	ITaskData,
	IVersionedNodeType,
	IWorkflowExecuteAdditionalData,
	IWorkflowSettings,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { NodeHelpers, Workflow, createRunExecutionData } from 'n8n-workflow';

import { HarnessCredentialsHelper, type CredentialValues } from './credentials';
import { ensureDeduplication } from './deduplication';
import { HARNESS_NODE_TYPES } from './nodes';

export { HARNESS_ROOT, BINARY_DATA_PATH };

// n8n-core's services live in the DI container of n8n-core's own copy of @n8n/di (the
// top-level copy is another version, with another container).
const Container = (
	require(require.resolve('@n8n/di', { paths: [path.dirname(require.resolve('n8n-core'))] })) as {
		Container: typeof ContainerType;
	}
).Container;
export type { CredentialValues };

const PACKAGE_ROOT = path.resolve(__dirname, '..', '..');
const PACKAGE_JSON = JSON.parse(
	fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'),
) as {
	name: string;
	n8n: { nodes: string[]; credentials: string[] };
};
/** Prefix of this package's node types as n8n names them once installed from npm. */
export const PACKAGE_NAME = PACKAGE_JSON.name;
export const MEDIA_GENERATION_TYPE = `${PACKAGE_NAME}.mediaGeneration`;
export const MEDIA_GENERATION_TRIGGER_TYPE = `${PACKAGE_NAME}.mediaGenerationTrigger`;
export const MANUAL_TRIGGER_TYPE = 'n8n-nodes-base.manualTrigger';
export const NOOP_TYPE = 'n8n-nodes-base.noOp';
/** Name of the credential the examples reference; any name works in the harness. */
export const CREDENTIAL_NAME = 'Media Generation API';

// ---------------------------------------------------------------------------------------------
// Node and credential types

/**
 * Where the package's classes come from: `src` (TypeScript sources under nodes/ and
 * credentials/, compiled by ts-jest or tsx: the default) or `dist` (the build, as n8n loads it).
 */
export type PackageSource = 'src' | 'dist';
let packageSource: PackageSource = process.env.MGEN_HARNESS_SOURCE === 'dist' ? 'dist' : 'src';
let packageLoaded = false;
const packageLoadErrors: string[] = [];
const credentialTypes = new Map<string, ICredentialType>();

export function setPackageSource(source: PackageSource): void {
	if (packageLoaded && source !== packageSource) {
		throw new Error(`Harness: package already loaded from ${packageSource}`);
	}
	packageSource = source;
}

function modulePath(distFile: string): string {
	if (packageSource === 'dist') return path.join(PACKAGE_ROOT, distFile);
	return path.join(PACKAGE_ROOT, distFile.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
}

/** Instances of every class a module exports (node and credential files export one each). */
function instancesOf(file: string): unknown[] {
	const mod = require(file) as Record<string, unknown>;
	return Object.values(mod)
		.filter((value): value is new () => unknown => typeof value === 'function')
		.map((Cls) => {
			try {
				return new Cls();
			} catch {
				return undefined;
			}
		})
		.filter(Boolean);
}

/**
 * Loads the package's nodes and credentials listed in package.json, once, on first need. A
 * file that does not exist or does not compile yet is recorded, not fatal, so that workflows
 * made of harness nodes keep running while the product nodes are written.
 */
function loadPackage(): void {
	if (packageLoaded) return;
	packageLoaded = true;
	for (const file of PACKAGE_JSON.n8n.credentials) {
		try {
			for (const instance of instancesOf(modulePath(file))) {
				const type = instance as ICredentialType;
				if (typeof type.name === 'string' && Array.isArray(type.properties)) {
					credentialTypes.set(type.name, type);
				}
			}
		} catch (error) {
			packageLoadErrors.push(`${modulePath(file)}: ${(error as Error).message}`);
		}
	}
	for (const file of PACKAGE_JSON.n8n.nodes) {
		try {
			for (const instance of instancesOf(modulePath(file))) {
				const type = instance as INodeType | IVersionedNodeType;
				if (!type.description?.name) continue;
				// n8n names a community package's node types `<package>.<name>` when it loads them.
				const fullName = `${PACKAGE_NAME}.${type.description.name}`;
				type.description.name = fullName;
				if ('nodeVersions' in type) {
					for (const version of Object.values(type.nodeVersions)) {
						version.description.name = fullName;
					}
				}
				nodeTypeMap.set(fullName, type);
			}
		} catch (error) {
			packageLoadErrors.push(`${modulePath(file)}: ${(error as Error).message}`);
		}
	}
}

const nodeTypeMap = new Map<string, INodeType | IVersionedNodeType>();
for (const type of HARNESS_NODE_TYPES) nodeTypeMap.set(type.description.name, type);

/** Adds a node type to the registry (e.g. a test's own node). */
export function registerNodeType(type: INodeType | IVersionedNodeType, name?: string): void {
	nodeTypeMap.set(name ?? type.description.name, type);
}

function lookupNodeType(name: string): INodeType | IVersionedNodeType | undefined {
	// Workflows exported from an n8n that loaded the package as a custom extension say
	// `CUSTOM.<name>`; they are the same nodes.
	const normalized = name.startsWith('CUSTOM.') ? `${PACKAGE_NAME}.${name.slice(7)}` : name;
	if (!nodeTypeMap.has(normalized) && normalized.startsWith(`${PACKAGE_NAME}.`)) loadPackage();
	return nodeTypeMap.get(normalized);
}

/** Whether the harness can run a node of this type (n8n's own nodes: only its few stand-ins). */
export function knowsNodeType(name: string): boolean {
	return lookupNodeType(name) !== undefined;
}

function unknownTypeMessage(name: string): string {
	const known = [...nodeTypeMap.keys()].sort().join(', ');
	const errors = packageLoadErrors.length
		? `; package load errors: ${packageLoadErrors.join(' | ')}`
		: '';
	return `Harness: unknown node type "${name}" (known: ${known})${errors}`;
}

/** The node type registry handed to n8n's Workflow. */
export const nodeTypes: INodeTypes = {
	getByName(name) {
		const type = lookupNodeType(name);
		if (!type) throw new Error(unknownTypeMessage(name));
		return type;
	},
	getByNameAndVersion(name, version) {
		const type = lookupNodeType(name);
		if (!type) throw new Error(unknownTypeMessage(name));
		return NodeHelpers.getVersionedNodeType(type, version);
	},
	getKnownTypes() {
		return {};
	},
};

export function getCredentialTypes(): Map<string, ICredentialType> {
	loadPackage();
	return credentialTypes;
}

// ---------------------------------------------------------------------------------------------
// Binary data

export type BinaryMode = 'filesystem' | 'default';
let binaryReady: Promise<void> | undefined;
let binaryMode: BinaryMode | undefined;

/**
 * Switches n8n's binary data service between `filesystem` (files under BINARY_DATA_PATH,
 * streamed) and `default` (in memory, base64 in the item). Process-wide, as in n8n: do not
 * switch while a run is in progress.
 */
export async function setBinaryMode(mode: BinaryMode): Promise<void> {
	if (binaryMode === mode && binaryReady) return await binaryReady;
	binaryMode = mode;
	Container.get(BinaryDataConfig).mode = mode;
	binaryReady = Container.get(BinaryDataService).init();
	await binaryReady;
}

async function ensureBinary(mode?: BinaryMode): Promise<void> {
	// A run that names no mode gets the process default, not whatever the previous run chose.
	const wanted = mode ?? (process.env.N8N_DEFAULT_BINARY_DATA_MODE as BinaryMode);
	await setBinaryMode(wanted === 'default' ? 'default' : 'filesystem');
}

/** The bytes of a binary property, wherever n8n stored them. */
export async function readBinary(item: INodeExecutionData, property = 'data'): Promise<Buffer> {
	const binary = binaryOf(item, property);
	return await Container.get(BinaryDataService).getAsBuffer(binary);
}

/** The file on disk holding a binary property (filesystem mode), else undefined. */
export function binaryPath(item: INodeExecutionData, property = 'data'): string | undefined {
	const binary = binaryOf(item, property);
	if (!binary.id) return undefined;
	return Container.get(BinaryDataService).getPath(binary.id);
}

function binaryOf(item: INodeExecutionData, property: string): IBinaryData {
	const binary = item.binary?.[property];
	if (!binary) {
		const has = Object.keys(item.binary ?? {}).join(', ') || 'none';
		throw new Error(`Harness: item has no binary property "${property}" (has: ${has})`);
	}
	return binary;
}

// ---------------------------------------------------------------------------------------------
// Workflows

/** Lifecycle hooks of one execution, carrying the workflow's data as n8n's own runners do. */
export function createHooks(
	mode: WorkflowExecuteMode,
	executionId: string,
	workflow: Workflow,
	json: WorkflowJson,
): ExecutionLifecycleHooks {
	return new ExecutionLifecycleHooks(mode, executionId, {
		id: workflow.id,
		name: workflow.name ?? '',
		active: workflow.active,
		isArchived: false,
		nodes: json.nodes,
		connections: json.connections,
		settings: workflow.settings,
		createdAt: new Date(),
		updatedAt: new Date(),
	} as never);
}

export interface WorkflowJson {
	id?: string;
	name?: string;
	nodes: INode[];
	connections: IConnections;
	settings?: IWorkflowSettings;
	pinData?: IPinData;
	/** The workflow's static data as n8n saved it after an earlier production run. */
	staticData?: IDataObject;
}

/** Reads a workflow JSON exported from n8n (or one of the repository's examples). */
export function loadWorkflowFile(file: string): WorkflowJson {
	const json = JSON.parse(
		fs.readFileSync(path.resolve(PACKAGE_ROOT, file), 'utf8'),
	) as WorkflowJson;
	if (!Array.isArray(json.nodes) || typeof json.connections !== 'object') {
		throw new Error(`Harness: ${file} is not an n8n workflow (nodes and connections expected)`);
	}
	return json;
}

export interface NodeSpec {
	name: string;
	type: string;
	parameters?: INode['parameters'];
	typeVersion?: number;
	credentials?: INode['credentials'];
	/** n8n node settings: continueOnFail, onError ('continueRegularOutput' | 'continueErrorOutput' | 'stopWorkflow'), retryOnFail... */
	settings?: Partial<
		Pick<
			INode,
			| 'continueOnFail'
			| 'onError'
			| 'retryOnFail'
			| 'maxTries'
			| 'waitBetweenTries'
			| 'alwaysOutputData'
			| 'executeOnce'
			| 'disabled'
		>
	>;
}

/**
 * Builds a workflow whose nodes are connected in a line, first to last (main output 0 to
 * input 0). Use `connect` for other shapes (e.g. an error output).
 */
export function chain(...specs: NodeSpec[]): WorkflowJson {
	const nodes: INode[] = specs.map((spec, i) => ({
		id: randomUUID(),
		name: spec.name,
		type: spec.type,
		typeVersion: spec.typeVersion ?? 1,
		position: [i * 220, 0],
		parameters: spec.parameters ?? {},
		...(spec.credentials ? { credentials: spec.credentials } : {}),
		...(spec.settings ?? {}),
	}));
	const connections: IConnections = {};
	for (let i = 0; i + 1 < nodes.length; i++) {
		connect(connections, nodes[i].name, nodes[i + 1].name);
	}
	return { name: 'harness workflow', nodes, connections };
}

/** Adds a main connection from `from`'s output `outputIndex` to `to`'s input 0. */
export function connect(
	connections: IConnections,
	from: string,
	to: string,
	outputIndex = 0,
): IConnections {
	const main = ((connections[from] ??= {}).main ??= []);
	while (main.length <= outputIndex) main.push([]);
	(main[outputIndex] ??= []).push({ node: to, type: 'main', index: 0 });
	return connections;
}

/**
 * The workflow of most Trigger tests: the Media Generation Trigger (its parameters, the harness
 * credential) → a No Operation node named Downstream, whose input is what the Trigger emitted.
 */
export function triggerWorkflow(
	parameters: INode['parameters'] = {},
	typeVersion = 1,
): WorkflowJson {
	return chain(
		{
			name: 'Media Generation Trigger',
			type: MEDIA_GENERATION_TRIGGER_TYPE,
			typeVersion,
			parameters,
			credentials: mediaCredentials(),
		},
		{ name: 'Downstream', type: NOOP_TYPE },
	);
}

/** The credentials block of a node using the package's credential. */
export function mediaCredentials(): INode['credentials'] {
	return { mediaGenerationApi: { id: 'harness-credential', name: CREDENTIAL_NAME } };
}

export interface RunOptions {
	/** Plain credential values by credential type, e.g. { mediaGenerationApi: { apiKey, baseUrl } }. */
	credentials?: CredentialValues;
	/** Items pinned on the start node (as a user pins data on a trigger). Plain objects become `{ json }`. */
	items?: Array<IDataObject | INodeExecutionData>;
	/** Start node name; default: the Manual Trigger or the first node without inputs. */
	startNode?: string;
	/** Aborting it cancels the execution, as the Stop button does. */
	signal?: AbortSignal;
	binaryMode?: BinaryMode;
	/** The n8n instance's public URL (ends with '/'); used for $execution.resumeUrl etc. */
	baseUrl?: string;
	executionId?: string;
	/**
	 * n8n's resume token of the execution (the `signature` of $execution.resumeUrl): one per
	 * execution, kept by every later wait of it. Give the same one to a later run with the same
	 * executionId to play a later round of one execution (a loop that parks again).
	 */
	resumeToken?: string;
	/** Plays an n8n whose resume URLs carry no token (before n8n signed them). */
	withoutResumeToken?: boolean;
	workflowId?: string;
	mode?: WorkflowExecuteMode;
	/** n8n's execution timeout: absolute deadline = now + timeoutMs. */
	timeoutMs?: number;
	/**
	 * Plays a Retry from the Executions list of this failed run, as n8n's ExecutionService.retry
	 * does: a new execution in mode 'retry' from the failed execution's stored data (a JSON round
	 * trip, as the database), its error and the failed node's last run removed.
	 */
	retryOf?: IRun;
	/**
	 * Plays the workflow setting "Save execution progress": after each node, `events` keeps the
	 * execution data n8n would have stored (what a Retry starts from if the process dies next).
	 */
	saveProgress?: boolean;
}

export interface HarnessEvent {
	at: number;
	kind: 'nodeExecuteBefore' | 'nodeExecuteAfter' | 'sendDataToUI';
	node?: string;
	data?: unknown;
	/** With `saveProgress`: the execution data n8n saves after the node (nodeExecuteAfter). */
	saved?: IRun['data'];
}

export interface RunResult {
	executionId: string;
	workflow: Workflow;
	/** As n8n records it: 'success' | 'error' | 'canceled' | 'waiting'. */
	status: ExecutionStatus;
	run: IRun;
	runData: IRunData;
	/** The execution's error (a node failed without continueOnFail / error output). */
	error?: ExecutionBaseError;
	/** Set when a node put the execution to wait (status 'waiting'). */
	waitTill?: Date;
	/** Hook events in order, with Date.now() timestamps; `sendDataToUI` carries UI messages. */
	events: HarnessEvent[];
	durationMs: number;
	/** Items a node emitted on one output (default: output 0 of its first run). [] if none. */
	outputOf(nodeName: string, outputIndex?: number, runIndex?: number): INodeExecutionData[];
	/** The task data of a node's run (error, executionTime, ...). */
	taskOf(nodeName: string, runIndex?: number): ITaskData | undefined;
	readBinary(item: INodeExecutionData, property?: string): Promise<Buffer>;
	binaryPath(item: INodeExecutionData, property?: string): string | undefined;
	/**
	 * Everything the execution produced, as text: items, errors (message, description, stack,
	 * cause, context) and UI messages. For asserting what must never appear (the API key).
	 */
	dump(): string;
}

export interface RunningExecution {
	executionId: string;
	/** Settles when the engine has really finished (after a cancel: when the node stopped). */
	done: Promise<RunResult>;
	/** Cancels like n8n's Stop button (aborts the execution's cancel signal); resolves with done. */
	cancel(): Promise<RunResult>;
	/** The hook events so far (the same array as the result's `events`). */
	events: HarnessEvent[];
}

function defaultStartNode(workflow: WorkflowJson): string {
	const manual = workflow.nodes.find((n) => n.type === MANUAL_TRIGGER_TYPE && !n.disabled);
	if (manual) return manual.name;
	const targets = new Set(
		Object.values(workflow.connections).flatMap((c) =>
			(c.main ?? []).flatMap((out) => (out ?? []).map((conn) => conn.node)),
		),
	);
	const first = workflow.nodes.find(
		(n) => !targets.has(n.name) && !n.disabled && n.type !== 'n8n-nodes-base.stickyNote',
	);
	if (!first) throw new Error('Harness: no start node found');
	return first.name;
}

function errorToPlain(value: unknown, seen = new Set<unknown>()): unknown {
	if (!(value instanceof Error)) return value;
	if (seen.has(value)) return '[circular error]';
	seen.add(value);
	const plain: Record<string, unknown> = {};
	for (const key of Object.getOwnPropertyNames(value)) {
		plain[key] = (value as unknown as Record<string, unknown>)[key];
	}
	for (const [key, v] of Object.entries(value)) plain[key] = v;
	plain.name = value.name;
	if (value.cause !== undefined) plain.cause = errorToPlain(value.cause, seen);
	return plain;
}

function safeStringify(value: unknown): string {
	const seen = new WeakSet<object>();
	return JSON.stringify(value, (_key, v: unknown) => {
		const plain = errorToPlain(v);
		if (plain && typeof plain === 'object') {
			if (seen.has(plain)) return '[circular]';
			seen.add(plain);
		}
		if (typeof plain === 'bigint') return plain.toString();
		return plain;
	});
}

/** The data a Retry starts from (n8n's ExecutionService.retry, 2.41.1). */
function retryData(failed: IRun): IRun['data'] {
	const data = JSON.parse(JSON.stringify(failed.data)) as IRun['data'];
	const { lastNodeExecuted } = data.resultData;
	if (lastNodeExecuted) {
		delete data.resultData.error;
		const runs = data.resultData.runData[lastNodeExecuted] ?? [];
		if (runs.length > 0 && runs[runs.length - 1].error !== undefined) runs.pop();
	}
	return data;
}

/** Starts a workflow; returns at once with handles to await or cancel it. */
export function startWorkflow(
	workflowJson: WorkflowJson,
	options: RunOptions = {},
): RunningExecution {
	const executionId = options.executionId ?? `harness-${randomUUID()}`;
	const workflowId = options.workflowId ?? workflowJson.id ?? 'harness-workflow';
	const baseUrl = options.baseUrl ?? 'http://127.0.0.1:5678/';
	const events: HarnessEvent[] = [];
	let cancelled = false;
	let cancelRun: (() => void) | undefined;

	const done = (async (): Promise<RunResult> => {
		await ensureBinary(options.binaryMode);
		await ensureDeduplication();
		// Deep copy: n8n writes default parameters into the nodes it is given.
		const json = JSON.parse(JSON.stringify(workflowJson)) as WorkflowJson;
		for (const node of json.nodes) {
			if (!lookupNodeType(node.type)) throw new Error(unknownTypeMessage(node.type));
		}
		const workflow = new Workflow({
			id: workflowId,
			name: json.name ?? 'harness workflow',
			nodes: json.nodes,
			connections: json.connections,
			active: false,
			nodeTypes,
			settings: { executionOrder: 'v1', ...(json.settings ?? {}) },
			pinData: json.pinData,
			staticData: json.staticData,
		});

		const mode = options.mode ?? (options.retryOf ? 'retry' : 'manual');
		const hooks = createHooks(mode, executionId, workflow, json);
		if (options.withoutResumeToken) {
			hooks.addHandler('workflowExecuteBefore', (_workflow, data) => {
				if (data) delete data.resumeToken;
			});
		}
		hooks.addHandler('nodeExecuteBefore', (node) => {
			events.push({ at: Date.now(), kind: 'nodeExecuteBefore', node });
		});
		hooks.addHandler('nodeExecuteAfter', (node, data, executionData) => {
			const event: HarnessEvent = {
				at: Date.now(),
				kind: 'nodeExecuteAfter',
				node,
				data: data.executionStatus,
			};
			if (options.saveProgress) {
				// What n8n's saveExecutionProgress stores (a JSON round trip, as the database).
				event.saved = JSON.parse(JSON.stringify(executionData)) as IRun['data'];
				event.saved.resultData.lastNodeExecuted = node;
			}
			events.push(event);
		});

		const additionalData = createAdditionalData({
			executionId,
			workflowId,
			baseUrl,
			credentials: options.credentials ?? {},
			hooks,
			events,
			timeoutMs: options.timeoutMs,
		});

		const startName = options.startNode ?? defaultStartNode(json);
		const startNode = workflow.getNode(startName);
		if (!startNode) throw new Error(`Harness: start node "${startName}" not found`);
		const pinData: IPinData = { ...(json.pinData ?? {}) };
		if (options.items) {
			pinData[startName] = options.items.map((item, i) =>
				'json' in item && typeof item.json === 'object'
					? (item as INodeExecutionData)
					: { json: item as IDataObject, pairedItem: { item: i } },
			);
		}

		const started = Date.now();
		const execution = new WorkflowExecute(
			additionalData,
			options.mode ?? 'manual',
			options.resumeToken
				? createRunExecutionData({ resumeToken: options.resumeToken })
				: undefined,
		);
		const promise = options.retryOf
			? new WorkflowExecute(
					additionalData,
					mode,
					retryData(options.retryOf),
				).processRunExecutionData(workflow)
			: execution.run({
					workflow,
					startNode,
					pinData: Object.keys(pinData).length ? pinData : undefined,
				});
		cancelRun = () => promise.cancel();
		if (cancelled) promise.cancel();
		const run = await promise;
		// n8n records a stopped execution as canceled whatever error the interrupted node threw
		// (ActiveExecutions.stopExecution); the engine's own verdict stays in run.status.
		const status = cancelled ? 'canceled' : run.status;
		return makeResult(executionId, workflow, run, status, events, Date.now() - started);
	})();

	const cancel = async (): Promise<RunResult> => {
		cancelled = true;
		cancelRun?.();
		return await done;
	};
	options.signal?.addEventListener('abort', () => void cancel().catch(() => undefined));
	if (options.signal?.aborted) void cancel().catch(() => undefined);

	return { executionId, done, cancel, events };
}

/** Runs a workflow to its end (success, error or waiting) and returns what it produced. */
export async function runWorkflow(
	workflowJson: WorkflowJson,
	options: RunOptions = {},
): Promise<RunResult> {
	return await startWorkflow(workflowJson, options).done;
}

function makeResult(
	executionId: string,
	workflow: Workflow,
	run: IRun,
	status: ExecutionStatus,
	events: HarnessEvent[],
	durationMs: number,
): RunResult {
	const runData = run.data.resultData.runData;
	return {
		executionId,
		workflow,
		status,
		run,
		runData,
		error: run.data.resultData.error,
		waitTill: run.waitTill ?? run.data.waitTill,
		events,
		durationMs,
		outputOf(nodeName, outputIndex = 0, runIndex = 0) {
			return runData[nodeName]?.[runIndex]?.data?.main?.[outputIndex] ?? [];
		},
		taskOf(nodeName, runIndex = 0) {
			return runData[nodeName]?.[runIndex];
		},
		readBinary,
		binaryPath,
		dump() {
			return safeStringify({ resultData: run.data.resultData, events });
		},
	};
}

interface AdditionalDataOptions {
	executionId: string;
	workflowId: string;
	baseUrl: string;
	credentials: CredentialValues;
	hooks?: ExecutionLifecycleHooks;
	events?: HarnessEvent[];
	timeoutMs?: number;
}

/**
 * The per-execution context n8n's CLI builds (WorkflowExecuteAdditionalData.getBase), with
 * real URLs derived from `baseUrl` the way n8n derives them from WEBHOOK_URL.
 */
export function createAdditionalData(
	options: AdditionalDataOptions,
): IWorkflowExecuteAdditionalData {
	const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
	const notAvailable = (what: string) => async () => {
		throw new Error(`Harness: ${what} is not available in the in-process harness`);
	};
	return {
		credentialsHelper: new HarnessCredentialsHelper(getCredentialTypes(), options.credentials),
		executeWorkflow: notAvailable('executeWorkflow (sub-workflows)'),
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		startRunnerTask: notAvailable('startRunnerTask (Code node)'),
		executionId: options.executionId,
		workflowId: options.workflowId,
		userId: 'harness-user',
		currentNodeExecutionIndex: 0,
		restApiUrl: `${base}rest`,
		instanceBaseUrl: base,
		formBaseUrl: `${base}form`,
		formWaitingBaseUrl: `${base}form-waiting`,
		formTestBaseUrl: `${base}form-test`,
		webhookBaseUrl: `${base}webhook`,
		webhookWaitingBaseUrl: `${base}webhook-waiting`,
		webhookTestBaseUrl: `${base}webhook-test`,
		mcpBaseUrl: `${base}mcp`,
		mcpTestBaseUrl: `${base}mcp-test`,
		variables: {},
		logAiEvent: () => {},
		sendDataToUI: (type, data) => {
			options.events?.push({ at: Date.now(), kind: 'sendDataToUI', data: { type, data } });
		},
		hooks: options.hooks,
		externalSecretsProxy: new ExternalSecretsProxy(),
		executionTimeoutTimestamp:
			options.timeoutMs !== undefined ? Date.now() + options.timeoutMs : undefined,
	} as IWorkflowExecuteAdditionalData;
}
