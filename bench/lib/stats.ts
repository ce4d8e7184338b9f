// Small helpers shared by the benchmarks: order statistics, a seeded PRNG, formatting.

export function quantile(values: number[], q: number): number {
	if (values.length === 0) return Number.NaN;
	const sorted = [...values].sort((a, b) => a - b);
	const pos = (sorted.length - 1) * q;
	const lo = Math.floor(pos);
	const hi = Math.ceil(pos);
	return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export const median = (values: number[]) => quantile(values, 0.5);
export const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** mulberry32, so that every run of a benchmark draws the same task durations. */
export function seeded(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

export const round = (n: number, digits = 2) => {
	const f = 10 ** digits;
	return Math.round(n * f) / f;
};

export const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Renders rows as a plain-text table (first row is the header). */
export function table(rows: Array<Array<string | number>>): string {
	const cells = rows.map((r) => r.map(String));
	const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
	const line = (r: string[]) =>
		r
			.map((c, i) => c.padEnd(widths[i]))
			.join('  ')
			.trimEnd();
	return [
		line(cells[0]),
		widths.map((w) => '-'.repeat(w)).join('  '),
		...cells.slice(1).map(line),
	].join('\n');
}
