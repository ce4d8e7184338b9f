// Node overhead per item, in a process of its own (started by bench/lib/overhead.ts) so that
// the simulator's CPU time (another process) does not count. Runs 1,000 items whose tasks end at
// once, under V8's sampling CPU profiler, and attributes self time to where the code lives.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark/test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { Session } from 'node:inspector/promises';

import { runWorkflow, setBinaryMode } from '../test/harness';
import { GENERATION_NODE, SMALL_FILE_BYTES, generationWorkflow } from './lib/workflow';

interface ProfileNode {
	id: number;
	callFrame: { url: string; functionName: string };
	hitCount?: number;
	children?: number[];
}
interface Profile {
	nodes: ProfileNode[];
	samples: number[];
	timeDeltas: number[];
	startTime: number;
	endTime: number;
}

/** Where a function lives, by its script URL. */
export function category(url: string, fn: string): string {
	if (fn === '(garbage collector)') return 'gc';
	if (fn === '(idle)') return 'idle';
	if (fn === '(program)' || fn === '(root)') return 'v8/native';
	if (/\/(dist\/)?(nodes|credentials)\//.test(url) && !url.includes('node_modules')) return 'node';
	if (url.includes('/node_modules/zod/')) return 'zod';
	if (/\/node_modules\/(n8n-core|n8n-workflow|@n8n)\//.test(url)) return 'engine';
	if (
		/\/node_modules\/(axios|follow-redirects|form-data|proxy-from-env|combined-stream|mime-types|mime-db)\//.test(
			url,
		)
	)
		return 'http';
	// Libraries n8n's engine calls (the package itself imports none of them).
	if (
		/\/node_modules\/(luxon|lodash|callsites|debug|readable-stream|uuid|flatted|jmespath|xml2js|mime)/.test(
			url,
		)
	)
		return 'engine libraries';
	if (url.startsWith('node:') || url === '') return 'node.js runtime';
	if (url.includes('/test/harness/')) return 'harness';
	return 'other';
}

async function main() {
	const items = Number(process.env.BENCH_ITEMS ?? 1000);
	const { baseUrl, apiKey } = JSON.parse(process.env.BENCH_SIM!) as {
		baseUrl: string;
		apiKey: string;
	};
	await setBinaryMode('filesystem');
	const run = (n: number, tag: string) =>
		runWorkflow(generationWorkflow({ concurrency: n, onError: 'continueErrorOutput' }), {
			// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
			credentials: { mediaGenerationApi: { apiKey, baseUrl, allowPrivateFileHosts: true } },
			items: Array.from({ length: n }, (_, i) => ({
				prompt: `${tag} ${i} [sim:duration=0] [sim:files=1] [sim:size=${SMALL_FILE_BYTES}]`,
			})),
		});
	// Warm-up: loads and JIT-compiles everything once.
	await run(50, 'warm-up');

	const session = new Session();
	session.connect();
	await session.post('Profiler.enable');
	await session.post('Profiler.setSamplingInterval', { interval: 200 });
	await session.post('Profiler.start');
	const cpu0 = process.cpuUsage();
	const t0 = performance.now();
	const result = await run(items, 'overhead');
	const wallMs = performance.now() - t0;
	const cpu = process.cpuUsage(cpu0);
	const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
	session.disconnect();

	const ok = result.outputOf(GENERATION_NODE, 0).length;
	const errors = result.outputOf(GENERATION_NODE, 1).length;
	if (ok !== items)
		throw new Error(
			`${ok} results and ${errors} errors for ${items} items: ${result.dump().slice(0, 1500)}`,
		);

	const byId = new Map(profile.nodes.map((n) => [n.id, n]));
	const selfUs = new Map<string, number>();
	const nodeFunctions = new Map<string, number>();
	const otherScripts = new Map<string, number>();
	for (let i = 0; i < profile.samples.length; i++) {
		const node = byId.get(profile.samples[i])!;
		const dt = profile.timeDeltas[i] ?? 0;
		const cat = category(node.callFrame.url, node.callFrame.functionName);
		selfUs.set(cat, (selfUs.get(cat) ?? 0) + dt);
		if (cat === 'other') {
			const key =
				node.callFrame.url
					.replace(/^.*\/node_modules\//, '')
					.split('/')
					.slice(0, 2)
					.join('/') || '(no url)';
			otherScripts.set(key, (otherScripts.get(key) ?? 0) + dt);
		}
		if (cat === 'node') {
			const key = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*\/(nodes|credentials)\//, '$1/')}`;
			nodeFunctions.set(key, (nodeFunctions.get(key) ?? 0) + dt);
		}
	}
	process.send!({
		type: 'result',
		items,
		wallMs,
		cpuUserMs: cpu.user / 1000,
		cpuSystemMs: cpu.system / 1000,
		selfMs: Object.fromEntries([...selfUs].map(([k, v]) => [k, v / 1000])),
		topOtherMs: Object.fromEntries(
			[...otherScripts]
				.sort((a, b) => b[1] - a[1])
				.slice(0, 6)
				.map(([k, v]) => [k, v / 1000]),
		),
		topNodeFunctionsMs: Object.fromEntries(
			[...nodeFunctions]
				.sort((a, b) => b[1] - a[1])
				.slice(0, 8)
				.map(([k, v]) => [k, v / 1000]),
		),
	});
}

if (require.main === module) {
	main().then(
		() => process.exit(0),
		(error) => {
			process.send!({ type: 'error', message: String(error?.stack ?? error) });
			process.exit(1);
		},
	);
}
