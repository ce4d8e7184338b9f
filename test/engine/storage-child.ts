// Runs one generation workflow against a simulator (MGEN_SIM: base URL and key) in a process
// whose binary data folder cannot take the file: started by downloads.test.ts either in a mount
// namespace with a 2 MB tmpfs as its temp folder (a real full disk: ENOSPC) or under a file size
// limit (EFBIG). Prints one JSON line: the node's error and the files left in the binary store.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import * as fs from 'node:fs';
import * as path from 'node:path';

function filesUnder(dir: string): string[] {
	if (!fs.existsSync(dir)) return [];
	return fs
		.readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter((e) => e.isFile())
		.map((e) => path.join(e.parentPath, e.name));
}

async function main() {
	// The harness makes its n8n folder under os.tmpdir(): the small file system when one is given.
	if (process.env.MGEN_STORAGE_TMPDIR) process.env.TMPDIR = process.env.MGEN_STORAGE_TMPDIR;
	const harness = await import('../harness');
	const { baseUrl, apiKey, size } = JSON.parse(process.env.MGEN_SIM!) as {
		baseUrl: string;
		apiKey: string;
		size: number;
	};
	const result = await harness.runWorkflow(
		harness.chain(
			{ name: 'Start', type: harness.MANUAL_TRIGGER_TYPE },
			{
				name: 'Media Generation',
				type: harness.MEDIA_GENERATION_TYPE,
				parameters: {
					resource: 'music',
					operation: 'generate',
					model: 'generate-music',
					prompt: `full disk [sim:duration=0] [sim:files=1] [sim:size=${size}]`,
					// Not about polling: the first read at 2.5 s (Sooner), not the default's 5.5 s.
					options: { checkForResults: 'sooner' },
				},
				credentials: harness.mediaCredentials(),
			},
		),
		// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
		{
			credentials: { mediaGenerationApi: { apiKey, baseUrl, allowPrivateFileHosts: true } },
			binaryMode: 'filesystem',
		},
	);
	const error = result.error as { message?: string; description?: string } | undefined;
	process.stdout.write(
		`${JSON.stringify({
			status: result.status,
			message: error?.message ?? '',
			binaryStore: harness.BINARY_DATA_PATH,
			filesLeft: filesUnder(harness.BINARY_DATA_PATH).map((f) =>
				path.relative(harness.BINARY_DATA_PATH, f),
			),
		})}\n`,
	);
}

main().then(
	() => process.exit(0),
	(error) => {
		process.stderr.write(`${error?.stack ?? error}\n`);
		process.exit(1);
	},
);
