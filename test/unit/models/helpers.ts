import type { IDataObject } from 'n8n-workflow';

import { validateSubmission } from '../../../nodes/MediaGeneration/models';

/** Validates and returns the submission; fails the test with the messages when rejected. */
export function accepted(
	modelKey: string,
	params: Record<string, unknown>,
): { model: string; input: IDataObject } {
	const result = validateSubmission(modelKey, params);
	if (!result.ok)
		throw new Error(`expected ${modelKey} to accept, got:\n${result.errors.join('\n')}`);
	return result;
}

/** Validates and returns the error messages; fails the test when the submission is accepted. */
export function rejected(modelKey: string, params: Record<string, unknown>): string[] {
	const result = validateSubmission(modelKey, params);
	if (result.ok)
		throw new Error(`expected ${modelKey} to reject, got input ${JSON.stringify(result.input)}`);
	return result.errors;
}
