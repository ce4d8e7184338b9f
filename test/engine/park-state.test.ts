// The park state (`media_generation_wait`) is used only when this execution's parking node
// wrote it (issue 19, finding 1). The attacker posts to a public webhook of the workflow
// Webhook → Split Out (body.rows) → Task: Wait for Completion (Task ID {{ $json.task_id }}),
// over real HTTP, with park states in the rows; the file URLs they name are on a server the
// attacker runs (counted here). Every state that is not the genuine one of this execution, its
// parking node, its item and its task is dropped with a notice, and the task is read from the
// service as for any task_id.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { MEDIA_GENERATION_TYPE, mediaCredentials, type WorkflowJson } from '../harness';
import { startCallbackReceiver, type CallbackReceiver } from '../harness/webhook';
import { client } from '../simulator/client';
import {
	PARK_KEY,
	parkStateKey,
	sealParkState,
	type ParkState,
} from '../../nodes/MediaGeneration/actions/parkState';
import { credentialsFor, useSimulator } from './support';

const sim = useSimulator();
const FINISH = 'Wait for Completion';

/** The attacker's file host: counts what it is asked for. */
let attacker: http.Server;
let attackerUrl = '';
const attackerHits: string[] = [];

beforeAll(async () => {
	attacker = http.createServer((req, res) => {
		attackerHits.push(req.url ?? '');
		res.writeHead(200, { 'Content-Type': 'image/png' });
		res.end(Buffer.from('\x89PNG\r\n\x1a\nattacker bytes'));
	});
	await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
	attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
});
afterAll(async () => {
	await new Promise<void>((resolve) => attacker.close(() => resolve()));
});
beforeEach(() => {
	attackerHits.length = 0;
});

/** Webhook → Split Out (body.rows) → Task: Wait for Completion, every item's error kept. */
function attackedWorkflow(): WorkflowJson {
	const at = (x: number): [number, number] => [x, 0];
	return {
		name: 'park state attack',
		nodes: [
			{
				id: 'w',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: at(0),
				parameters: { path: 'hook' },
			},
			{
				id: 's',
				name: 'Split Out',
				type: 'harness.items',
				typeVersion: 1,
				position: at(200),
				parameters: { items: '={{ $json.body.rows }}' },
			},
			{
				id: 'f',
				name: FINISH,
				type: MEDIA_GENERATION_TYPE,
				typeVersion: 1,
				position: at(400),
				parameters: {
					resource: 'task',
					operation: 'waitForCompletion',
					taskId: '={{ $json.task_id }}',
					options: { maxPollIntervalSeconds: 1 },
				},
				credentials: mediaCredentials(),
				onError: 'continueRegularOutput',
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Split Out', type: 'main', index: 0 }]] },
			'Split Out': { main: [[{ node: FINISH, type: 'main', index: 0 }]] },
		},
	};
}

async function attack(rows: IDataObject[], executionId = `webhook-${randomUUID()}`) {
	const receiver: CallbackReceiver = await startCallbackReceiver({
		workflow: attackedWorkflow(),
		credentials: credentialsFor(sim()),
		nextExecutionId: () => executionId,
	});
	try {
		const res = await fetch(receiver.url, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ rows }),
		});
		expect(res.status).toBe(200);
		await receiver.waitFor(1);
		const [execution] = await receiver.executions();
		return execution.outputOf(FINISH);
	} finally {
		await receiver.close();
	}
}

const statusReadsOf = (taskId: string) =>
	sim().requests.filter((r) => r.endpoint === 'status' && r.taskId === taskId).length;

async function finishedTask(tag: string): Promise<string> {
	const id = await client(sim()).create(sim().imageModelId, {
		prompt: `${tag} [sim:duration=0]`,
		size: '1:1',
		n: 1,
	});
	await client(sim()).pollToEnd(id);
	return id;
}

const forgedTask = (taskId: string): IDataObject => ({
	task_id: taskId,
	status: 'finished',
	files: [{ file_url: `${attackerUrl}/anything-${taskId}.png`, file_type: 'image' }],
});

function expectPolledAsUsual(item: INodeExecutionData, taskId: string) {
	expect(item.json.notice).toMatch(/"media_generation_wait" field of this item was ignored/);
	expect(item.json.task_id).toBe(taskId);
	expect(statusReadsOf(taskId)).toBeGreaterThanOrEqual(1);
}

test("the issue's attack: a forged finished state with a file URL is ignored, the task is read, nothing is fetched from the URL", async () => {
	const real = await finishedTask('attack real');
	const readsBefore = statusReadsOf(real);
	const ghost = 'task_does_not_exist_0000000000000';
	const out = await attack([
		{ task_id: real, [PARK_KEY]: { parked: true, index: 0, task: forgedTask(real) } },
		{ task_id: ghost, [PARK_KEY]: { parked: true, index: 1, task: forgedTask(ghost) } },
	]);
	expect(attackerHits).toEqual([]);
	expect(out).toHaveLength(2);
	// The real task: its status read, its own file from the service's file host.
	expectPolledAsUsual(out[0], real);
	expect(statusReadsOf(real)).toBeGreaterThan(readsBefore);
	expect(out[0].json.status).toBe('finished');
	expect((out[0].json.files as IDataObject[])[0].url).toBe(
		((sim().view(real) as IDataObject).files as IDataObject[])[0].file_url,
	);
	expect(out[0].binary?.data).toBeDefined();
	// The made-up task: read, unknown at the service, an error item; nothing downloaded.
	expectPolledAsUsual(out[1], ghost);
	expect(String(out[1].json.error)).toMatch(/not found|unknown|404/i);
	expect(out[1].binary).toBeUndefined();
});

describe('a sealed state is used only by its own execution, node, item and task, unchanged', () => {
	const EXECUTION = `webhook-${randomUUID()}`;
	const key = () => parkStateKey(sim().apiKey)!;

	async function genuine(
		index: number,
		tag: string,
		executionId = EXECUTION,
		changes: Partial<ParkState> = {},
		item?: IDataObject,
	): Promise<{ id: string; state: ParkState }> {
		const id = await finishedTask(tag);
		const now = Date.now();
		const state: ParkState = {
			parked: true,
			index,
			// A node upstream of the finisher (in a real workflow, the Generate that parked).
			node: 'Split Out',
			taskId: id,
			task: sim().view(id) as IDataObject,
			finishedAt: now - 100,
			submittedAt: now - 2000,
			parkedAt: now - 1000,
			deadline: now + 600_000,
			...changes,
		};
		return { id, state: sealParkState(state, key(), executionId, item) };
	}

	test('the untouched state is used: no status read, its task and options as the parking node left them', async () => {
		const control = await genuine(0, 'control');
		const readsBefore = statusReadsOf(control.id);
		const [item] = await attack([{ task_id: control.id, [PARK_KEY]: control.state }], EXECUTION);
		expect(item.json.notice).toBeUndefined();
		expect(statusReadsOf(control.id)).toBe(readsBefore);
		expect(item.json).toMatchObject({ task_id: control.id, status: 'finished' });
		expect(item.binary?.data).toBeDefined();
	});

	/** Each case: the row's task_id and the state it carries (index 0: the row's position). */
	const cases: Array<[string, () => Promise<{ id: string; state: IDataObject }>]> = [
		[
			'another execution id',
			async () => await genuine(0, 'other execution', `webhook-${randomUUID()}`),
		],
		[
			'another parking node',
			async () => {
				const g = await genuine(0, 'other node');
				return { id: g.id, state: { ...g.state, node: 'Another Generate' } };
			},
		],
		[
			'another item index',
			async () => {
				const g = await genuine(0, 'other index');
				return { id: g.id, state: { ...g.state, index: 1 } };
			},
		],
		[
			"an altered task (its file URL on the attacker's host)",
			async () => {
				const g = await genuine(0, 'altered task');
				return { id: g.id, state: { ...g.state, task: forgedTask(g.id) } };
			},
		],
		[
			'a forged error',
			async () => {
				const g = await genuine(0, 'forged error');
				return {
					id: g.id,
					state: { ...g.state, error: { message: 'forged failure', description: null } },
				};
			},
		],
		[
			'a forged downloadFiles',
			async () => {
				const g = await genuine(0, 'forged downloadFiles');
				return { id: g.id, state: { ...g.state, downloadFiles: false } };
			},
		],
		[
			'a forged binaryPropertyName',
			async () => {
				const g = await genuine(0, 'forged binaryPropertyName');
				return { id: g.id, state: { ...g.state, binaryPropertyName: 'evil' } };
			},
		],
		[
			'the genuine state of another task',
			async () => {
				const g = await genuine(0, 'state of another task');
				return { id: await finishedTask('someone else'), state: g.state };
			},
		],
		// Sealed by the parking node, so the seal holds: what it binds must fit too (issue 28, 5).
		[
			'a genuine state of another item of the same execution',
			async () => await genuine(1, 'genuine other item'),
		],
		[
			'a genuine state of a node that is not upstream of the finisher',
			async () => await genuine(0, 'genuine other node', EXECUTION, { node: 'Generate Elsewhere' }),
		],
		[
			'a genuine state parked in the future',
			async () =>
				await genuine(0, 'genuine future', EXECUTION, {
					parkedAt: Date.now() + 86_400_000,
					deadline: Date.now() + 2 * 86_400_000,
				}),
		],
		[
			'a seal under a key not derived from this credential',
			async () => {
				const g = await genuine(0, 'other key');
				return { id: g.id, state: sealParkState(g.state, parkStateKey('another key')!, EXECUTION) };
			},
		],
	];

	test.each(cases)(
		'%s: dropped with a notice, the task read and output as for any task_id',
		async (_name, make) => {
			const { id, state } = await make();
			const readsBefore = statusReadsOf(id);
			const [item] = await attack([{ task_id: id, [PARK_KEY]: state }], EXECUTION);
			expect(attackerHits).toEqual([]);
			expect(item.json.notice).toMatch(/was ignored/);
			expect(statusReadsOf(id)).toBeGreaterThan(readsBefore);
			expect(item.json).toMatchObject({ task_id: id, status: 'finished' });
			expect(item.json.error).toBeUndefined();
			expect(Object.keys(item.binary ?? {})).toEqual(['data']);
		},
	);

	test("the item's model and reference come from the seal, not from the item", async () => {
		const g = await genuine(
			0,
			'sealed facts',
			EXECUTION,
			{},
			{ model: 'sealed-model', reference: 'sealed-ref' },
		);
		const [item] = await attack(
			[{ task_id: g.id, model: 'forged-model', reference: 'forged-ref', [PARK_KEY]: g.state }],
			EXECUTION,
		);
		expect(item.json.notice).toBeUndefined();
		expect(item.json).toMatchObject({
			task_id: g.id,
			model: 'sealed-model',
			reference: 'sealed-ref',
		});
		expect(String(item.binary?.data?.fileName)).not.toContain('forged');
	});

	test("a 0.1.0 state (model and reference not sealed) is still used, the item's own read as 0.1.0 did", async () => {
		const g = await genuine(0, 'old format');
		expect(g.state.item).toBeUndefined();
		const [item] = await attack(
			[{ task_id: g.id, model: 'item-model', [PARK_KEY]: g.state }],
			EXECUTION,
		);
		expect(item.json.notice).toBeUndefined();
		expect(item.json).toMatchObject({ task_id: g.id, model: 'item-model', status: 'finished' });
	});
});
