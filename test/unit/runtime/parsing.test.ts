// What the node makes of the service's answers: the spec's envelope { code, data }, where a code
// other than 200 is an error even under HTTP 200, and tolerance where the spec is silent.
import {
	isTerminal,
	parseStatusResponse,
	parseSubmitResponse,
	ResponseShapeError,
} from '../../../nodes/shared/task';

const statusBody = (data: Record<string, unknown>, code: unknown = 200) => ({ code, data });

describe('status answers', () => {
	it('reads a finished task with its files', () => {
		const task = parseStatusResponse(
			statusBody({
				task_id: 't-1',
				status: 'finished',
				progress: 100,
				files: [{ file_url: 'https://files.example/a.png', file_type: 'image' }],
				created_time: '2026-01-01T00:00:00Z',
				error_message: null,
			}),
		);
		expect(task).toEqual({
			task_id: 't-1',
			status: 'finished',
			progress: 100,
			files: [{ file_url: 'https://files.example/a.png', file_type: 'image' }],
			created_time: '2026-01-01T00:00:00Z',
			error_message: null,
		});
	});

	it('reads a failed task and keeps error_message', () => {
		const task = parseStatusResponse(
			statusBody({ task_id: 't', status: 'failed', error_message: 'nsfw' }),
		);
		expect(task.status).toBe('failed');
		expect(task.error_message).toBe('nsfw');
		expect(isTerminal(task.status)).toBe(true);
	});

	it('treats every status but finished and failed as still running', () => {
		for (const status of ['not_started', 'queued', 'processing', 'running', 'whatever']) {
			expect(isTerminal(status)).toBe(false);
		}
		expect(isTerminal('finished')).toBe(true);
	});

	it('accepts a JSON text body, numbers as strings, a numeric task_id and extra fields', () => {
		const task = parseStatusResponse(
			JSON.stringify({
				code: '200',
				data: { task_id: 42, status: 'processing', progress: '37', extra: 1 },
			}),
		);
		expect(task).toMatchObject({ task_id: '42', status: 'processing', progress: 37 });
	});

	it('clamps progress into 0..100', () => {
		expect(
			parseStatusResponse(statusBody({ task_id: 't', status: 'x', progress: 140 })).progress,
		).toBe(100);
		expect(
			parseStatusResponse(statusBody({ task_id: 't', status: 'x', progress: -3 })).progress,
		).toBe(0);
	});

	it('a code other than 200 under HTTP 200 is an error carrying that code and the message', () => {
		let error: unknown;
		try {
			parseStatusResponse({ code: 500, message: 'internal hiccup', data: null });
		} catch (e) {
			error = e;
		}
		expect(error).toBeInstanceOf(ResponseShapeError);
		expect((error as ResponseShapeError).kind).toBe('envelope');
		expect((error as ResponseShapeError).code).toBe(500);
		expect((error as Error).message).toContain('internal hiccup');
	});

	it.each([
		['HTML from a proxy', '<html>502 Bad Gateway</html>'],
		['no envelope', { task_id: 't', status: 'finished' }],
		['no task_id', { code: 200, data: { status: 'finished' } }],
		['no status', { code: 200, data: { task_id: 't' } }],
		[
			'files without URLs',
			{ code: 200, data: { task_id: 't', status: 'finished', files: [{ file_type: 'image' }] } },
		],
		['empty', ''],
	])('%s is a "malformed" answer with a readable message', (_label, body) => {
		let error: unknown;
		try {
			parseStatusResponse(body);
		} catch (e) {
			error = e;
		}
		expect(error).toBeInstanceOf(ResponseShapeError);
		expect((error as ResponseShapeError).kind).toBe('malformed');
		expect((error as Error).message.length).toBeLessThan(600);
	});
});

describe('submit answers', () => {
	it('reads task_id, status and created_time', () => {
		expect(
			parseSubmitResponse({
				code: 200,
				data: { task_id: 'abc', status: 'not_started', created_time: '2026-01-01T00:00:00Z' },
			}),
		).toEqual({ task_id: 'abc', status: 'not_started', created_time: '2026-01-01T00:00:00Z' });
	});

	it('assumes not_started when the status is missing', () => {
		expect(parseSubmitResponse({ code: 200, data: { task_id: 'abc' } }).status).toBe('not_started');
	});

	it('a 200 envelope without task_id is malformed (the task may exist: the caller must not resubmit)', () => {
		expect(() => parseSubmitResponse({ code: 200, data: {} })).toThrow(/no usable task_id/);
	});

	it('a rejection envelope keeps its code', () => {
		let error: unknown;
		try {
			parseSubmitResponse({ code: 400, msg: 'input.duration: must be 4, 8 or 12' });
		} catch (e) {
			error = e;
		}
		expect((error as ResponseShapeError).code).toBe(400);
		expect((error as Error).message).toContain('input.duration');
	});
});
