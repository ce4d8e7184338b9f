import type { IBinaryKeyData, IDataObject, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import type { Task } from '../shared/task';
import { downloadTaskFiles } from '../shared/transport/downloads';
import { classifyError } from '../shared/transport/faults';

// The Trigger's downloads take turns per trigger (workflow id + node id), never per process: a
// flood of callbacks to one trigger, or a slow file host, holds that trigger's turns only. Each
// callback's files have a deadline (Download Deadline, from the callback's arrival, its wait for
// a turn included); past it, or when the line is full, the run starts without the files and
// says how to fetch them (see handler.ts).

/** Callbacks of one trigger downloading at once (each holds its files until the last arrived). */
export const TRIGGER_DOWNLOADS = 4;
/**
 * Callbacks of one trigger waiting for a turn, at most; more start at once without files. A
 * batch of 100 tasks finishing together gets its files; past that the line would only hold
 * more calls open (each holds n8n's per-call memory while it waits).
 */
export const DOWNLOAD_LINE_LIMIT = 100;
/** Download Deadline's default: a long video from a slow host, per callback. */
export const DEFAULT_DOWNLOAD_MINUTES = 10;

interface Line {
	active: number;
	waiting: Array<(granted: boolean) => void>;
}

/** Why a callback has no turn: the line was full, or its deadline passed while it waited. */
export type NoTurn = 'full' | 'late';

class DownloadLines {
	private readonly lines = new Map<string, Line>();

	/** A turn (its release), or why there is none; waits at most until `until`. */
	async take(trigger: string, until: number): Promise<(() => void) | NoTurn> {
		let line = this.lines.get(trigger);
		if (!line) {
			line = { active: 0, waiting: [] };
			this.lines.set(trigger, line);
		}
		if (line.active < TRIGGER_DOWNLOADS) {
			line.active++;
			return this.releaseOf(trigger, line);
		}
		if (line.waiting.length >= DOWNLOAD_LINE_LIMIT) return 'full';
		const timer = new AbortController();
		const waiting = line;
		let grant!: (granted: boolean) => void;
		const granted = new Promise<boolean>((resolve) => (grant = resolve));
		waiting.waiting.push(grant);
		void sleep(Math.max(0, until - Date.now()), timer.signal).then(
			() => {
				// Out of the line in the same turn of the event loop, so no release hands it a turn.
				const at = waiting.waiting.indexOf(grant);
				if (at >= 0) waiting.waiting.splice(at, 1);
				grant(false);
			},
			() => undefined,
		);
		const turn = await granted;
		timer.abort();
		return turn ? this.releaseOf(trigger, line) : 'late';
	}

	/** Callbacks of a trigger downloading or waiting now. */
	busy(trigger: string): number {
		const line = this.lines.get(trigger);
		return line ? line.active + line.waiting.length : 0;
	}

	private releaseOf(trigger: string, line: Line): () => void {
		let released = false;
		return () => {
			if (released) return;
			released = true;
			// The turn passes to the next in line as it is: `active` stays the same.
			const next = line.waiting.shift();
			if (next) next(true);
			else if (--line.active === 0 && line.waiting.length === 0) this.lines.delete(trigger);
		};
	}
}

export const downloadLines = new DownloadLines();

/** Download Deadline (Minutes), as set (a saved workflow without it gets the default). */
export function downloadMinutesOf(ctx: IWebhookFunctions): number {
	const value = ctx.getNodeParameter('downloadMinutes', DEFAULT_DOWNLOAD_MINUTES) as unknown;
	return typeof value === 'number' && value > 0 ? value : DEFAULT_DOWNLOAD_MINUTES;
}

const shownMinutes = (minutes: number) =>
	minutes >= 1 ? `${Number(minutes.toFixed(2))} min` : `${Math.round(minutes * 60)} s`;

/** The error the run starts with when it has no files: why, and how to fetch them later. */
function notDownloaded(why: string): string {
	return `Downloading the files failed: ${why}. The run started without them. Their URLs (in "files") stay valid 24 hours after generation: fetch them with a Media Generation node, Task → Download Files, with this task_id.`;
}

/**
 * The files of one callback, in this trigger's turn and within its Download Deadline (from the
 * callback's arrival); or the error the run starts with instead.
 */
export async function downloadFiles(
	ctx: IWebhookFunctions,
	task: Task,
	settings: {
		trigger: string;
		binaryProperty: string;
		downloadMinutes: number;
		maxFileSizeMb?: number;
	},
	arrivedAt: number,
): Promise<{ binary: IBinaryKeyData; files: IDataObject[] } | { error: string }> {
	const deadlineAt = arrivedAt + settings.downloadMinutes * 60_000;
	const deadlineName = `the trigger's Download Deadline (${shownMinutes(settings.downloadMinutes)})`;
	const turn = await downloadLines.take(settings.trigger, deadlineAt);
	if (turn === 'full') {
		return {
			error: notDownloaded(
				`${TRIGGER_DOWNLOADS + DOWNLOAD_LINE_LIMIT} callbacks of this trigger were downloading or waiting to download already`,
			),
		};
	}
	if (turn === 'late') {
		return {
			error: notDownloaded(
				`${deadlineName} passed while other callbacks of this trigger were downloading`,
			),
		};
	}
	try {
		return await downloadTaskFiles(ctx, task, {
			binaryProperty: settings.binaryProperty,
			maxFileSizeMb: settings.maxFileSizeMb,
			deadlineAt,
			deadlineName,
		});
	} catch (error) {
		return { error: notDownloaded(classifyError(error).message) };
	} finally {
		turn();
	}
}
