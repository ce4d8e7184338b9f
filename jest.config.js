// One jest project per test layer; tools/run.js runs them in order under Node 24. ts-jest only
// transpiles (isolatedModules in tsconfig.test.json): `tsc -p tsconfig.test.json` type-checks.
const transform = {
	'^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
};
const base = {
	testEnvironment: 'node',
	transform,
	moduleFileExtensions: ['ts', 'js', 'json'],
	// The build's dist/package.json would collide with ./package.json in jest's module map (same
	// name). Only the map skips dist/: tests that load the build by path still can.
	modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

module.exports = {
	// Longest files first, by jest's cached times or, on a fresh clone, by the known ones there.
	testSequencer: require('node:path').join(__dirname, 'test', 'sequencer.js'),
	projects: [
		{
			...base,
			displayName: 'unit',
			// Schemas, mappings, schedules, the trigger's parsing, and the simulator's contract.
			testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/simulator/**/*.test.ts'],
		},
		{
			...base,
			displayName: 'engine',
			// Real workflows through n8n-core's WorkflowExecute against the simulator over HTTP.
			testMatch: ['<rootDir>/test/engine/**/*.test.ts'],
		},
		{
			...base,
			displayName: 'soak',
			testMatch: ['<rootDir>/test/soak/**/*.test.ts'],
		},
		{
			...base,
			displayName: 'e2e',
			// A real n8n process with the package installed as a community package.
			testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
		},
		{
			...base,
			displayName: 'agent',
			// The node as an AI Agent tool in a real n8n, with a scripted OpenAI-compatible model.
			testMatch: ['<rootDir>/test/agent/**/*.test.ts'],
		},
		{
			...base,
			displayName: 'release',
			// The release rehearsal: Verdaccio, npm publish and install, upgrade and uninstall in a real n8n.
			testMatch: ['<rootDir>/test/release/**/*.test.ts'],
		},
		{
			...base,
			displayName: 'compat',
			// The examples and saved workflows on the oldest n8n the package supports.
			testMatch: ['<rootDir>/test/compat/**/*.test.ts'],
		},
		{
			...base,
			displayName: 'editor',
			// n8n's editor in headless Chromium (Debian's), driven by playwright-core.
			testMatch: ['<rootDir>/test/editor/**/*.test.ts'],
		},
		{
			...base,
			displayName: 'queue',
			// n8n in queue mode: main, workers and webhook processes with Redis and PostgreSQL.
			testMatch: ['<rootDir>/test/queue/**/*.test.ts'],
		},
	],
};
