// Park state written by an earlier format, read by this one (an execution parked before an
// upgrade and resumed after it). The park state has no version field; the format before the
// sealed one (this repository before issue 19, never released: no seal, no node, no taskId) is
// never taken for this one. It is ignored with a notice, and the finisher reads the task from
// the service like any task_id: one status read per task, the files as the service has them.
// A later change of the format must keep these tests' promise for the released one.
import {
	PARK_KEY,
	parkStateKey,
	sealParkState,
	verifyParkState,
	type ParkState,
} from '../../../nodes/MediaGeneration/actions/parkState';

const KEY = parkStateKey('sk-upgrade-test')!;
const EXECUTION = '4711';

/** An item as the unsealed format left it for Task → Wait for Completion. */
function unsealedItem(): Record<string, unknown> {
	return {
		task_id: 'task_a',
		status: 'not_started',
		[PARK_KEY]: {
			parked: true,
			index: 0,
			task: {
				task_id: 'task_a',
				status: 'finished',
				files: [{ file_url: 'https://files.example.com/a.mp4', file_type: 'video' }],
			},
			finishedAt: 1_700_000_100_000,
			submittedAt: 1_700_000_000_000,
			parkedAt: 1_700_000_001_000,
			deadline: 1_700_003_601_000,
			downloadFiles: true,
			binaryPropertyName: 'data',
		},
	};
}

test('an unsealed park state reaching the finisher unchanged (the deadline path) is ignored with a notice', () => {
	const check = verifyParkState(unsealedItem() as never, KEY, EXECUTION, 'task_a');
	expect(check.state).toBeUndefined();
	expect(check.notice).toMatch(/"media_generation_wait" field of this item was ignored/);
	expect(check.notice).toMatch(/read from the service like any task_id/);
});

test('an unsealed park state resealed by this version on the last callback (the callback path) is ignored too, never obeyed', () => {
	const json = unsealedItem();
	const sealed = sealParkState(json[PARK_KEY] as ParkState, KEY, EXECUTION);
	const check = verifyParkState({ ...json, [PARK_KEY]: sealed } as never, KEY, EXECUTION, 'task_a');
	expect(check.state).toBeUndefined();
	expect(check.notice).toMatch(/was ignored/);
});

test('this version’s own state for the same task is obeyed (the check above is not one that refuses everything)', () => {
	const json = unsealedItem();
	const own = sealParkState(
		{ ...(json[PARK_KEY] as ParkState), node: 'Generate', taskId: 'task_a' },
		KEY,
		EXECUTION,
	);
	const check = verifyParkState({ ...json, [PARK_KEY]: own } as never, KEY, EXECUTION, 'task_a');
	expect(check.notice).toBeUndefined();
	expect(check.state).toEqual(own);
});

test('0.1.0’s own state (model and reference not sealed) is still obeyed where it fits: its item, an upstream parking node', () => {
	const json = unsealedItem();
	const released = sealParkState(
		{ ...(json[PARK_KEY] as ParkState), node: 'Generate', taskId: 'task_a' },
		KEY,
		EXECUTION,
	);
	expect(released.item).toBeUndefined();
	const place = { index: 0, upstream: ['Trigger', 'Generate'], now: 1_700_000_002_000 };
	const check = verifyParkState(
		{ ...json, [PARK_KEY]: released } as never,
		KEY,
		EXECUTION,
		'task_a',
		place,
	);
	expect(check.notice).toBeUndefined();
	expect(check.state).toEqual(released);
	// The same state read by another item, or below another branch, is not this item's.
	const elsewhere = verifyParkState(
		{ ...json, [PARK_KEY]: released } as never,
		KEY,
		EXECUTION,
		'task_a',
		{
			...place,
			index: 1,
		},
	);
	expect(elsewhere.state).toBeUndefined();
	const notUpstream = verifyParkState(
		{ ...json, [PARK_KEY]: released } as never,
		KEY,
		EXECUTION,
		'task_a',
		{
			...place,
			upstream: ['Trigger'],
		},
	);
	expect(notUpstream.state).toBeUndefined();
});
