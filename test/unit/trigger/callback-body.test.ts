import {
	CallbackBodyError,
	classifyStatus,
	parseCallbackBody,
} from '../../../nodes/shared/callbackBody';

describe('callback body: the task id is found in every plausible shape', () => {
	const shapes: Array<[string, unknown, string, string | undefined]> = [
		[
			'the status response envelope',
			{ code: 200, data: { task_id: 't-1', status: 'finished', progress: 100, files: [] } },
			't-1',
			'finished',
		],
		[
			'a flat task object',
			{ task_id: 't-2', status: 'failed', error_message: 'x' },
			't-2',
			'failed',
		],
		['camelCase taskId', { taskId: 't-3', status: 'finished' }, 't-3', 'finished'],
		['TaskID capitals', { TaskID: 't-4' }, 't-4', undefined],
		['kebab task-id', { 'task-id': 't-5', state: 'completed' }, 't-5', 'finished'],
		['data.taskId', { code: 200, data: { taskId: 't-6', status: 'failed' } }, 't-6', 'failed'],
		[
			'data.id',
			{ code: 200, msg: 'success', data: { id: 't-7', status: 'finished' } },
			't-7',
			'finished',
		],
		['a flat id', { id: 't-8', status: 'FINISHED' }, 't-8', 'finished'],
		['task wrapper', { task: { id: 't-9', status: 'failed' } }, 't-9', 'failed'],
		['result wrapper', { result: { task_id: 't-10' }, status: 'finished' }, 't-10', 'finished'],
		[
			'payload wrapper',
			{ payload: { data: { task_id: 't-11', status: 'finished' } } },
			't-11',
			'finished',
		],
		[
			'an event envelope whose own id is not the task',
			{ id: 'evt_1', event: 'task.failed', data: { task_id: 't-12' } },
			't-12',
			'failed',
		],
		[
			'an event envelope with a generic inner id',
			{ id: 'evt_2', type: 'generation.completed', data: { id: 't-13' } },
			't-13',
			'finished',
		],
		[
			'a JSON string body',
			JSON.stringify({ code: 200, data: { task_id: 't-14', status: 'finished' } }),
			't-14',
			'finished',
		],
		[
			'a double-encoded JSON string',
			JSON.stringify(JSON.stringify({ task_id: 't-15' })),
			't-15',
			undefined,
		],
		[
			'a JSON string inside data',
			{ data: JSON.stringify({ task_id: 't-16', status: 'failed' }) },
			't-16',
			'failed',
		],
		['a one-element list', [{ task_id: 't-17', status: 'finished' }], 't-17', 'finished'],
		['a numeric id', { task_id: 12345, status: 'finished' }, '12345', 'finished'],
		['bytes of JSON', Buffer.from('{"taskId":"t-18"}'), 't-18', undefined],
		['job_id', { job_id: 't-19', status: 'SUCCESS' }, 't-19', 'finished'],
	];

	it.each(shapes)('%s', (_name, body, taskId, claimed) => {
		const parsed = parseCallbackBody(body);
		expect(parsed.taskId).toBe(taskId);
		expect(parsed.claimed).toBe(claimed);
	});

	it('reads the raw body when the parsed one is empty (unknown content type)', () => {
		const parsed = parseCallbackBody({}, Buffer.from('{"task_id":"raw-1","status":"finished"}'));
		expect(parsed).toMatchObject({ taskId: 'raw-1', claimed: 'finished' });
	});

	it('trims the id and keeps the body task for reference', () => {
		const parsed = parseCallbackBody({
			data: { task_id: '  t-20 ', status: 'finished', files: [{ file_url: 'x' }] },
		});
		expect(parsed.taskId).toBe('t-20');
		expect(parsed.task).toMatchObject({ status: 'finished', files: [{ file_url: 'x' }] });
	});

	it('prefers an explicit task id over an id of the envelope', () => {
		expect(parseCallbackBody({ id: 'evt', task_id: 'real' }).taskId).toBe('real');
	});
});

describe('callback body: what has no task id is refused with a clear message', () => {
	const bad: Array<[string, unknown, RegExp]> = [
		['an empty object', {}, /no task id/],
		['unrelated keys', { hello: 'world', code: 200 }, /no task id/],
		['an empty id', { task_id: '   ' }, /no task id/],
		['an id with spaces', { task_id: 'a b' }, /no task id/],
		['an id that is an object', { task_id: { x: 1 } }, /no task id/],
		['an overlong id', { task_id: 'x'.repeat(300) }, /no task id/],
		['the id "."', { task_id: '.' }, /no task id/],
		['the id ".."', { task_id: '..' }, /no task id/],
		['an id with a slash', { task_id: '../submit' }, /no task id/],
		['an id with a query', { task_id: 'x?y=1' }, /no task id/],
		['plain text', 'finished', /not a JSON object \(got the text "finished"\)/],
		['broken JSON', '{"task_id": ', /not a JSON object/],
		['null', null, /not a JSON object \(got null\)/],
		['a list of two tasks', [{ task_id: 'a' }, { task_id: 'b' }], /list of 2 entries/],
		['an empty list', [], /list of 0 entries/],
	];
	it.each(bad)('%s', (_name, body, message) => {
		expect(() => parseCallbackBody(body)).toThrow(CallbackBodyError);
		expect(() => parseCallbackBody(body)).toThrow(message);
	});
});

describe('callback body: the message names a few top-level keys of a small body', () => {
	it('lists up to five keys, each cut short, when the raw body is small', () => {
		const body = { hello: 'world', code: 200 };
		expect(() => parseCallbackBody(body, Buffer.from(JSON.stringify(body)))).toThrow(
			/no task id.*top-level keys: hello, code\)/,
		);
		const many = Object.fromEntries(
			Array.from({ length: 8 }, (_, i) => [`key${i}${'x'.repeat(40)}`, i]),
		);
		const message = (() => {
			try {
				parseCallbackBody(many, Buffer.from(JSON.stringify(many)));
			} catch (e) {
				return (e as Error).message;
			}
			return '';
		})();
		expect(message).toMatch(/top-level keys: key0x+…, .*, …\)$/);
		expect(message.split('top-level keys: ')[1].split(', ')).toHaveLength(6);
		expect(() => parseCallbackBody({}, Buffer.from('{}'))).toThrow(/top-level keys: none/);
	});
});

describe('status words', () => {
	it.each([
		['finished', 'finished'],
		['FINISHED', 'finished'],
		['task.finished', 'finished'],
		['TASK_COMPLETED', 'finished'],
		['succeeded', 'finished'],
		['failed', 'failed'],
		['generation.failed', 'failed'],
		['failed_to_complete', 'failed'],
		['error', 'failed'],
		['not_started', 'pending'],
		['not_finished', 'pending'],
		['processing', 'pending'],
		['in_progress', 'pending'],
		['unsuccessful', undefined],
		['video', undefined],
		['', undefined],
	])('%s -> %s', (word, cls) => {
		expect(classifyStatus(word)).toBe(cls);
	});
	it('ignores non-strings', () => {
		expect(classifyStatus(200)).toBeUndefined();
		expect(classifyStatus(null)).toBeUndefined();
	});
});
