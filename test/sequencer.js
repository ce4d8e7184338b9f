// jest's order of test files (jest.config.js, testSequencer): its own, longest first by the
// times of the last run in jest's cache, and for a file it has no time of, the time below. On a
// fresh clone (CI) jest has none and would order by file size: a long file with little text (its
// suite in another module) would then start last while the other workers idle. Seconds from the
// e2e layer of a fresh-clone CI run (2 cores, three files at once, 324606f); only the order
// matters. A file not listed here and not in the cache runs first, as jest does.
'use strict';

const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.resolve(__dirname, '..');

/** Seconds per file, by path from the repository root. */
const KNOWN_SECONDS = {
	'test/e2e/durable-wait.test.ts': 146,
	'test/e2e/callback.test.ts': 121,
	'test/e2e/table-job.test.ts': 112,
	'test/e2e/bench-n8n-quick.test.ts': 90,
	'test/e2e/polling.test.ts': 88,
	'test/e2e/lost-runs.test.ts': 59,
	'test/e2e/saved-workflows.test.ts': 58,
	'test/e2e/learn.test.ts': 56,
	'test/e2e/hostile.test.ts': 35,
	'test/e2e/smoke.test.ts': 18,
	'test/e2e/polling-faults.test.ts': 17,
	'test/e2e/credential-test.test.ts': 11,
};

class KnownTimesSequencer extends Sequencer {
	/** jest's cached time of the file's last run (ms), else the time above. */
	time(test) {
		const cached = super.time(test);
		if (cached != null) return cached;
		const known = KNOWN_SECONDS[path.relative(ROOT, test.path).split(path.sep).join('/')];
		return known === undefined ? undefined : known * 1000;
	}
}

module.exports = KnownTimesSequencer;
