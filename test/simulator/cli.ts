// Standalone simulator: `npm run simulator -- --port 8787 [--file-port 8788] [--key K] ...`.
/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { startSimulator, type SimulatorOptions } from './index';

const USAGE = `Usage: npm run simulator -- [options]
  --port N               API port (default 8787; 0 = random)
  --file-port N          file host port (default: API port + 1; 0 = random)
  --key KEY              API key (default sim-test-key)
  --image-model ID       image model identifier (default image-1)
  --video-model ID       further video model identifier (default video-1)
  --duration MS          generation time without a [sim:duration=MS] marker (default 3000)
  --callback-shape S     status | flat | altKeys (default status)
  --callback-retries N   retries of a failed callback POST (default 3)
  --unknown-task S       404 | 400 | envelope (default 404)
  --seed N               seed of fault rates
  --no-image-fetch       accept image_urls without fetching them (default: fetch each, fail the task if one cannot be)
Prompt markers: [sim:duration=MS] [sim:fail=Reason] [sim:failonce=Reason] [sim:never] [sim:size=BYTES] [sim:files=N]`;

function parse(argv: string[]): SimulatorOptions {
	const o: SimulatorOptions = { port: 8787, defaultDurationMs: 3000 };
	let filePortSet = false;
	for (let i = 0; i < argv.length; i++) {
		const flag = argv[i];
		const value = () => {
			const v = argv[++i];
			if (v === undefined) throw new Error(`${flag} needs a value`);
			return v;
		};
		const num = () => {
			const raw = value();
			const n = Number(raw);
			if (!Number.isInteger(n) || n < 0)
				throw new Error(`${flag}: "${raw}" is not a non-negative integer`);
			return n;
		};
		switch (flag) {
			case '--':
				break; // `node tools/run.js simulator -- …` passes npm's separator through
			case '--port':
				o.port = num();
				break;
			case '--file-port':
				o.filePort = num();
				filePortSet = true;
				break;
			case '--key':
				o.apiKey = value();
				break;
			case '--image-model':
				o.imageModelId = value();
				break;
			case '--video-model':
				o.videoModelId = value();
				break;
			case '--duration':
				o.defaultDurationMs = num();
				break;
			case '--callback-shape': {
				const v = value();
				if (!['status', 'flat', 'altKeys'].includes(v))
					throw new Error(`--callback-shape: "${v}" is not one of status, flat, altKeys`);
				o.callbackShape = v as SimulatorOptions['callbackShape'];
				break;
			}
			case '--callback-retries':
				o.callbackRetries = num();
				break;
			case '--unknown-task': {
				const v = value();
				if (!['404', '400', 'envelope'].includes(v))
					throw new Error(`--unknown-task: "${v}" is not one of 404, 400, envelope`);
				o.unknownTaskStyle = v as SimulatorOptions['unknownTaskStyle'];
				break;
			}
			case '--seed':
				o.seed = num();
				break;
			case '--no-image-fetch':
				o.fetchImages = false;
				break;
			case '-h':
			case '--help':
				process.stdout.write(`${USAGE}\n`);
				process.exit(0);
				break;
			default:
				throw new Error(`unknown option "${flag}"\n${USAGE}`);
		}
	}
	if (!filePortSet) o.filePort = o.port ? o.port + 1 : 0;
	return o;
}

async function main() {
	const sim = await startSimulator(parse(process.argv.slice(2)));
	process.stdout.write(
		[
			'Media generation simulator running',
			`  API base URL : ${sim.baseUrl}`,
			`  File host    : ${sim.fileBaseUrl}`,
			`  API key      : ${sim.apiKey}`,
			`  Models       : vidmodel-1.5-pro, vidmodel-2.0-fast/image-to-video, generate-music, ${sim.imageModelId} (image), ${sim.videoModelId} (video)`,
			'Example:',
			`  curl -s -X POST ${sim.baseUrl}/api/generate/submit -H 'Authorization: Bearer ${sim.apiKey}' -H 'Content-Type: application/json' \\`,
			`    -d '{"model":"${sim.imageModelId}","input":{"prompt":"a red fox [sim:duration=2000]"}}'`,
			`  curl -s ${sim.baseUrl}/api/generate/status/<task_id> -H 'Authorization: Bearer ${sim.apiKey}'`,
			'Ctrl-C stops it.',
			'',
		].join('\n'),
	);
	const stop = async () => {
		await sim.close();
		process.exit(0);
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
}

main().catch((e) => {
	process.stderr.write(`simulator: ${e.message}\n`);
	process.exit(1);
});
