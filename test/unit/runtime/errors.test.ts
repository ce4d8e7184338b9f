// What the user reads when something goes wrong: real n8n error classes (their constructors
// rewrite some messages), built by the node's error shaping. Only getNode() of the execution
// context is used, so a node description object stands in for it.
import type { IExecuteFunctions, INode } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { TransportError, type Fault } from '../../../nodes/shared/transport/faults';
import {
	downloadFailure,
	submitFailure,
	taskFailure,
	waitFailure,
} from '../../../nodes/MediaGeneration/actions/itemErrors';
import { WaitTimeoutError } from '../../../nodes/MediaGeneration/polling/pollLoop';

const node: INode = {
	id: '1',
	name: 'Media Generation',
	type: 'n8n-nodes-media-generation.mediaGeneration',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};
const ctx = { getNode: () => node } as unknown as IExecuteFunctions;
const fault = (f: Partial<Fault> & Pick<Fault, 'kind'>) =>
	new TransportError({ message: 'x', ...f });

describe('submission failures', () => {
	it.each([
		[
			'a dropped connection',
			{ kind: 'network', message: 'the connection failed (connection reset)' },
		],
		['a 500', { kind: 'http', statusCode: 500, message: 'The service answered HTTP 500' }],
		['a timeout', { kind: 'timeout', message: 'no answer in time' }],
		['a garbled answer', { kind: 'malformed', message: 'not JSON' }],
	] as const)('%s: says the task may exist and was not sent again', (_label, f) => {
		const { error, json } = submitFailure(ctx, 2, fault(f), { model: 'm' });
		const text = `${error.message}\n${error.description}`;
		expect(text).toMatch(/^Item 2: /);
		expect(text).toMatch(/may have been accepted/);
		expect(text).toMatch(/NOT sent again/);
		expect(text).toMatch(/billed twice/);
		expect(json).toMatchObject({ model: 'm', submission: 'unknown' });
	});

	it('n8n does not replace the message of a connection reset by its generic sentence', () => {
		const { error } = submitFailure(
			ctx,
			0,
			fault({ kind: 'network', message: 'socket ECONNRESET' }),
			{},
		);
		expect(error.message).toMatch(/may have been accepted/);
		expect(error.message).not.toMatch(/ECONNRESET/);
	});

	it('a rejection (400) is a NodeApiError with the code, and says no task was created', () => {
		const { error, json } = submitFailure(
			ctx,
			0,
			fault({
				kind: 'http',
				statusCode: 400,
				message: 'The service answered HTTP 400: input.duration must be 4, 8 or 12',
			}),
			{},
		);
		expect(error).toBeInstanceOf(NodeApiError);
		expect((error as NodeApiError).httpCode).toBe('400');
		expect(error.message).toContain('input.duration must be 4, 8 or 12');
		expect(error.message).toContain('no task was created');
		expect(json.submission).toBe('rejected');
	});

	it('an unreachable service: no task was created', () => {
		const { error } = submitFailure(
			ctx,
			0,
			fault({ kind: 'refused', message: 'could not connect: connection refused' }),
			{},
		);
		expect(error).toBeInstanceOf(NodeOperationError);
		expect(error.message).toMatch(/could not reach the service.*no task was created/);
	});
});

describe('task failures and timeouts keep the task_id', () => {
	it('a failed task names the task and the reason', () => {
		const { error, json } = taskFailure(
			ctx,
			1,
			{ task_id: 'T1', status: 'failed', error_message: 'content policy' },
			{ task_id: 'T1' },
		);
		expect(error.message).toBe('Item 1: task T1 failed: content policy');
		expect(json.task_id).toBe('T1');
	});

	it('a timeout says the task still runs and how to pick it up', () => {
		const timeout = new WaitTimeoutError(
			{ task_id: 'T2', status: 'processing', progress: 40 },
			1_800_000,
			30,
		);
		const { error, json } = waitFailure(ctx, 0, timeout, 'T2', { task_id: 'T2' });
		expect(error.message).toContain('task T2 did not finish within the timeout of 1800 s');
		expect(error.message).toContain('"processing", 40%');
		expect(error.description).toContain('keeps running on the service');
		expect(error.description).toContain('Task → Wait for Completion');
		expect(json).toMatchObject({
			task_id: 'T2',
			status: 'processing',
			progress: 40,
			timed_out: true,
		});
	});

	it('an unknown task on status reads is an API error with the hint', () => {
		const { error } = waitFailure(
			ctx,
			0,
			fault({
				kind: 'http',
				statusCode: 404,
				message: 'The service answered HTTP 404 (the service does not know this task_id)',
			}),
			'nope',
			{ task_id: 'nope' },
		);
		expect(error).toBeInstanceOf(NodeApiError);
		expect(error.message).toContain('does not know this task_id');
	});

	it('a failed download points at Task → Download Files within 24 hours', () => {
		const { error, json } = downloadFailure(
			ctx,
			3,
			fault({ kind: 'http', statusCode: 404, message: 'Downloading x failed: HTTP 404' }),
			'T3',
			{ task_id: 'T3', files: [] },
		);
		expect(error.message).toMatch(/^Item 3: task T3 finished, but a file could not be downloaded/);
		expect(error.description).toContain('24 hours');
		expect(json.task_id).toBe('T3');
	});

	it('a cancellation is reported as such, keeping the task_id', () => {
		const { error } = waitFailure(ctx, 0, fault({ kind: 'cancelled' }), 'T4', { task_id: 'T4' });
		expect(error.message).toContain('cancelled');
		expect(error.message).toContain('T4');
	});
});
