/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it reads the package's sources, n8n-workflow's type declarations and docs/ from disk */
// docs/compatibility.md's table of n8n APIs × versions names exactly the n8n APIs the nodes and
// credentials call (issue 43): a call added to the code without a row, or a row left for a call
// the code no longer makes, fails here. "Calls" are found the way a reader would grep them: a
// method of n8n's node contexts or helpers (as n8n-workflow declares them) called as `.name(`,
// a runtime import from n8n-workflow, and the `$` variables the code evaluates in expressions.
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The interfaces n8n hands a node's code: its contexts and their helpers. */
const CONTEXT_TYPES =
	/^(?:export )?(?:interface|type) (?:\w*HelperFunctions|SchedulingFunctions|FunctionsBase|BaseExecutionFunctions|IExecuteFunctions|IHookFunctions|IWebhookFunctions)\b/;

function contextMethods(): Set<string> {
	const lines = read('node_modules/n8n-workflow/dist/cjs/interfaces.d.ts').split('\n');
	const names = new Set<string>();
	let inside = false;
	for (const line of lines) {
		if (CONTEXT_TYPES.test(line)) inside = true;
		else if (/^(?:export |type |interface |declare )/.test(line)) inside = false;
		if (!inside) continue;
		const method = /^\s+([a-zA-Z]\w*)\??(?:<[^>]*>)?\s*(?:\(|:\s*\(|:\s*<)/.exec(line);
		if (method) names.add(method[1]);
	}
	return names;
}

function packageSources(): string[] {
	const walk = (dir: string): string[] =>
		fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
			const rel = path.join(dir, entry.name);
			if (entry.isDirectory()) return walk(rel);
			return entry.name.endsWith('.ts') ? [rel] : [];
		});
	return [...walk('nodes'), ...walk('credentials')].map(read);
}

/** Every n8n API the package's code uses, by the three rules above. */
function apisTheCodeUses(): Set<string> {
	const methods = contextMethods();
	const used = new Set<string>();
	for (const source of packageSources()) {
		for (const call of source.matchAll(/\.\s*([a-zA-Z]\w*)\s*(?:\(|\.call\()/g)) {
			if (methods.has(call[1])) used.add(call[1]);
		}
		for (const imported of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'n8n-workflow'/g)) {
			for (const name of imported[1].split(',').map((n) => n.trim())) {
				if (name && !name.startsWith('type ')) used.add(name);
			}
		}
		for (const expression of source.matchAll(/evaluateExpression\(\s*'\{\{\s*(\$[\w.]+)/g)) {
			used.add(expression[1]);
		}
	}
	return used;
}

/** The first column's `names` (outside parentheses) in the marked table of docs/compatibility.md. */
function apisTheTableNames(): Set<string> {
	const doc = read('docs/compatibility.md');
	const block = /<!-- n8n-apis:start -->([\s\S]*?)<!-- n8n-apis:end -->/.exec(doc);
	if (!block) throw new Error('docs/compatibility.md has no <!-- n8n-apis:start/end --> block');
	const names = new Set<string>();
	for (const row of block[1].split('\n').filter((l) => l.startsWith('| `'))) {
		// Options and remarks in parentheses are not API names.
		const first = row.split('|')[1].replace(/\([^)]*\)/g, '');
		for (const name of first.matchAll(/`([^`]+)`/g)) names.add(name[1]);
	}
	return names;
}

describe('docs/compatibility.md: the n8n APIs table', () => {
	const used = apisTheCodeUses();
	const named = apisTheTableNames();

	it('finds the calls it is meant to find (the grep itself works)', () => {
		for (const api of [
			'putExecutionToWait',
			'createBinarySignedUrl',
			'$execution.resumeUrl',
			'sleep',
		]) {
			expect(used).toContain(api);
		}
	});

	it('has a row for every n8n API the code calls', () => {
		expect([...used].filter((api) => !named.has(api)).sort()).toEqual([]);
	});

	it('has no row for an n8n API the code no longer calls', () => {
		expect([...named].filter((api) => !used.has(api)).sort()).toEqual([]);
	});
});
