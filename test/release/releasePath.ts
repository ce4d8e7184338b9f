// Test-only. The environment of the one `npm publish` this package allows: publish.yml's Release
// step (`npm run release`, i.e. `n8n-node release` under GitHub Actions), read from the workflow
// file so that the tests and the rehearsal publish exactly as the release does. `n8n-node release`
// adds RELEASE_MODE=true and NPM_CONFIG_PROVENANCE=true to it; provenance needs GitHub's OIDC
// token, so it is the one part left out here. Values that come from secrets are left out too.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: reads the workflow file under plain Node, never inside n8n (the package ships dist/ only) */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { parse } from 'yaml';

export const PUBLISH_YML = path.resolve(
	__dirname,
	'..',
	'..',
	'.github',
	'workflows',
	'publish.yml',
);

interface Step {
	name?: string;
	run?: string;
	env?: Record<string, string>;
}

/** publish.yml's step that runs `npm run release`. */
export function releaseStep(): Step {
	const wf = parse(fs.readFileSync(PUBLISH_YML, 'utf8')) as {
		jobs: Record<string, { steps: Step[] }>;
	};
	const steps = Object.values(wf.jobs).flatMap((j) => j.steps);
	const found = steps.filter((s) =>
		s.run?.split('\n').some((line) => line.trim() === 'npm run release'),
	);
	if (found.length !== 1)
		throw new Error(`publish.yml has ${found.length} steps running npm run release, not 1`);
	return found[0];
}

/** What `npm publish` sees on the release path, secrets and provenance aside. */
export function releasePublishEnv(): Record<string, string> {
	const env = Object.fromEntries(
		Object.entries(releaseStep().env ?? {}).filter(([, value]) => !String(value).includes('${{')),
	);
	return { ...env, RELEASE_MODE: 'true' };
}
