/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// Exactly once across n8n's recovery paths, through n8n's engine: Retry On Fail and a Retry
// from the Executions list (played as ExecutionService.retry does: mode 'retry', from the failed
// execution's stored data) resume accepted tasks, submit failed ones anew, never send blind an
// item whose submission got no answer; a new execution always submits; the spend guard stops a
// batch over its cap before anything is sent. Submissions are counted at the simulator.
import { createHash } from 'node:crypto';

import type { IDataObject, IRun } from 'n8n-workflow';

import { MANUAL_TRIGGER_TYPE, chain } from '../harness';
import {
	NODE,
	TRIGGER,
	credentialsFor,
	expectKeyNowhere,
	imageGenerateParams,
	mediaNode,
	mediaWorkflow,
	run,
	servedBytes,
	useSimulator,
} from './support';

const sim = useSimulator();
jest.setTimeout(90_000);

const rows = (...prompts: string[]) => prompts.map((prompt) => ({ prompt }));
const params = (options: IDataObject = {}) =>
	imageGenerateParams(sim(), '={{ $json.prompt }}', options);
/** The service refuses (429, retry in an hour) every submission whose prompt says "refused". */
const refuseRowsNamedRefused = () =>
	sim().faults.add({
		endpoint: 'submit',
		kind: '429',
		when: 'before',
		match: 'refused',
		retryAfter: 3600,
	});
const errorText = (result: { error?: unknown }) => {
	const e = result.error as { message?: string; description?: string } | undefined;
	return `${e?.message ?? ''}\n${e?.description ?? ''}`;
};
const taskIds = (result: { outputOf(node: string): Array<{ json: IDataObject }> }) =>
	result.outputOf(NODE).map((item) => item.json.task_id);

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!check()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

describe('Retry from the Executions list', () => {
	it('resumes the accepted tasks and submits the failed one anew', async () => {
		const workflow = mediaWorkflow(params());
		const items = rows('row a', 'row b [sim:failonce=out of luck]', 'row c');
		const failed = await run(sim(), workflow, { items, mode: 'webhook' });
		expect(failed.status).toBe('error');
		expect(errorText(failed)).toContain('out of luck');
		expect(sim().count('submit')).toBe(3);
		const [a, b, c] = sim()
			.tasks()
			.map((t) => t.id);

		const retried = await run(sim(), workflow, { retryOf: failed.run });
		expect(retried.error).toBeUndefined();
		// Only the failed row asked for a new task: 4 submissions, not 6.
		expect(sim().count('submit')).toBe(4);
		const ids = taskIds(retried);
		expect(ids[0]).toBe(a);
		expect(ids[2]).toBe(c);
		expect(ids[1]).not.toBe(b);
		expect(retried.outputOf(NODE).map((i) => i.json.status)).toEqual([
			'finished',
			'finished',
			'finished',
		]);
		const first = retried.outputOf(NODE)[0];
		expect((await retried.readBinary(first)).equals(servedBytes(sim().task(a)!))).toBe(true);
	});

	it('after a Timeout, picks up the task that finished meanwhile instead of paying again', async () => {
		const workflow = mediaWorkflow(params({ timeoutMinutes: 0.01 }));
		const failed = await run(sim(), workflow, {
			items: rows('slow [sim:duration=2500]'),
			mode: 'webhook',
		});
		expect(failed.status).toBe('error');
		expect(errorText(failed)).toMatch(/did not finish within the timeout/);
		const [task] = sim().tasks();
		await until(() => sim().task(task.id)?.endedAt !== undefined, 'the task to finish');

		const retried = await run(sim(), workflow, { retryOf: failed.run });
		expect(retried.error).toBeUndefined();
		expect(sim().count('submit')).toBe(1);
		const [item] = retried.outputOf(NODE);
		expect(item.json.task_id).toBe(task.id);
		expect((await retried.readBinary(item)).equals(servedBytes(task))).toBe(true);
	});

	it('does not send blind an item whose submission got no answer, and says what to do', async () => {
		sim().faults.add({ endpoint: 'submit', kind: 'drop', when: 'after', match: 'lost' });
		const workflow = mediaWorkflow(params());
		const failed = await run(sim(), workflow, {
			items: rows('kept', 'lost answer'),
			mode: 'webhook',
		});
		expect(failed.status).toBe('error');
		const submitsBefore = sim().count('submit');
		const tasksBefore = sim().tasks().length;
		expect(tasksBefore).toBe(2);

		const retried = await run(sim(), workflow, { retryOf: failed.run });
		expect(retried.status).toBe('error');
		expect(sim().tasks()).toHaveLength(tasksBefore);
		expect(sim().count('submit')).toBe(submitsBefore);
		expect(errorText(retried)).toMatch(/answer was lost/);
		expect(errorText(retried)).toMatch(/NOT sent again/);
		expect(errorText(retried)).toMatch(/Task → Download Files/);
	});

	it('ignores a ledger altered in the stored execution: the item is submitted, nothing else is read', async () => {
		const workflow = mediaWorkflow(params());
		const failed = await run(sim(), workflow, { items: rows('x [sim:fail=no]'), mode: 'webhook' });
		expect(failed.status).toBe('error');
		const data = JSON.parse(JSON.stringify(failed.run)) as IRun;
		const context = data.data.executionData!.contextData[`node:${NODE}`] as IDataObject;
		const ledger = context.mediaGenerationLedger as { entries: Record<string, IDataObject> };
		// A task_id that is not one, for the only item: must not be resumed (nor requested).
		for (const entry of Object.values(ledger.entries)) {
			entry.taskId = '../../admin?x=1';
			entry.state = 'accepted';
		}
		const retried = await run(sim(), workflow, { retryOf: data });
		expect(retried.status).toBe('error');
		expect(sim().count('submit')).toBe(2);
		expect(sim().requests.some((r) => r.path.includes('admin'))).toBe(false);
	});
});

describe('Retry of a Generate in Wait Mode: Park Until Callbacks', () => {
	const FINISH = 'Finish';
	// Generate parks on its execution's resume URL; the Task → Wait for Completion after it
	// finishes the job. A Retry runs under a new execution id, hence a new resume URL.
	const parkedWorkflow = () =>
		chain(
			{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
			mediaNode(params({ waitMode: 'park' })),
			mediaNode(
				{
					resource: 'task',
					operation: 'waitForCompletion',
					taskId: '={{ $json.task_id }}',
					options: { maxPollIntervalSeconds: 1 },
				},
				{},
				FINISH,
			),
		);

	// Each row is in its state when the Retry starts, whatever the machine's load: the running
	// task is long (its simulated clock is moved on once the Retry has picked it up).
	const LONG = 600_000;
	it.each([
		['finished', 0],
		['still running', LONG],
	])(
		'resumes the accepted task (%s) without paying again; its result is not lost',
		async (label, duration) => {
			// The second row's submission is refused (not accepted: no task), so the node fails
			// after the first row's task was accepted.
			const fault = refuseRowsNamedRefused();
			const workflow = parkedWorkflow();
			const items = rows(`kept [sim:duration=${duration}]`, 'refused [sim:duration=0]');
			const failed = await run(sim(), workflow, { items, mode: 'webhook' });
			expect(failed.status).toBe('error');
			expect(sim().tasks()).toHaveLength(1);
			const [kept] = sim().tasks();
			sim().faults.remove(fault);
			const running = label === 'still running';
			expect(sim().view(kept.id)?.status === 'finished').toBe(!running);

			const retrying = run(sim(), workflow, { retryOf: failed.run });
			if (running) {
				// The Retry has submitted the refused row (after picking the kept one up): the
				// kept task is still running; it finishes now.
				await until(() => sim().tasks().length === 2, 'the refused row submitted');
				expect(sim().view(kept.id)?.status).not.toBe('finished');
				sim().clock.advance(LONG);
			}
			const retried = await retrying;
			// The kept row's task is picked up (was: submitted again with the retry's resume URL);
			// only the refused row is submitted.
			expect(sim().tasks()).toHaveLength(2);
			// Not parked on a callback that goes to the failed execution's resume URL: the
			// finishing node polls the running task and downloads its files.
			expect(retried.status).toBe('success');
			const out = retried.outputOf(FINISH);
			expect(out.map((i) => i.json.status)).toEqual(['finished', 'finished']);
			expect(out[0].json.task_id).toBe(kept.id);
			const task = sim().task(kept.id)!;
			expect((await retried.readBinary(out[0])).equals(servedBytes(task))).toBe(true);
		},
	);
});

describe('Retry On Fail', () => {
	it('submits a failed task anew on the next try and resumes the accepted ones', async () => {
		const workflow = mediaWorkflow(params(), {
			retryOnFail: true,
			maxTries: 3,
			waitBetweenTries: 0,
		});
		const items = rows('one', 'two [sim:failonce=busy]', 'three');
		const result = await run(sim(), workflow, { items, mode: 'webhook' });
		expect(result.error).toBeUndefined();
		expect(sim().count('submit')).toBe(4);
		const [one, , three] = sim()
			.tasks()
			.map((t) => t.id);
		const ids = taskIds(result);
		expect([ids[0], ids[2]]).toEqual([one, three]);
	});
});

describe('a new execution', () => {
	it('with the same input submits again: a new generation the user asked for', async () => {
		const workflow = mediaWorkflow(params());
		const first = await run(sim(), workflow, { items: rows('daily prompt'), mode: 'trigger' });
		const second = await run(sim(), workflow, { items: rows('daily prompt'), mode: 'trigger' });
		expect(first.error).toBeUndefined();
		expect(second.error).toBeUndefined();
		expect(sim().count('submit')).toBe(2);
		expect(taskIds(second)[0]).not.toBe(taskIds(first)[0]);
	});
});

describe('spend guard', () => {
	it('over Max Submissions per Execution: fails before anything is sent, naming count and option', async () => {
		const workflow = mediaWorkflow(params({ maxSubmissions: 2 }));
		const result = await run(sim(), workflow, { items: rows('a', 'b', 'c') });
		expect(result.status).toBe('error');
		expect(sim().requests).toHaveLength(0);
		expect(errorText(result)).toMatch(/submit 3 generations/);
		expect(errorText(result)).toMatch(/Max Submissions per Execution \(2\)/);
		expect(errorText(result)).toMatch(/Nothing was submitted/);
	});

	it('its default stops a spreadsheet of 1,001 rows and lets 3 rows through', async () => {
		const workflow = mediaWorkflow(params());
		const big = await run(sim(), workflow, {
			items: Array.from({ length: 1001 }, (_, i) => ({ prompt: `row ${i}` })),
		});
		expect(big.status).toBe('error');
		expect(errorText(big)).toMatch(/1001 generations.*\(1000\)/);
		expect(sim().requests).toHaveLength(0);
		const small = await run(sim(), workflow, { items: rows('a', 'b', 'c') });
		expect(small.error).toBeUndefined();
		expect(sim().count('submit')).toBe(3);
	});

	it('a retry counts only what it submits itself', async () => {
		const workflow = mediaWorkflow(params({ maxSubmissions: 2 }));
		const failed = await run(sim(), workflow, {
			items: rows('p [sim:failonce=x]', 'q'),
			mode: 'webhook',
		});
		expect(failed.status).toBe('error');
		const retried = await run(sim(), workflow, { retryOf: failed.run });
		expect(retried.error).toBeUndefined();
		expect(sim().count('submit')).toBe(3);
	});
});

// Issue 39: what n8n stores when its process dies while the node runs, as its crash recovery
// leaves it in regular mode (ExecutionRecoveryService.amend, n8n 2.41.1): the node's run
// replaced by a crashed one (NodeCrashedError), the node's context never saved (n8n saves it
// only when the node ends), the stack as the last save left it. e2e (callback.test.ts) kills a
// real n8n; this plays the same stored data through the engine.
function crashedWhileRunning(failed: IRun): IRun {
	const data = JSON.parse(JSON.stringify(failed)) as IRun;
	delete data.data.executionData!.contextData[`node:${NODE}`];
	const runs = data.data.resultData.runData[NODE];
	const last = runs[runs.length - 1];
	runs[runs.length - 1] = {
		startTime: last.startTime,
		executionIndex: last.executionIndex,
		executionTime: 0,
		source: last.source,
		executionStatus: 'crashed',
		error: { message: 'Node crashed, possible out-of-memory issue', name: 'NodeCrashedError' },
	} as unknown as (typeof runs)[number];
	data.data.resultData.lastNodeExecuted = NODE;
	return data;
}

describe('Retry of an execution n8n lost while the node ran (process killed or crashed)', () => {
	it('sends nothing again: every item says its submission may have been accepted and what to do; a second Retry neither', async () => {
		const workflow = mediaWorkflow(params());
		refuseRowsNamedRefused();
		const failed = await run(sim(), workflow, {
			items: rows('lost a', 'lost b', 'refused'),
			mode: 'webhook',
		});
		expect(failed.status).toBe('error');
		expect(sim().tasks()).toHaveLength(2);

		const retried = await run(sim(), workflow, { retryOf: crashedWhileRunning(failed.run) });
		// Was: both accepted rows submitted again (and paid twice).
		expect(sim().tasks()).toHaveLength(2);
		expect(retried.status).toBe('error');
		expect(errorText(retried)).toMatch(/n8n stopped while this node was running/);
		expect(errorText(retried)).toMatch(/NOT sent again/);
		expect(errorText(retried)).toMatch(/Save execution progress/);
		expect(errorText(retried)).toMatch(/\(and 2 more failed items\)/);

		const again = await run(sim(), workflow, { retryOf: retried.run });
		expect(sim().tasks()).toHaveLength(2);
		expect(errorText(again)).toMatch(/answer was lost/);
	});

	it('a run that failed before sending anything (invalid input) is no lost run: fixed, the Retry submits', async () => {
		const failed = await run(sim(), mediaWorkflow(params()), { items: rows(''), mode: 'webhook' });
		expect(failed.status).toBe('error');
		expect(errorText(failed)).toMatch(/No request was sent/);
		expect(sim().requests).toHaveLength(0);
		// "Retry with current workflow", the prompt now fixed in the node: ExecutionService.retry
		// (loadWorkflow) puts the current nodes into the stored stack.
		const fixed = mediaWorkflow(imageGenerateParams(sim(), 'a fixed prompt'));
		const stored = JSON.parse(JSON.stringify(failed.run)) as IRun;
		for (const entry of stored.data.executionData!.nodeExecutionStack) {
			entry.node = fixed.nodes.find((n) => n.name === entry.node.name) ?? entry.node;
		}
		const retried = await run(sim(), fixed, { retryOf: stored });
		expect(retried.error).toBeUndefined();
		expect(sim().count('submit')).toBe(1);
	});
});

// Issue 52, item 3: an execution that failed in a node before Generate, which never ran: no
// ledger, as for a run n8n lost, but no run of the node either. Its Retry submits.
describe('Retry of an execution that failed before the node ran', () => {
	const ROWS = 'Rows';
	const rowsThen = (items: string) =>
		chain(
			{ name: TRIGGER, type: MANUAL_TRIGGER_TYPE },
			{ name: ROWS, type: 'harness.items', parameters: { items } },
			mediaNode(params()),
		);

	it('a node before it threw; fixed, the Retry submits every item, none refused as a lost run', async () => {
		// Not a JSON array: the Rows node throws, the execution fails there.
		const failed = await run(sim(), rowsThen('{"prompt": "not a list"}'), { mode: 'webhook' });
		expect(failed.status).toBe('error');
		expect(failed.error?.message).toMatch(/must be a JSON array/);
		expect(failed.taskOf(NODE)).toBeUndefined();
		expect(sim().requests).toHaveLength(0);
		// "Retry with current workflow", the Rows node fixed.
		const fixed = rowsThen(JSON.stringify(rows('first row', 'second row')));
		const stored = JSON.parse(JSON.stringify(failed.run)) as IRun;
		for (const entry of stored.data.executionData!.nodeExecutionStack) {
			entry.node = fixed.nodes.find((n) => n.name === entry.node.name) ?? entry.node;
		}
		const retried = await run(sim(), fixed, { retryOf: stored });
		// Was, with the node's own run slot not asked for: "n8n stopped while this node was
		// running", nothing submitted.
		expect(errorText(retried)).not.toMatch(/n8n stopped while this node was running/);
		expect(retried.error).toBeUndefined();
		expect(sim().count('submit')).toBe(2);
		expect(retried.outputOf(NODE).map((i) => i.json.status)).toEqual(['finished', 'finished']);
	});
});

// Issue 44, point 7: the ledger knows the account (the credential's id and Base URL), not the
// key. A key changed on the same account resumes; another account is said per item, never paid
// again silently; a ledger of the previous version (its digest hashed the key in) stays safe.
describe('Retry after the credential changed (issue 44, point 7)', () => {
	const other = useSimulator({ apiKey: 'another-account-key' });
	/** The stored run with the workflow's current nodes: "Retry with current workflow". */
	function withNodes(failed: IRun, workflow: ReturnType<typeof mediaWorkflow>): IRun {
		const stored = JSON.parse(JSON.stringify(failed)) as IRun;
		for (const entry of stored.data.executionData!.nodeExecutionStack) {
			entry.node = workflow.nodes.find((n) => n.name === entry.node.name) ?? entry.node;
		}
		return stored;
	}
	const itemText = (json: IDataObject) => JSON.stringify(json);
	/** Rows a and c accepted, the middle one refused (not accepted): the execution fails. */
	async function failedWithTwoAccepted(workflow = mediaWorkflow(params())) {
		const fault = refuseRowsNamedRefused();
		const failed = await run(sim(), workflow, {
			items: rows('acct a', 'refused', 'acct c'),
			mode: 'webhook',
		});
		expect(failed.status).toBe('error');
		expect(sim().tasks()).toHaveLength(2);
		sim().faults.remove(fault);
		return failed;
	}

	it('the key of the same account changed: resumes the accepted tasks, 0 submitted again', async () => {
		const workflow = mediaWorkflow(params());
		const failed = await failedWithTwoAccepted(workflow);
		const [a, c] = sim()
			.tasks()
			.map((t) => t.id);
		// The old key is revoked, the credential now holds the new one.
		sim().rotateKey('rotated-key-of-the-same-account');
		const retried = await run(sim(), workflow, {
			retryOf: failed.run,
			credentials: credentialsFor(sim(), 'rotated-key-of-the-same-account'),
		});
		expect(retried.error).toBeUndefined();
		// Was: all 3 rows submitted (5 tasks): the digest held a hash of the key.
		expect(sim().tasks()).toHaveLength(3);
		const ids = taskIds(retried);
		expect([ids[0], ids[2]]).toEqual([a, c]);
		expect(retried.outputOf(NODE).map((i) => i.json.status)).toEqual([
			'finished',
			'finished',
			'finished',
		]);
	});

	it.each([
		['the same credential now holds the key of another account (401)', 401],
		['another credential, of another account and Base URL (404)', 404],
	])('%s: says so per item with the task_id, submits nothing again', async (_label, code) => {
		const workflow = mediaWorkflow(params(), { onError: 'continueRegularOutput' });
		const failed = await failedWithTwoAccepted(mediaWorkflow(params()));
		const [a, c] = sim()
			.tasks()
			.map((t) => t.id);
		const target = code === 401 ? sim() : other();
		const credentials =
			code === 401 ? credentialsFor(sim(), 'key-of-another-account') : credentialsFor(other());
		// "Retry with current workflow" after setting the node to continue on errors.
		const retried = await run(target, workflow, {
			retryOf: withNodes(failed.run, workflow),
			credentials,
		});
		// Was (404): rows a and c submitted again on the other account, silently.
		expect(sim().tasks()).toHaveLength(2);
		expect(other().tasks()).toHaveLength(code === 404 ? 1 : 0);
		const out = retried.outputOf(NODE);
		for (const [i, id] of [
			[0, a],
			[2, c],
		] as const) {
			expect(out[i].json.task_id).toBe(id);
			const text = itemText(out[i].json);
			expect(text).toContain(`task ${id}`);
			expect(text).toMatch(new RegExp(`HTTP ${code}`));
			expect(text).toMatch(/NOT submitted again/);
		}
		expectKeyNowhere(sim(), retried, 'key-of-another-account');
	});

	// Issue 52, item 3: the account the ledger records is the credential's id and Base URL,
	// never its key. Its only trace a user sees is what the item says of the credential: the
	// same credential holding another account's key is told apart from another credential.
	it('what the item says names what changed: the same credential with another key, or another credential and Base URL', async () => {
		const workflow = mediaWorkflow(params(), { onError: 'continueRegularOutput' });
		const failed = await failedWithTwoAccepted(mediaWorkflow(params()));
		const sameCredential = await run(sim(), workflow, {
			retryOf: withNodes(failed.run, workflow),
			credentials: credentialsFor(sim(), 'key-of-another-account'),
		});
		const anotherCredential = await run(other(), workflow, {
			retryOf: withNodes(failed.run, workflow),
			credentials: credentialsFor(other()),
		});
		expect(sim().tasks()).toHaveLength(2);
		for (const i of [0, 2]) {
			// Was, with the key hashed into the account: "is not the one the task was submitted
			// with" for the very credential it was submitted with.
			const same = itemText(sameCredential.outputOf(NODE)[i].json);
			expect(same).toContain("This node's credential now holds a key of an account");
			expect(same).not.toContain('is not the one the task was submitted with');
			// Was, with another account taken for the same: "now holds a key", as if only the key
			// of this credential had changed.
			const another = itemText(anotherCredential.outputOf(NODE)[i].json);
			expect(another).toContain(
				"This node's credential (or its Base URL) is not the one the task was submitted with",
			);
			expect(another).not.toContain('now holds a key');
		}
	});

	it("another account's Retry: each accepted item is an error item with its task_id, reference, model and submission: 'other_account'", async () => {
		// docs/reliability-internals.md: "the item keeps `task_id` and `submission: 'other_account'`".
		const withReference = (onError?: 'continueRegularOutput') =>
			mediaWorkflow(
				params({ callbackReference: '={{ $json.prompt }}' }),
				onError ? { onError } : {},
			);
		const failed = await failedWithTwoAccepted(withReference());
		const [a, c] = sim()
			.tasks()
			.map((t) => t.id);
		const workflow = withReference('continueRegularOutput');
		const retried = await run(other(), workflow, {
			retryOf: withNodes(failed.run, workflow),
			credentials: credentialsFor(other()),
		});
		expect(retried.status).toBe('success');
		const out = retried.outputOf(NODE);
		expect(out).toHaveLength(3);
		for (const [i, id, row] of [
			[0, a, 'acct a'],
			[2, c, 'acct c'],
		] as const) {
			expect(out[i].json).toMatchObject({
				task_id: id,
				reference: row,
				model: sim().imageModelId,
				submission: 'other_account',
				outcome: 'may have been charged',
			});
			expect(out[i].binary).toBeUndefined();
			expect(itemText(out[i].json)).toMatch(
				new RegExp(
					`task ${id} was accepted in the execution this Retry comes from.*NOT submitted again`,
				),
			);
		}
		// The refused row was never accepted: submitted on the current account, as a new task.
		expect(out[1].json).toMatchObject({ reference: 'refused', status: 'finished' });
		expect(out[1].json.submission).toBeUndefined();
		expect(other().tasks()).toHaveLength(1);
		expect(sim().tasks()).toHaveLength(2);
	});

	it('a ledger of the previous version: the same key resumes; another key is not sent again, per item with the task_id', async () => {
		const workflow = mediaWorkflow(params(), { onError: 'continueRegularOutput' });
		const failed = await failedWithTwoAccepted();
		const [a, c] = sim()
			.tasks()
			.map((t) => t.id);
		// The ledger as version 0.x wrote it: no version, each digest over the submission and
		// an unsalted hash of Base URL and key.
		const legacy = withNodes(failed.run, workflow);
		const context = legacy.data.executionData!.contextData[`node:${NODE}`] as IDataObject;
		const ledger = context.mediaGenerationLedger as IDataObject & {
			entries: Record<string, IDataObject>;
		};
		const sha = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex');
		const account = sha(['media-generation-account', sim().baseUrl, sim().apiKey]);
		for (const [key, entry] of Object.entries(ledger.entries)) {
			const task = sim().task(String(entry.taskId))!;
			const body = sim().requests.find((r) => r.endpoint === 'submit' && r.taskId === task.id)!
				.body as IDataObject;
			entry.digest = sha([body.model, body.input, null, account]).slice(0, 32);
			delete entry.account;
			expect(key).toMatch(/^0\|[02]$/);
		}
		delete ledger.version;
		delete ledger.origin;
		delete ledger.runs;

		const same = await run(sim(), workflow, { retryOf: legacy });
		expect(sim().tasks()).toHaveLength(3);
		expect([taskIds(same)[0], taskIds(same)[2]]).toEqual([a, c]);

		sim().rotateKey('rotated-key');
		const rotated = await run(sim(), workflow, {
			retryOf: legacy,
			credentials: credentialsFor(sim(), 'rotated-key'),
		});
		// Only the refused row is submitted; rows a and c are not sent blind.
		expect(sim().tasks()).toHaveLength(4);
		const out = rotated.outputOf(NODE);
		expect(out[0].json.task_id).toBe(a);
		expect(itemText(out[0].json)).toMatch(/earlier version of this node .*task .*NOT sent again/);
		expect(out[2].json.task_id).toBe(c);

		// A Retry of that Retry: the entries keep their origin in the ledger the Retry saved (was
		// read as this version's, its digest no longer matching: rows a and c submitted).
		const plain = mediaWorkflow(params());
		const stopped = await run(sim(), plain, {
			retryOf: withNodes(legacy, plain),
			credentials: credentialsFor(sim(), 'rotated-key'),
		});
		expect(stopped.status).toBe('error');
		const tasks = sim().tasks().length;
		const again = await run(sim(), plain, {
			retryOf: stopped.run,
			credentials: credentialsFor(sim(), 'rotated-key'),
		});
		expect(sim().tasks()).toHaveLength(tasks);
		expect(errorText(again)).toMatch(/earlier version of this node/);
	});
});

describe('a stored ledger of 20,000 entries (issue 35, point 5)', () => {
	it('is read back in one pass: the entries are enumerated a bounded number of times, not once per entry', async () => {
		const workflow = mediaWorkflow(params());
		refuseRowsNamedRefused();
		const failed = await run(sim(), workflow, { items: rows('refused'), mode: 'webhook' });
		const data = JSON.parse(JSON.stringify(failed.run)) as IRun;
		const context = data.data.executionData!.contextData[`node:${NODE}`] as IDataObject;
		const ledger = context.mediaGenerationLedger as { entries: Record<string, IDataObject> };
		// What a 20,000-item run of this node leaves (run index 7, all accepted).
		const now = Date.now();
		for (let i = 0; i < 20_000; i++) {
			ledger.entries[`7|${i}`] = {
				state: 'accepted',
				taskId: `t-${i}`,
				digest: 'a'.repeat(32),
				submittedAt: now,
			};
		}
		sim().faults.clear();
		const keys = Object.keys;
		let enumerated = 0;
		const spy = jest.spyOn(Object, 'keys').mockImplementation((o: object) => {
			const k = keys(o);
			enumerated += k.length;
			return k;
		});
		let retried: Awaited<ReturnType<typeof run>> | undefined;
		try {
			retried = await run(sim(), workflow, { retryOf: data });
		} finally {
			spy.mockRestore();
		}
		expect(retried?.error).toBeUndefined();
		expect(sim().count('submit')).toBe(2);
		// Was about 200 million (Object.keys of the growing ledger per entry read back).
		expect(enumerated).toBeLessThan(200_000);
	});
});
