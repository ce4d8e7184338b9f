import type { IExecuteFunctions } from 'n8n-workflow';

/**
 * Progress of a batch where n8n can show it: a browser-console message in manual runs (at most
 * one every `intervalMs`, one line for the whole batch), and debug log lines per status read.
 */
export class ProgressReporter {
	private readonly states = new Map<
		number,
		{ status: string; progress?: number; taskId?: string }
	>();

	private lastSent = 0;

	private readonly manual: boolean;

	constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly total: number,
		private readonly intervalMs = 10_000,
	) {
		let mode = '';
		try {
			mode = ctx.getMode();
		} catch {
			mode = '';
		}
		this.manual = mode === 'manual';
	}

	update(itemIndex: number, taskId: string, status: string, progress?: number): void {
		const before = this.states.get(itemIndex);
		this.states.set(itemIndex, { status, progress, taskId });
		// One line per change of status, not per read: n8n's logger captures a call stack for each
		// line, which a thousand tasks in flight pay on every read.
		if (before?.status !== status) {
			this.ctx.logger.debug('Media Generation task status', {
				itemIndex,
				taskId,
				status,
				progress,
			});
		}
		const now = Date.now();
		if (now - this.lastSent < this.intervalMs) return;
		this.lastSent = now;
		this.send();
	}

	done(itemIndex: number, status: string): void {
		const state = this.states.get(itemIndex);
		this.states.set(itemIndex, { ...state, status });
	}

	private send(): void {
		if (!this.manual) return;
		let finished = 0;
		let failed = 0;
		let running = 0;
		let sum = 0;
		let counted = 0;
		for (const s of this.states.values()) {
			if (s.status === 'finished') finished++;
			else if (s.status === 'failed') failed++;
			else running++;
			if (typeof s.progress === 'number') {
				sum += s.progress;
				counted++;
			}
		}
		const only = this.total === 1 ? [...this.states.values()][0] : undefined;
		const text = only
			? `Media Generation: task ${only.taskId ?? ''} ${only.status}${only.progress !== undefined ? ` ${only.progress}%` : ''}`
			: `Media Generation: ${finished}/${this.total} finished, ${failed} failed, ${running} running${counted ? `, average progress ${Math.round(sum / counted)}%` : ''}`;
		try {
			this.ctx.sendMessageToUI(text);
		} catch {
			// No UI connected (e.g. an execution started from the CLI): nothing to show.
		}
	}
}
