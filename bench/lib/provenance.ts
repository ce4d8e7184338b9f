// What every results file records about where its figures come from: the commit whose code ran,
// whether the measured code differed from it (uncommitted changes under nodes/ or bench/), and the
// command that produced the file. test/unit/docs/figures.test.ts refuses a results file whose
// commit does not hold the code paths it claims to measure.
/* eslint-disable @n8n/community-nodes/no-dangerous-functions, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- benchmark code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

function git(args: string[]): string | undefined {
	try {
		return execFileSync('git', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
			.toString()
			.trim();
	} catch {
		return undefined; // not a git checkout: the file still says when and how
	}
}

export interface Provenance {
	commit: string;
	/** true when nodes/, credentials/ or bench/ (not bench/results/) had uncommitted changes: the code was not the commit's */
	dirty: boolean;
	/** the command as typed, e.g. ["npm", "run", "bench", "--", "--only", "polling"] */
	command: string[];
}

/** `npm run <script> -- <argv>`, as typed. */
export const npmRun = (script: string, argv: string[]) => [
	'npm',
	'run',
	script,
	...(argv.length ? ['--', ...argv] : []),
];

export function provenance(command: string[]): Provenance {
	// results files written earlier and not yet committed are no code: they do not count
	const status = git([
		'status',
		'--porcelain',
		'--',
		'nodes',
		'credentials',
		'bench',
		':(exclude)bench/results',
	]);
	return {
		commit: git(['rev-parse', '--short', 'HEAD']) ?? 'unknown',
		dirty: status === undefined ? false : status.length > 0,
		command,
	};
}
