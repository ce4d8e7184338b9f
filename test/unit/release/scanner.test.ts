// n8n's verification scanner, @n8n/scan-community-package (a pinned devDependency), on this
// package before it is published. Its CLI takes only a name on the public registry: it downloads
// the tarball, checks the npm provenance statement, fetches the attested source from GitHub and
// lints both. Here the same two lint legs run offline through its exported analyzePackage(), with
// the scanner's own rule set and file patterns: the source (package.json, nodes/, credentials/)
// and the tarball `npm pack` makes, unpacked (its .js files and package.json). What needs the
// published package (provenance, the source download) is publish.yml's part: docs/verification.md.
// The scanner runs in a child process without jest's NODE_ENV=test, under which
// eslint-plugin-n8n-nodes-base lints as inside n8n's own repository and reports errors the real
// scanner does not. A copy of the tarball with one planted violation must fail.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs npm and the scanner under plain Node, never inside n8n (the package ships dist/ only) */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCANNER = (
	JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
		devDependencies: Record<string, string>;
	}
).devDependencies['@n8n/scan-community-package'];

interface Leg {
	passed: boolean;
	message?: string;
	details?: string;
}

/** The environment of a maintainer's shell: no npm_config_* of the test runner, no NODE_ENV=test. */
function shellEnv(): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = { ...process.env };
	for (const key of Object.keys(env)) if (/^npm_config_/i.test(key)) delete env[key];
	delete env.NODE_ENV;
	return env;
}

let work: string;
let unpacked: string;

beforeAll(() => {
	work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-scan-'));
	const pack = spawnSync('npm', ['pack', '--json', '--pack-destination', work], {
		cwd: ROOT,
		env: shellEnv(),
		encoding: 'utf8',
	});
	if (pack.status !== 0) throw new Error(`npm pack exited with ${pack.status}\n${pack.stderr}`);
	const [{ filename }] = JSON.parse(pack.stdout) as Array<{ filename: string }>;
	unpacked = path.join(work, 'package');
	fs.mkdirSync(unpacked);
	const tar = spawnSync('tar', [
		'-xzf',
		path.join(work, filename),
		'-C',
		unpacked,
		'--strip-components=1',
	]);
	if (tar.status !== 0) throw new Error(`tar: ${tar.stderr.toString()}`);
});

afterAll(() => {
	if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** The scanner's two lint legs, as its analyzePackageByName() runs them after the downloads. */
function scan(sourceDir: string, packageDir: string): { source: Leg; tarball: Leg } {
	const script = `
		import { analyzePackage, SOURCE_FILE_PATTERNS } from '@n8n/scan-community-package/scanner/scanner.mjs';
		const strip = ({ passed, message, details }) => ({ passed, message, details });
		const source = strip(await analyzePackage(process.argv[1], SOURCE_FILE_PATTERNS));
		const tarball = strip(await analyzePackage(process.argv[2], ['**/*.js', 'package.json']));
		process.stdout.write(JSON.stringify({ source, tarball }));
	`;
	const r = spawnSync(
		process.execPath,
		['--input-type=module', '-e', script, sourceDir, packageDir],
		{
			cwd: ROOT,
			env: shellEnv(),
			encoding: 'utf8',
		},
	);
	if (r.status !== 0) throw new Error(`scanner exited with ${r.status}\n${r.stderr}`);
	return JSON.parse(r.stdout) as { source: Leg; tarball: Leg };
}

test(`@n8n/scan-community-package ${SCANNER} passes the source and the packed tarball`, () => {
	const { source, tarball } = scan(ROOT, unpacked);
	expect(source).toEqual({ passed: true });
	expect(tarball).toEqual({ passed: true });
});

test('the scanner fails a tarball whose compiled code reads the environment and the filesystem', () => {
	const bad = path.join(work, 'bad');
	fs.cpSync(unpacked, bad, { recursive: true });
	fs.writeFileSync(
		path.join(bad, 'dist', 'nodes', 'MediaGeneration', 'planted.js'),
		"const fs = require('fs');\nmodule.exports = () => fs.readFileSync(process.env.HOME);\n",
	);
	const { tarball } = scan(ROOT, bad);
	expect(tarball.passed).toBe(false);
	expect(tarball.details).toMatch(/planted\.js/);
	expect(tarball.details).toMatch(/no-restricted-imports/);
	expect(tarball.details).toMatch(/no-restricted-globals/);
});
