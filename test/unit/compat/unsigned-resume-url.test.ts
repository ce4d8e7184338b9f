// n8n before 2.14 gives executions an unsigned resume URL (`/webhook-waiting/<id>`, no
// `signature`): parking on it would let anyone who guesses the execution id call it. The node
// refuses "Park Until Callbacks" there with an error naming the n8n version and the way out.
// (No n8n between 2.0 and 2.13 installs from the registry these tests reach: the context
// below gives what those versions give, https://…/webhook-waiting/<id>.)
import type { IExecuteFunctions, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	PARK_NEEDS_SIGNED_RESUME_URL,
	checkParkable,
} from '../../../nodes/MediaGeneration/actions/durableWait';

const NODE: INode = {
	id: 'g',
	name: 'Generate',
	type: 'n8n-nodes-media-generation.mediaGeneration',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};
const FINISHER = {
	...NODE,
	name: 'Finish',
	parameters: { resource: 'task', operation: 'waitForCompletion', options: {} },
};

/** What a parking node asks n8n for before it sends anything, with `resumeUrl` as n8n's answer. */
function context(resumeUrl: string): IExecuteFunctions {
	return {
		getNode: () => NODE,
		getChildNodes: () => [FINISHER],
		evaluateExpression: (expression: string) => {
			if (expression !== '{{ $execution.resumeUrl }}')
				throw new Error(`unexpected expression ${expression}`);
			return resumeUrl;
		},
	} as unknown as IExecuteFunctions;
}

test('an unsigned resume URL (n8n before 2.14) is refused with the version needed and the way out', async () => {
	const error = await checkParkable(
		context('https://n8n.example.com/webhook-waiting/42'),
		{},
	).catch((e: unknown) => e);
	expect(error).toBeInstanceOf(NodeOperationError);
	expect((error as NodeOperationError).message).toBe(PARK_NEEDS_SIGNED_RESUME_URL);
	expect((error as NodeOperationError).message).toContain('n8n 2.14 or newer');
	expect((error as NodeOperationError).description).toContain('"Poll in This Execution"');
});

test('a signed resume URL (n8n 2.14 and later) is the URL the node parks on', async () => {
	const signed = 'https://n8n.example.com/webhook-waiting/42?signature=0123456789abcdef';
	await expect(checkParkable(context(signed), {})).resolves.toBe(signed);
});
