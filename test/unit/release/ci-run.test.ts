// `.ci/run`, what CI runs: `npm test` with CI=true whatever the environment holds, so that
// tools/run.js refuses to skip a layer that cannot run. Run with a stand-in `npm` on PATH that
// records how it was called.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs a shell script under plain Node, never inside n8n (the package ships dist/ only) */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');

let bin: string;
beforeAll(() => {
	bin = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-ci-run-'));
	fs.writeFileSync(
		path.join(bin, 'npm'),
		'#!/bin/sh\necho "npm $* in $(pwd) with CI=${CI-<unset>}"\n',
		{ mode: 0o755 },
	);
});
afterAll(() => fs.rmSync(bin, { recursive: true, force: true }));

test.each([
	['CI unset', undefined],
	['CI=false', 'false'],
	['CI=0', '0'],
	['CI=true', 'true'],
])(
	'with %s in the environment, .ci/run runs npm test in the repository with CI=true',
	(_what, ci) => {
		const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
		if (ci === undefined) delete env.CI;
		else env.CI = ci;
		const r = spawnSync(path.join(ROOT, '.ci', 'run'), { cwd: os.tmpdir(), env, encoding: 'utf8' });
		expect(r.stderr).toBe('');
		expect(r.status).toBe(0);
		expect(r.stdout.trim()).toBe(`npm test in ${ROOT} with CI=true`);
	},
);
