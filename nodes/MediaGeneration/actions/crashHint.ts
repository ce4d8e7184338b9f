import type { IExecuteFunctions } from 'n8n-workflow';

import { pollingFinisherFollows } from './durableWait';

// Issue 39: what survives when n8n stops while a Generate's tasks run. n8n saves a node's
// context (the task ledger) and output only when the node ends (with "Save execution progress",
// `nodeExecuteAfter`) or when the execution ends, so a Generate that polls its own tasks loses
// their ids if the process dies meanwhile; Generate with Wait for Completion off, then Task →
// Wait for Completion, with "Save execution progress" on, leaves them in the database, where a
// Retry of the crashed execution starts from (docs/reliability.md; how:
// docs/reliability-internals.md). The editor cannot tell the user in advance (a notice is fixed
// text), so a manual run says it in the output pane.
// Issue 44, point 8: queue mode's `crashed` path (worker and queuing process both lost) leaves
// the node nothing to tell a lost first run by: n8n records no crashed run there, saves no
// context of the running node, and keeps the execution it retries (`retryOf`) in its lifecycle
// hooks only, out of the node's reach. The hint says so instead. (A later run of the node, with
// progress saved, is told there too: see lostRun in acceptedTasks.ts.)

/**
 * A wait this long, measured or typical of the model (videos and music: about 2 min), earns the
 * hint: the runs that are in progress when a process dies.
 */
export const LONG_WAIT_MS = 60_000;

export const POLL_HINT =
	'While this node waits, the ids of its tasks exist only in the running execution: if n8n stops meanwhile (a restart, a crash, a killed worker), a Retry cannot return the results. It does not send them again, except in queue mode when the worker and the process that queued the execution both stop: there n8n leaves the node nothing to tell, and a Retry submits them again (billed twice). For long tasks, so that a Retry resumes them instead: Wait for Completion off, then a Task → Wait for Completion node, with the workflow setting "Save execution progress" on (see docs/reliability.md of the package).';

export function progressHint(setting: 'off' | 'default'): string {
	const unless =
		setting === 'default'
			? ' (not needed if this n8n sets EXECUTIONS_DATA_SAVE_ON_PROGRESS=true)'
			: '';
	return `A Retry can resume these tasks after n8n stops during the Task → Wait for Completion node only if the workflow saves its progress: turn on the workflow setting "Save execution progress"${unless}. Otherwise a Retry submits them again.`;
}

/**
 * After a manual run of Generate (not parked): how to keep the tasks through a stop of n8n.
 * Long tasks awaited in this node → the two-node layout; Wait for Completion off with a polling
 * Task → Wait for Completion next and progress not saved → the workflow setting.
 */
export function hintCrashSafety(
	ctx: IExecuteFunctions,
	run: { waitForCompletion: boolean; waitedMs: number; typicalMs: number },
): void {
	try {
		if (ctx.getMode() !== 'manual') return;
		if (run.waitForCompletion) {
			if (Math.max(run.waitedMs, run.typicalMs) >= LONG_WAIT_MS) {
				ctx.addExecutionHints({
					message: POLL_HINT,
					type: 'info',
					location: 'outputPane',
				});
			}
			return;
		}
		const setting = ctx.getWorkflowSettings().saveExecutionProgress;
		if (setting === true || !pollingFinisherFollows(ctx)) return;
		ctx.addExecutionHints({
			message: progressHint(setting === false ? 'off' : 'default'),
			type: 'info',
			location: 'outputPane',
		});
	} catch {
		// A hint is never worth failing the run over.
	}
}
