// examples/table-rows-to-videos-google-sheets.json cannot run here: its Google Sheets nodes need
// a Google account (test/e2e/savedWorkflows.ts NOT_RUN_HERE). So each of its nodes is checked
// against n8n's own node descriptions of both n8n versions the project tests, N8N_VERSION and
// N8N_OLDEST_VERSION (tools/ensure-n8n.js; the compat layer's prepare step installs both): the
// node type and typeVersion exist, every parameter is one the node has and displays for the
// node's parameters, its values are allowed, the required ones are set, the credential is one the
// node takes (test/compat/nodeDescriptions.ts). "The check itself" shows it fails on a wrong
// operation, an unknown parameter and a typeVersion that does not exist. No n8n is started.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it reads the example and n8n's installed packages from disk */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { N8N_OLDEST_VERSION, N8N_VERSION, n8nDir, n8nInstalled } from '../../tools/ensure-n8n';
import { loadN8nNodes, nodeProblems, type N8nNodes, type WorkflowNode } from './nodeDescriptions';

const ROOT = path.join(__dirname, '..', '..');
const FILE = 'table-rows-to-videos-google-sheets.json';
const workflow = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', FILE), 'utf8')) as {
	nodes: WorkflowNode[];
};
const GOOGLE_SHEETS = 'n8n-nodes-base.googleSheets';
const DATA_TABLE = 'n8n-nodes-base.dataTable';
/** The Document the user picks in the editor, left empty in both Google Sheets nodes. */
const PLACEHOLDERS: Record<string, string[]> = {
	[GOOGLE_SHEETS]: ['documentId'],
};
const node = (name: string) => workflow.nodes.find((n) => n.name === name)!;
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const problems = (n: WorkflowNode, nodes: N8nNodes) =>
	nodeProblems(n, nodes, PLACEHOLDERS[n.type] ?? []);

const VERSIONS = [N8N_VERSION, N8N_OLDEST_VERSION];
const missing = VERSIONS.filter((v) => !n8nInstalled(v, process.env));
const loaded = new Map<string, N8nNodes>();
const nodesOf = (version: string) => {
	if (!loaded.has(version))
		loaded.set(version, loadN8nNodes(n8nDir(version, process.env), version));
	return loaded.get(version)!;
};

/** A missing install fails under CI=true; elsewhere its tests are skipped, the title saying why. */
const runs = (version: string) => !missing.includes(version) || process.env.CI === 'true';
const notInstalled = (version: string) =>
	`n8n ${version} is not installed in ${n8nDir(version, process.env)}: \`node tools/run.js test compat\` installs it (skipped; CI=true fails)`;

describe.each(VERSIONS)(`examples/${FILE} against the node descriptions of n8n %s`, (version) => {
	if (!runs(version)) {
		it.skip(notInstalled(version), () => undefined);
		return;
	}
	it('is installed in the cache (the compat layer prepares it; CI=true never skips)', () => {
		expect({ version, installed: n8nInstalled(version, process.env) }).toEqual({
			version,
			installed: true,
		});
	});

	it('has its Google Sheets and Data Table nodes, the ones checked here', () => {
		expect(workflow.nodes.filter((n) => n.type === GOOGLE_SHEETS).map((n) => n.name)).toEqual([
			'Rows of the Sheet',
			'Results into the Sheet',
		]);
		expect(workflow.nodes.filter((n) => n.type === DATA_TABLE).map((n) => n.name)).toEqual(
			expect.arrayContaining(['Sheet Rows into the Table', 'Rows of the Table']),
		);
	});

	// Every node of the example, the table job's own included (no layer runs the Data Table job
	// on the oldest version: this is its only check there).
	it.each(workflow.nodes.map((n) => [n.name, n] as const))(
		'"%s": type, typeVersion, every parameter, its values, the required ones and the credential are n8n\'s',
		(_name, n) => {
			expect(problems(n, nodesOf(version))).toEqual([]);
		},
	);

	it('the Google Sheets nodes read and update a sheet, the update matching on sku, with the OAuth2 credential', () => {
		const read = node('Rows of the Sheet');
		const update = node('Results into the Sheet');
		expect([read.parameters.operation ?? 'read', update.parameters.operation]).toEqual([
			'read',
			'update',
		]);
		const columns = update.parameters.columns as { matchingColumns: string[]; value: object };
		expect(columns.matchingColumns).toEqual(['sku']);
		expect(Object.keys(columns.value)).toEqual(['sku', 'status', 'task_id', 'video_file', 'error']);
		for (const n of [read, update])
			expect(Object.keys(n.credentials ?? {})).toEqual(['googleSheetsOAuth2Api']);
	});
});

describe('the check itself', () => {
	// On either version (the first installed): the check is the same code for both.
	const version = VERSIONS.find(runs);
	const nodes = () => nodesOf(version!);
	const check = version ? it : it.skip;

	check(
		'fails on an operation the node does not have, naming the node, the parameter and the allowed values',
		() => {
			const wrong = copy(node('Results into the Sheet'));
			wrong.parameters.operation = 'updateRow';
			expect(problems(wrong, nodes())).toContainEqual(
				expect.stringMatching(
					/"Results into the Sheet": operation: "updateRow" is not an allowed value \(allowed: .*"update".*\)/,
				),
			);
		},
	);

	check('fails on a parameter the node does not have', () => {
		const wrong = copy(node('Sheet Rows into the Table'));
		wrong.parameters.matchColumn = 'sku';
		expect(problems(wrong, nodes())).toEqual([
			expect.stringMatching(
				/"Sheet Rows into the Table": matchColumn: not a parameter of dataTable 1.1 here \(its parameters: .*filters.*\)/,
			),
		]);
	});

	check('fails on a typeVersion that does not exist, naming the versions there are', () => {
		const wrong = copy(node('Rows of the Sheet'));
		wrong.typeVersion = 4.9;
		expect(problems(wrong, nodes())).toEqual([
			expect.stringMatching(
				/"Rows of the Sheet": typeVersion 4.9 of n8n-nodes-base.googleSheets does not exist .*\(versions: .*4\.7\)/,
			),
		]);
	});

	check(
		'fails on a parameter hidden for the others (Update Row without a sheet drops its columns), a wrong mode, a credential the node does not take',
		() => {
			const hidden = copy(node('Results into the Sheet'));
			(hidden.parameters.sheetName as { value: string }).value = '';
			expect(problems(hidden, nodes())).toContainEqual(
				expect.stringMatching(
					/"Results into the Sheet": columns: not displayed for the node's parameters/,
				),
			);
			const mode = copy(node('Rows of the Sheet'));
			(mode.parameters.documentId as { mode: string }).mode = 'title';
			expect(problems(mode, nodes())).toContainEqual(
				expect.stringMatching(
					/documentId: mode "title" is not an allowed mode \(allowed: "list", "url", "id"\)/,
				),
			);
			const credential = copy(node('Rows of the Sheet'));
			credential.credentials = { googleDriveOAuth2Api: { id: '4', name: 'Google Drive account' } };
			expect(problems(credential, nodes())).toEqual(
				expect.arrayContaining([
					expect.stringMatching(
						/credential googleDriveOAuth2Api is not one this node takes .*allowed: "googleSheetsOAuth2Api"/,
					),
					expect.stringMatching(/credential googleSheetsOAuth2Api is required, and not set/),
				]),
			);
			const unmatched = copy(node('Results into the Sheet'));
			(unmatched.parameters.columns as { matchingColumns: string[] }).matchingColumns = [];
			expect(problems(unmatched, nodes())).toEqual([
				expect.stringMatching(
					/columns\.matchingColumns: empty, and this operation finds the row by them/,
				),
			]);
		},
	);
});
