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

/** mulberry32 (the simulator's), so that every run of a benchmark draws the same task durations. */
export { prng as seeded } from '../../test/simulator/random';

export const round = (n: number, digits = 2) => {
	const f = 10 ** digits;
	return Math.round(n * f) / f;
};

export const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
/** Byte counts as whole MB, one per run: "67 / 65 / 75" (a negative growth reads 0). */
export const eachMb = (values: number[]) =>
	values.map((v) => Math.max(0, v / 1024 / 1024).toFixed(0)).join(' / ');

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
