import type { IDataObject } from 'n8n-workflow';

/**
 * What became of an item, in the words a ledger row shows (a Data Table's or a sheet's `status`
 * column), so that a workflow writes `{{ $json.outcome }}` into the row instead of an
 * expression that reads several fields. Derived from the fields the item already carries, in
 * one place, for the operations that submit or collect tasks (not Get Status, which only reads).
 *
 * - `submitted`: accepted, not waited for (task_id set): collect it later.
 * - `finished`: done, its files in the item.
 * - `failed`: the service failed the task (error_message says why).
 * - `expired`: finished, but its files are past the 24 hours they stay valid: gone.
 * - `still running`: the wait ended (Timeout, a status read that failed) while the task may
 *   still run: collect it again later with its task_id.
 * - `download failed`: finished, a file could not be fetched (within its 24 hours): try again.
 * - `not sent`: refused before any task was created: nothing was charged.
 * - `may have been charged`: sent, and the answer was lost: a task may exist (never re-sent).
 */
export type Outcome =
	| 'submitted'
	| 'finished'
	| 'failed'
	| 'expired'
	| 'still running'
	| 'download failed'
	| 'not sent'
	| 'may have been charged';

/** The operations whose items carry `outcome`. */
export const OUTCOME_OPERATIONS = new Set(['generate', 'waitForCompletion', 'downloadFiles']);

export function outcomeOf(json: IDataObject, ok: boolean): Outcome {
	if (ok) return json.status === 'finished' ? 'finished' : 'submitted';
	if (json.submission === 'unknown' || json.submission === 'other_account')
		return 'may have been charged';
	if (json.submission === 'rejected' || typeof json.task_id !== 'string' || !json.task_id)
		return 'not sent';
	if (json.timed_out === true) return 'still running';
	if (json.status === 'failed') return 'failed';
	if (json.status === 'finished')
		return json.files_expired === true ? 'expired' : 'download failed';
	return 'still running';
}

/**
 * Whether a file host's refusal means the files are gone: it answered 403, 404 or 410 and the
 * task's files are past their 24 hours (`expires_at`, from the task's own times). A refusal
 * within the 24 hours is a download that failed, worth another try.
 */
export function filesExpired(
	statusCode: number | undefined,
	expiresAt: unknown,
	now = Date.now(),
): boolean {
	if (statusCode !== 403 && statusCode !== 404 && statusCode !== 410) return false;
	const expires = typeof expiresAt === 'string' ? Date.parse(expiresAt) : Number.NaN;
	return Number.isFinite(expires) && expires <= now;
}
