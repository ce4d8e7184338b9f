// The simulator in a process of its own, for benchmarks that measure the CPU time or memory of
// the process running the node: the service's work must not count as the node's.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { startSimulator } from '../test/simulator';

async function main() {
	const sim = await startSimulator({
		defaultDurationMs: Number(process.env.SIM_DURATION_MS ?? 0),
		seed: 6,
	});
	process.send!({
		type: 'ready',
		baseUrl: sim.baseUrl,
		fileBaseUrl: sim.fileBaseUrl,
		apiKey: sim.apiKey,
	});
	let mark = 0;
	process.on('message', async (m: { type: string }) => {
		if (m.type === 'mark') mark = sim.requests.length;
		if (m.type === 'counts') {
			process.send!({
				type: 'counts',
				submit: sim.count('submit'),
				status: sim.count('status'),
				file: sim.count('file'),
			});
		}
		if (m.type === 'timeline') {
			// When, relative to the first submission, the service saw what: how long the submissions
			// took to arrive, and when the last status read and the last file request came in.
			const at = (endpoint: string) =>
				sim.requests
					.slice(mark)
					.filter((r) => r.endpoint === endpoint)
					.map((r) => r.at);
			const submits = at('submit');
			const first = Math.min(...submits);
			process.send!({
				type: 'timeline',
				lastSubmitMs: Math.max(...submits) - first,
				lastStatusMs: Math.max(...at('status')) - first,
				lastFileMs: Math.max(...at('file')) - first,
			});
		}
		if (m.type === 'close') {
			await sim.close();
			process.exit(0);
		}
	});
	process.on('disconnect', () => process.exit(0));
}

void main();
