// Service faults injected in the simulator, seen through n8n's engine: what is retried, what is
// never sent twice (double billing), what the user is told, and where the API key never goes.
import { randomUUID } from 'crypto';

import type { IDataObject } from 'n8n-workflow';

import type { Simulator } from '../simulator';
import {
	NODE,
	credentialsFor,
	expectKeyNowhere,
	mediaWorkflow,
	run,
	servedBytes,
	simTaskOf,
	useSimulator,
} from './support';

const sim = useSimulator();
jest.setTimeout(60_000);

function imageParams(s: Simulator, prompt: string, options: IDataObject = {}): IDataObject {
	return {
		resource: 'image',
		operation: 'generate',
		model: 'image-by-id',
		modelId: s.imageModelId,
		prompt,
		options,
	};
}

const errorText = (result: { error?: unknown }) => {
	const e = result.error as { message?: string; description?: string } | undefined;
	return `${e?.message ?? ''}\n${e?.description ?? ''}`;
};

describe('faults on submit', () => {
	it('429 with Retry-After before acceptance: retried after the wait, exactly one task', async () => {
		sim().faults.add({ endpoint: 'submit', kind: '429', when: 'before', times: 1, retryAfter: 1 });
		const result = await run(
			sim(),
			mediaWorkflow(imageParams(sim(), 'rate limited [sim:duration=200]')),
		);
		expect(result.error).toBeUndefined();
		expect(result.outputOf(NODE)[0].json.status).toBe('finished');
		const submits = sim().requests.filter((r) => r.endpoint === 'submit');
		expect(submits.map((r) => r.status)).toEqual([429, 200]);
		// Retry-After: 1 s was honoured (from the simulator's own request log).
		expect(submits[1].at - submits[0].at).toBeGreaterThanOrEqual(1000);
		expect(sim().tasks()).toHaveLength(1);
	});

	it.each([
		['500', '500'],
		['connection dropped', 'drop'],
		['malformed answer', 'malformed'],
		['502 from a gateway', '502'],
	] as const)('%s after acceptance: not re-submitted, the error says so', async (_label, kind) => {
		sim().faults.add({ endpoint: 'submit', kind, when: 'after', times: 1 });
		const result = await run(sim(), mediaWorkflow(imageParams(sim(), 'accepted, answer lost')));
		expect(result.status).toBe('error');
		// One request, one task on the service: the node did not pay twice.
		expect(sim().count('submit')).toBe(1);
		expect(sim().tasks()).toHaveLength(1);
		const text = errorText(result);
		expect(text).toMatch(/may have been accepted/i);
		expect(text).toMatch(/NOT sent again/);
		expect(text).toMatch(/billed twice/);
		expectKeyNowhere(sim(), result);
	});

	it('500 before acceptance is not re-submitted either (the client cannot tell it apart)', async () => {
		sim().faults.add({ endpoint: 'submit', kind: '500', when: 'before', times: 1 });
		const result = await run(sim(), mediaWorkflow(imageParams(sim(), 'server error')));
		expect(result.status).toBe('error');
		expect(sim().count('submit')).toBe(1);
		expect(sim().tasks()).toHaveLength(0);
	});

	it('a wrong API key: clear error, and the key given appears nowhere', async () => {
		const wrongKey = `wrong-${randomUUID()}`;
		const result = await run(sim(), mediaWorkflow(imageParams(sim(), 'who am i')), {
			credentials: credentialsFor(sim(), wrongKey),
		});
		expect(result.status).toBe('error');
		expect(errorText(result)).toMatch(/401|key|auth/i);
		expect(sim().tasks()).toHaveLength(0);
		expectKeyNowhere(sim(), result, wrongKey);
	});
});

describe('faults on status reads', () => {
	it.each([
		['500', { kind: '500' as const, times: 2 }],
		['503 with Retry-After', { kind: '503' as const, times: 1, retryAfter: 1 }],
		['429 with Retry-After', { kind: '429' as const, times: 1, retryAfter: 1 }],
		['connection dropped', { kind: 'drop' as const, times: 2 }],
		['malformed JSON', { kind: 'malformed' as const, times: 1 }],
		['envelope code 500 under HTTP 200', { kind: 'code' as const, times: 1 }],
	])('%s: retried, the task finishes', async (_label, fault) => {
		const id = sim().faults.add({ endpoint: 'status', ...fault });
		const result = await run(
			sim(),
			mediaWorkflow(imageParams(sim(), 'status faults [sim:duration=200]')),
		);
		expect(result.error).toBeUndefined();
		const [item] = result.outputOf(NODE);
		expect(item.json.status).toBe('finished');
		expect(sim().faults.applied(id)).toBe(fault.times);
		expect(sim().count('status')).toBeGreaterThan(fault.times);
		if ('retryAfter' in fault) {
			// Retry-After honoured: the next read came no earlier than asked (simulator's log).
			const reads = sim().requests.filter((r) => r.endpoint === 'status');
			const faulted = reads.findIndex((r) => r.fault !== undefined);
			expect(reads[faulted + 1].at - reads[faulted].at).toBeGreaterThanOrEqual(
				fault.retryAfter * 1000,
			);
		}
		expect(sim().count('submit')).toBe(1);
		const bytes = await result.readBinary(item);
		expect(bytes.equals(servedBytes(simTaskOf(sim(), item)))).toBe(true);
	});
});

describe('faults on downloads', () => {
	it('a truncated download is retried and the file is complete', async () => {
		const id = sim().faults.add({ endpoint: 'file', kind: 'truncate', times: 1 });
		const result = await run(
			sim(),
			mediaWorkflow(imageParams(sim(), 'cut short [sim:duration=200][sim:size=300000]')),
		);
		expect(result.error).toBeUndefined();
		const [item] = result.outputOf(NODE);
		expect(sim().faults.applied(id)).toBe(1);
		expect(sim().count('file')).toBe(2);
		const bytes = await result.readBinary(item);
		const served = servedBytes(simTaskOf(sim(), item));
		expect(bytes.length).toBe(served.length);
		expect(bytes.equals(served)).toBe(true);
		expectKeyNowhere(sim(), result);
	});

	it('a 500 from the file host is retried', async () => {
		sim().faults.add({ endpoint: 'file', kind: '500', times: 1 });
		const result = await run(
			sim(),
			mediaWorkflow(imageParams(sim(), 'file host hiccup [sim:duration=200]')),
		);
		expect(result.error).toBeUndefined();
		expect(sim().count('file')).toBe(2);
		expect(result.outputOf(NODE)[0].binary?.data).toBeDefined();
	});

	it('file requests never carry the API key, even across several files and retries', async () => {
		sim().faults.add({ endpoint: 'file', kind: 'drop', times: 1 });
		const result = await run(
			sim(),
			mediaWorkflow(imageParams(sim(), 'three files [sim:duration=200][sim:files=3]')),
		);
		expect(result.error).toBeUndefined();
		expect(Object.keys(result.outputOf(NODE)[0].binary ?? {})).toHaveLength(3);
		expect(sim().requests.filter((r) => r.origin === 'files').length).toBeGreaterThanOrEqual(4);
		expectKeyNowhere(sim(), result);
	});
});
