// "Wait Mode: Park Until Callbacks" through n8n's engine (the parts that need no HTTP server;
// callbacks and resuming are in test/e2e/durable-wait.test.ts): what is refused before any
// request, what the parked execution keeps (the parked items, in the node's input), and the
// finishing Task → Wait for Completion making the output polling would have made.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, NOOP_TYPE, chain, type WorkflowJson } from '../harness';
import {
	NODE,
	TRIGGER,
	credentialsFor,
	imageGenerateParams,
	mediaNode,
	mediaWorkflow,
	run,
	useSimulator,
} from './support';

const sim = useSimulator();
const FINISH = 'Finish';

function generateParams(prompt: string, options: IDataObject = {}): IDataObject {
	return imageGenerateParams(sim(), prompt, { waitMode: 'park', ...options });
}

const finishParams: IDataObject = {
	resource: 'task',
	operation: 'waitForCompletion',
	taskId: '={{ $json.task_id }}',
	options: { maxPollIntervalSeconds: 1 },
};

function parkedWorkflow(prompt: string, options: IDataObject = {}): WorkflowJson {
	return chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		mediaNode(generateParams(prompt, options)),
		mediaNode(finishParams, {}, FINISH),
		{ name: 'Done', type: NOOP_TYPE },
	);
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ row: i }));

describe('refused before any request', () => {
	test('without a Task → Wait for Completion after it', async () => {
		const result = await run(sim(), mediaWorkflow(generateParams('a cat [sim:duration=100]')));
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(
			/needs a Media Generation node "Task → Wait for Completion"/,
		);
		expect(sim().count('submit')).toBe(0);
	});

	test("when n8n's webhook URL is localhost and the service is not", async () => {
		const result = await run(sim(), parkedWorkflow('a cat'), {
			// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
			credentials: {
				mediaGenerationApi: {
					apiKey: sim().apiKey,
					baseUrl: 'https://api.example.invalid',
					allowPrivateFileHosts: true,
				},
			},
			baseUrl: 'http://localhost:5678/',
		});
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(/http:\/\/localhost:5678\/.*cannot call back/);
		expect(String((result.error as { description?: string }).description)).toMatch(
			/WEBHOOK_URL=https:\/\//,
		);
		expect(sim().requests).toHaveLength(0);
	});

	test('with a Callback URL of its own', async () => {
		const result = await run(
			sim(),
			parkedWorkflow('a cat', {
				callbackUrl: 'https://n8n.example.com/webhook/x/media-generation',
			}),
		);
		expect(result.status).toBe('error');
		expect(result.error?.message).toMatch(
			/"Callback URL" cannot be used with "Wait Mode: Park Until Callbacks"/,
		);
		expect(sim().count('submit')).toBe(0);
	});
});

test('parks with the task_ids in the input n8n keeps; the signature stays out of the output', async () => {
	const result = await run(
		sim(),
		parkedWorkflow('slow [sim:duration=60000]', { timeoutMinutes: 5 }),
		{
			items: items(3),
		},
	);
	expect(result.status).toBe('waiting');
	expect(result.waitTill!.getTime() - Date.now()).toBeGreaterThan(4 * 60_000);
	expect(result.waitTill!.getTime() - Date.now()).toBeLessThanOrEqual(5 * 60_000);
	const stack = result.run.data.executionData!.nodeExecutionStack;
	expect(stack[0].node.name).toBe(NODE);
	const parked = stack[0].data.main[0] as INodeExecutionData[];
	expect(parked).toHaveLength(3);
	const tasks = sim().tasks();
	expect(tasks).toHaveLength(3);
	for (const [i, item] of parked.entries()) {
		expect(item.pairedItem).toEqual({ item: i });
		expect(item.json.task_id).toBe(tasks[i].id);
		expect(item.json.media_generation_wait).toMatchObject({ parked: true, index: i });
		// Each task calls back this execution's resume URL, with its item index.
		const url = new URL(tasks[i].callbackUrl!);
		expect(url.pathname).toBe(`/webhook-waiting/${result.executionId}`);
		expect(url.searchParams.get('mgi')).toBe(String(i));
		expect(url.searchParams.get('signature')).toBeTruthy();
		expect(JSON.stringify(item)).not.toContain(url.searchParams.get('signature')!);
	}
	// One status read per task when parking, then nothing.
	expect(sim().count('status')).toBe(3);
	expect(result.dump()).not.toContain(
		new URL(tasks[0].callbackUrl!).searchParams.get('signature')!,
	);
});

test('all tasks final when parking: no wait, the finishing node makes the same output as polling', async () => {
	const prompt = 'quick [sim:duration=0]';
	const parked = await run(sim(), parkedWorkflow(prompt), { items: items(2) });
	expect(parked.status).toBe('success');
	const parkedOut = parked.outputOf(FINISH);
	const readsWhenParked = sim().count('status');
	// Confirmed when parking: the finishing node reads no status again.
	expect(readsWhenParked).toBe(2);

	const polled = await run(
		sim(),
		chain(
			{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
			mediaNode({ ...generateParams(prompt), options: {} }),
		),
		{ items: items(2) },
	);
	const polledOut = polled.outputOf(NODE);
	const shape = (item: INodeExecutionData) => {
		const json = { ...item.json } as IDataObject;
		for (const key of [
			'task_id',
			'created_time',
			'submitted_at',
			'finished_at',
			'wait_seconds',
			'expires_at',
			'files',
		])
			delete json[key];
		return {
			json,
			keys: Object.keys(item.json),
			pairedItem: item.pairedItem,
			binary: Object.keys(item.binary ?? {}),
		};
	};
	expect(parkedOut).toHaveLength(2);
	expect(parkedOut.map(shape)).toEqual(polledOut.map(shape));
	expect(parkedOut.map((i) => i.json.status)).toEqual(['finished', 'finished']);
	expect(parkedOut[0].binary?.data?.mimeType).toBe('image/png');
});

test("Generate's file options carry over to the finishing node unless it sets its own", async () => {
	const result = await run(
		sim(),
		parkedWorkflow('quick [sim:duration=0]', { binaryPropertyName: 'video' }),
		{ items: items(1) },
	);
	expect(Object.keys(result.outputOf(FINISH)[0].binary ?? {})).toEqual(['video']);
	const noFiles = await run(
		sim(),
		parkedWorkflow('quick [sim:duration=0]', { downloadFiles: false }),
		{
			items: items(1),
		},
	);
	expect(noFiles.outputOf(FINISH)[0].binary).toBeUndefined();
	expect(noFiles.outputOf(FINISH)[0].json.status).toBe('finished');
	const own = chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		mediaNode(generateParams('quick [sim:duration=0]', { binaryPropertyName: 'video' })),
		mediaNode({ ...finishParams, options: { binaryPropertyName: 'mine' } }, {}, FINISH),
	);
	const mine = await run(sim(), own, { items: items(1) });
	expect(Object.keys(mine.outputOf(FINISH)[0].binary ?? {})).toEqual(['mine']);
});

test('the finishing node polls parked tasks not confirmed (the deadline path) and reports failures as polling does', async () => {
	// What the deadline hands on: the parked items, tasks still pending at the service. n8n
	// resumes the same execution: the finisher runs under the parked execution's id.
	const wf = chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		mediaNode({ ...generateParams(''), prompt: '={{ $json.prompt }}' }),
		mediaNode(finishParams, {}, FINISH),
	);
	const started = await run(sim(), wf, {
		items: [
			{ prompt: 'p [sim:duration=1500]' },
			{ prompt: 'f [sim:duration=1500] [sim:fail=nsfw]' },
		],
	});
	expect(started.status).toBe('waiting');
	const parked = (
		started.run.data.executionData!.nodeExecutionStack[0].data.main[0] as INodeExecutionData[]
	).map((item) => ({ json: item.json }));
	// The parking node stays upstream of the finisher, as in the resumed workflow (the finisher
	// checks that the sealed parking node is one of its upstream nodes).
	const finish = chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		{ name: NODE, type: NOOP_TYPE },
		mediaNode(finishParams, {}, FINISH),
	);
	const sameExecution = { executionId: started.executionId, credentials: credentialsFor(sim()) };
	const result = await run(sim(), finish, { items: parked, ...sameExecution });
	expect(result.status).toBe('error');
	expect(result.error?.message).toMatch(/nsfw/);

	const tolerant = chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		{ name: NODE, type: NOOP_TYPE },
		mediaNode(finishParams, { continueOnFail: true }, FINISH),
	);
	const ok = await run(sim(), tolerant, { items: parked, ...sameExecution });
	const out = ok.outputOf(FINISH);
	expect(out).toHaveLength(2);
	expect(out[0].json).toMatchObject({ status: 'finished', model: sim().imageModelId });
	expect(out[0].json.notice).toBeUndefined();
	expect(out[0].binary?.data).toBeDefined();
	expect(out[1].json).toMatchObject({ status: 'failed', error_message: 'nsfw' });
	expect(out[1].json.media_generation_wait).toBeUndefined();
});

test('Task → Wait for Completion parks on tasks submitted with the resume URL, and refuses without a finishing node', async () => {
	const wf = chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		mediaNode(
			{
				...generateParams('s [sim:duration=60000]'),
				waitForCompletion: false,
				options: { callbackUrl: '={{ $execution.resumeUrl }}' },
			},
			{},
			'Submit',
		),
		mediaNode({ ...finishParams, options: { waitMode: 'park', timeoutMinutes: 2 } }, {}, 'Park'),
		mediaNode(finishParams, {}, FINISH),
	);
	const result = await run(sim(), wf, { items: items(2) });
	expect(result.status).toBe('waiting');
	const stack = result.run.data.executionData!.nodeExecutionStack;
	expect(stack[0].node.name).toBe('Park');
	const parked = stack[0].data.main[0] as INodeExecutionData[];
	expect(parked.map((i) => i.json.task_id)).toEqual(
		sim()
			.tasks()
			.map((t) => t.id),
	);
	expect(sim().tasks()[0].callbackUrl).toMatch(
		new RegExp(`/webhook-waiting/${result.executionId}\\?signature=`),
	);

	sim().reset();
	const alone = chain(
		{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
		mediaNode({ ...finishParams, taskId: 'task_x', options: { waitMode: 'park' } }, {}, 'Park'),
	);
	const refused = await run(sim(), alone);
	expect(refused.status).toBe('error');
	expect(refused.error?.message).toMatch(
		/needs a Media Generation node "Task → Wait for Completion"/,
	);
	expect(sim().requests).toHaveLength(0);
});
