// Callbacks to a parked execution ("Wait Mode: Park Until Callbacks") over real HTTP: n8n's
// engine parks the execution, the simulator posts each task's callback to the resume URL,
// served by the waiting-webhook harness (test/harness/waiting.ts) with n8n-core's real
// WebhookContext. The simulator's own callbacks are dropped so that each test decides which
// callback reaches this process, as a balancer in front of several n8n processes would.
import { randomBytes, randomUUID } from 'node:crypto';

import type { IDataObject } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, chain, type WorkflowJson } from '../harness';
import { startWaitingServer, type WaitingServer } from '../harness/waiting';
import { parkRegistrySize } from '../../nodes/MediaGeneration/actions/durableWait';
import {
	TRIGGER,
	credentialsFor,
	imageGenerateParams,
	mediaNode,
	run,
	useSimulator,
} from './support';

const sim = useSimulator();
const FINISH = 'Finish';
let server: WaitingServer;

beforeAll(async () => {
	server = await startWaitingServer({ credentials: credentialsFor(sim())! });
});
afterAll(async () => {
	await server?.close();
});
beforeEach(() => {
	sim().faults.add({ endpoint: 'callback', kind: 'drop' });
});

function parkedWorkflow(prompt: string): WorkflowJson {
	return chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		mediaNode(imageGenerateParams(sim(), prompt, { waitMode: 'park', timeoutMinutes: 30 })),
		mediaNode(
			{
				resource: 'task',
				operation: 'waitForCompletion',
				taskId: '={{ $json.task_id }}',
				options: {},
			},
			{},
			FINISH,
		),
	);
}

/** Parks `count` tasks of one execution (ending after a minute) and serves its resume URL. */
async function park(
	count: number,
	tag: string,
	execution: { executionId?: string; resumeToken?: string } = {},
) {
	const wf = parkedWorkflow(`${tag} [sim:duration=60000]`);
	const before = new Set(
		sim()
			.tasks()
			.map((t) => t.id),
	);
	const result = await run(sim(), wf, {
		items: Array.from({ length: count }, (_, i) => ({ row: i })),
		baseUrl: server.baseUrl,
		...execution,
	});
	expect(result.status).toBe('waiting');
	server.park(result, wf);
	return {
		result,
		tasks: sim()
			.tasks()
			.filter((t) => !before.has(t.id)),
	};
}

/** Another module instance of harness and package: its own memory, as another process has. */
let worker!: typeof import('../harness');
beforeAll(async () => {
	await jest.isolateModulesAsync(async () => {
		worker = await import('../harness');
		// The package's modules load on first need: here, inside the isolated registry.
		worker.nodeTypes.getByNameAndVersion(worker.MEDIA_GENERATION_TYPE, 1);
	});
});

/** Parks one task (ending after a minute) on the "worker"; this process serves the callbacks. */
async function parkOnWorker(
	tag: string,
	execution: { executionId?: string; resumeToken?: string } = {},
) {
	const wf = parkedWorkflow(`${tag} [sim:duration=60000]`);
	const before = new Set(
		sim()
			.tasks()
			.map((t) => t.id),
	);
	const result = await worker.runWorkflow(wf, {
		credentials: credentialsFor(sim()),
		baseUrl: server.baseUrl,
		...execution,
	});
	expect(result.status).toBe('waiting');
	server.park(result, wf);
	return sim()
		.tasks()
		.filter((t) => !before.has(t.id));
}

const lastCall = () => server.calls[server.calls.length - 1];

describe('the park registry of a process', () => {
	test('a later park of the same execution (the next round of a loop) resumes on its own callbacks', async () => {
		// The execution parks on a worker and its callbacks reach this process, as in queue
		// mode's webhook process.
		const execution = {
			executionId: `loop-${randomUUID()}`,
			resumeToken: randomBytes(32).toString('hex'),
		};
		const round1 = await parkOnWorker('round-1', execution);
		sim().clock.advance(61_000);
		expect((await sim().sendCallback(round1[0].id)).status).toBe(200);
		expect(lastCall().resumed).toHaveLength(1);

		// The same execution parks again (same resume URL, same signature): a new park.
		const round2 = await parkOnWorker('round-2', execution);
		expect(round2[0].callbackUrl).toBe(round1[0].callbackUrl);
		sim().clock.advance(61_000);
		expect((await sim().sendCallback(round2[0].id)).status).toBe(200);
		expect(lastCall().answer).not.toMatchObject({ note: expect.stringMatching(/resumed already/) });
		const resumed = lastCall().resumed;
		expect(resumed).toHaveLength(1);
		expect(resumed![0].json).toMatchObject({ task_id: round2[0].id, status: 'finished' });
	});

	test('the process that parked resumes on the last callback it gets, when the others went to another process', async () => {
		const { tasks } = await park(3, 'split');
		sim().clock.advance(61_000);
		// Tasks 0 and 1 called back another n8n process (not this one); task 2 calls here.
		expect((await sim().sendCallback(tasks[2].id)).status).toBe(200);
		const resumed = lastCall().resumed;
		expect(resumed).toHaveLength(3);
		for (const [i, item] of resumed!.entries()) {
			expect(item.json).toMatchObject({ task_id: tasks[i].id, status: 'finished' });
			expect((item.json.media_generation_wait as IDataObject).task).toMatchObject({
				status: 'finished',
			});
		}
	});

	test('a callback while another task is pending learns the others, stopping at the first pending one', async () => {
		const wf = parkedWorkflow('mixed [sim:duration=60000]');
		const result = await run(sim(), wf, {
			items: [{ row: 0 }, { row: 1 }, { row: 2 }],
			baseUrl: server.baseUrl,
		});
		// All three pending for a minute (same prompt: same duration); nothing resumed yet.
		expect(result.status).toBe('waiting');
		server.park(result, wf);
		const tasks = sim().tasks();
		const readsBefore = sim().count('status');
		expect((await sim().sendCallback(tasks[0].id)).status).toBe(202);
		expect(lastCall().resumed).toBeUndefined();
		// Its own task read once; nothing else while it is not final.
		expect(sim().count('status') - readsBefore).toBe(1);
	});

	test("entries expire: in a process that parks nothing (n8n webhook), a callback's new entry sweeps the expired ones", async () => {
		const old = await parkOnWorker('old');
		expect([200, 202]).toContain((await sim().sendCallback(old[0].id)).status);
		const held = parkRegistrySize();
		expect(held).toBeGreaterThan(0);
		const fresh = await parkOnWorker('new');
		// Nine days later (every earlier park's deadline long past), a callback of a new park.
		const later = Date.now() + 9 * 24 * 60 * 60 * 1000;
		const now = jest.spyOn(Date, 'now').mockImplementation(() => later);
		try {
			expect([200, 202]).toContain((await sim().sendCallback(fresh[0].id)).status);
		} finally {
			now.mockRestore();
		}
		expect(parkRegistrySize()).toBe(1);
	});

	test('a flood of callbacks for a pending task costs at most the budget of status reads (50 + 10/s), the rest 429', async () => {
		const { tasks } = await park(1, 'flood');
		const readsBefore = sim().count('status');
		const callsBefore = server.calls.length;
		const started = Date.now();
		const url = tasks[0].callbackUrl!;
		const body = JSON.stringify({ code: 200, data: { task_id: tasks[0].id, status: 'finished' } });
		const answers = await Promise.all(
			Array.from({ length: 120 }, async () => {
				const res = await fetch(url, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body,
				});
				await res.text();
				return { status: res.status, retryAfter: res.headers.get('retry-after') };
			}),
		);
		const seconds = (Date.now() - started) / 1000;
		const reads = sim().count('status') - readsBefore;
		// eslint-disable-next-line no-console
		console.log(
			`[park] 120 callbacks for one pending task in ${seconds.toFixed(1)} s: ${reads} status reads, ${answers.filter((a) => a.status === 429).length} answered 429`,
		);
		expect(reads).toBeLessThanOrEqual(50 + Math.ceil(10 * seconds));
		const throttled = answers.filter((a) => a.status === 429);
		expect(throttled.length).toBeGreaterThan(0);
		expect(Number(throttled[0].retryAfter)).toBeGreaterThanOrEqual(1);
		expect(answers.filter((a) => a.status !== 429).every((a) => a.status === 202)).toBe(true);
		expect(server.calls.slice(callsBefore).every((c) => c.resumed === undefined)).toBe(true);
	});
});
