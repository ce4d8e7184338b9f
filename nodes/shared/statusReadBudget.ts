/** Status reads callbacks may cause per trigger (or per parked execution): a steady rate and a burst. */
export const STATUS_READ_LIMITS = { perSecond: 10, burst: 50 };

/**
 * A token bucket per key (a trigger, a parked execution). Each status read takes a token; tokens
 * come back at `perSecond` up to `burst`. So callbacks cost the user's key at most
 * `burst + perSecond × t` reads over any `t` seconds per key, whatever arrives.
 */
export class StatusReadBudget {
	private readonly buckets = new Map<string, { tokens: number; at: number }>();

	constructor(private readonly limits = STATUS_READ_LIMITS) {}

	take(trigger: string, now: number): boolean {
		let bucket = this.buckets.get(trigger);
		if (!bucket) {
			if (this.buckets.size >= 10_000) this.buckets.clear();
			bucket = { tokens: this.limits.burst, at: now };
			this.buckets.set(trigger, bucket);
		}
		const refill = ((now - bucket.at) / 1000) * this.limits.perSecond;
		bucket.tokens = Math.min(this.limits.burst, bucket.tokens + Math.max(0, refill));
		bucket.at = now;
		if (bucket.tokens < 1) return false;
		bucket.tokens -= 1;
		return true;
	}

	/** Milliseconds until the next token (for Retry-After). */
	waitMs(trigger: string): number {
		const bucket = this.buckets.get(trigger);
		if (!bucket || bucket.tokens >= 1) return 0;
		return Math.ceil(((1 - bucket.tokens) / this.limits.perSecond) * 1000);
	}
}
