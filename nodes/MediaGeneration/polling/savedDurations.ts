import type { IExecuteFunctions } from 'n8n-workflow';

import { DurationLearner } from './durations';

/** Field of the node's static data holding the learnt durations. */
const FIELD = 'taskDurations';

/**
 * The batch's duration learner, seeded with what earlier executions of this node learnt. n8n
 * keeps node static data only where it saves it: after production (trigger, webhook) and CLI
 * executions, not after manual ones from the editor (those read what the saved workflow holds).
 */
export function openDurations(ctx: IExecuteFunctions): DurationLearner {
	let saved: unknown;
	try {
		saved = ctx.getWorkflowStaticData('node')[FIELD];
	} catch {
		saved = undefined;
	}
	return new DurationLearner(saved);
}

/** Hands what this run learnt to n8n's static data (n8n decides whether it is saved). */
export function saveDurations(ctx: IExecuteFunctions, learner: DurationLearner): void {
	if (!learner.hasNews) return;
	try {
		ctx.getWorkflowStaticData('node')[FIELD] = learner.toSaved();
	} catch {
		// No static data in this context: the durations still served this run.
	}
}
