// The simulator in a process of its own, for benchmarks that measure the CPU time or memory of
// the process running the node: the service's work must not count as the node's.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { startSimulator } from '../test/simulator';

async function main() {
	const sim = await startSimulator({
		defaultDurationMs: Number(process.env.SIM_DURATION_MS ?? 0),
		seed: 6,
	});
	process.send!({ type: 'ready', baseUrl: sim.baseUrl, fileBaseUrl: sim.fileBaseUrl, apiKey: sim.apiKey });
	process.on('message', async (m: { type: string }) => {
		if (m.type === 'counts') {
			process.send!({
				type: 'counts',
				submit: sim.count('submit'),
				status: sim.count('status'),
				file: sim.count('file'),
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
