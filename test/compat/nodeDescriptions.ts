// Test-only. Checks the nodes of a workflow file against n8n's own node descriptions, as one
// installed n8n version ships them (n8n-nodes-base's dist in the cache of tools/ensure-n8n.js):
// the node type and its typeVersion exist; each saved parameter is a property of that version's
// description, displayed for the node's parameters (show/hide, `@version` conditions included, by
// that version's n8n-workflow NodeHelpers) and kept as saved when n8n resolves the node; options
// values are among the allowed ones; resource locators use one of the property's modes; resource
// mappers use a mapping mode n8n has and match on columns of their schema; required parameters
// are present; the credential is one the node accepts for its parameters. Used by
// test/compat/google-sheets-example.test.ts for examples that no test layer can run.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it loads n8n's own packages from the cache on disk */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import type {
	INodeCredentialDescription,
	INodeParameters,
	INodeProperties,
	INodePropertyCollection,
	INodePropertyOptions,
	INodeTypeDescription,
	NodeHelpers as NodeHelpersType,
} from 'n8n-workflow';

export interface WorkflowNode {
	name: string;
	type: string;
	typeVersion: number;
	parameters: INodeParameters;
	credentials?: Record<string, { id: string; name: string }>;
}

type Helpers = typeof NodeHelpersType;

/** One n8n version's node descriptions, loaded from its install. */
export interface N8nNodes {
	version: string;
	/** The description of `type` at `typeVersion`, or why there is none. */
	describe(type: string, typeVersion: number): INodeTypeDescription | string;
	/** Whether n8n-nodes-base of this version has a credential type of that name. */
	hasCredential(name: string): boolean;
	helpers: Helpers;
}

interface Known {
	[name: string]: { className: string; sourcePath: string };
}

const BASE = 'n8n-nodes-base.';

/** The node descriptions of the n8n installed in `dir` (an n8n-<version> folder of the cache). */
export function loadN8nNodes(dir: string, version: string): N8nNodes {
	const baseDir = path.join(dir, 'node_modules', 'n8n-nodes-base');
	// Node's own require, from n8n-nodes-base's folder: its n8n-workflow is that version's.
	const req = createRequire(path.join(baseDir, 'package.json'));
	const known = JSON.parse(
		fs.readFileSync(path.join(baseDir, 'dist', 'known', 'nodes.json'), 'utf8'),
	) as Known;
	const credentials = JSON.parse(
		fs.readFileSync(path.join(baseDir, 'dist', 'known', 'credentials.json'), 'utf8'),
	) as Known;
	const helpers = (req('n8n-workflow') as { NodeHelpers: Helpers }).NodeHelpers;
	const cache = new Map<string, unknown>();
	return {
		version,
		helpers,
		hasCredential: (name) => name in credentials,
		describe(type, typeVersion) {
			const name = type.startsWith(BASE) ? type.slice(BASE.length) : undefined;
			const entry = name === undefined ? undefined : known[name];
			if (!entry)
				return `node type ${type} does not exist in n8n ${version} (n8n-nodes-base has no ${name ?? type})`;
			if (!cache.has(type)) {
				const mod = req(path.join(baseDir, entry.sourcePath)) as Record<string, new () => unknown>;
				cache.set(type, new mod[entry.className]());
			}
			const nodeType = cache.get(type) as {
				description: INodeTypeDescription;
				nodeVersions?: Record<string, { description: INodeTypeDescription }>;
			};
			const versions = nodeType.nodeVersions
				? Object.keys(nodeType.nodeVersions).map(Number)
				: ([] as number[]).concat(nodeType.description.version);
			const description = nodeType.nodeVersions
				? nodeType.nodeVersions[typeVersion]?.description
				: nodeType.description;
			if (!versions.includes(typeVersion) || !description)
				return `typeVersion ${typeVersion} of ${type} does not exist in n8n ${version} (versions: ${versions.join(', ')})`;
			if (!([] as number[]).concat(description.version).includes(typeVersion))
				return `typeVersion ${typeVersion} of ${type} is not in its description's versions in n8n ${version} (${String(description.version)})`;
			return description;
		},
	};
}

const isExpression = (v: unknown) => typeof v === 'string' && v.startsWith('=');
const isObject = (v: unknown): v is Record<string, unknown> =>
	typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (values: unknown[]) => values.map((v) => JSON.stringify(v)).join(', ');
/** The mapping modes of n8n's resource mapper (n8n-workflow's ResourceMapperValue). */
const MAPPING_MODES = ['defineBelow', 'autoMapInputData'];

interface Scope {
	/** The node's parameters, n8n's defaults for the unsaved ones filled in. */
	root: INodeParameters;
	node: { typeVersion: number };
	description: INodeTypeDescription;
	helpers: Helpers;
}

/** Problems of one value against the property n8n displays for it. */
function checkValue(
	where: string,
	property: INodeProperties,
	value: unknown,
	path: string,
	scope: Scope,
): string[] {
	if (isExpression(value)) {
		return property.noDataExpression
			? [`${where}: an expression, which this parameter does not take`]
			: [];
	}
	const type = property.type;
	if (type === 'options' || type === 'multiOptions') {
		// Values of dynamic options (a table's columns, say) come from the account: not checkable here.
		if (property.typeOptions?.loadOptionsMethod || property.typeOptions?.loadOptions) return [];
		const allowed = (property.options as INodePropertyOptions[]).map((o) => o.value);
		const values = type === 'multiOptions' && Array.isArray(value) ? value : [value];
		return values
			.filter((v) => !allowed.some((a) => isDeepStrictEqual(a, v)))
			.map(
				(v) => `${where}: ${JSON.stringify(v)} is not an allowed value (allowed: ${list(allowed)})`,
			);
	}
	if (type === 'boolean')
		return typeof value === 'boolean'
			? []
			: [`${where}: ${JSON.stringify(value)} is not a boolean`];
	if (type === 'number') {
		if (typeof value !== 'number') return [`${where}: ${JSON.stringify(value)} is not a number`];
		const { minValue, maxValue } = property.typeOptions ?? {};
		if (typeof minValue === 'number' && value < minValue)
			return [`${where}: ${value} is below the minimum ${minValue}`];
		if (typeof maxValue === 'number' && value > maxValue)
			return [`${where}: ${value} is above the maximum ${maxValue}`];
		return [];
	}
	if (type === 'string') {
		const values = property.typeOptions?.multipleValues && Array.isArray(value) ? value : [value];
		return values.some((v) => typeof v !== 'string')
			? [`${where}: ${JSON.stringify(value)} is not text`]
			: [];
	}
	if (type === 'resourceLocator') {
		if (!isObject(value) || value.__rl !== true)
			return [
				`${where}: ${JSON.stringify(value)} is not a resource locator ({ __rl: true, mode, value })`,
			];
		const modes = (property.modes ?? []).map((m) => m.name);
		if (modes.length && !modes.includes(value.mode as string))
			return [
				`${where}: mode ${JSON.stringify(value.mode)} is not an allowed mode (allowed: ${list(modes)})`,
			];
		return typeof value.value === 'string' || typeof value.value === 'number'
			? []
			: [`${where}: value ${JSON.stringify(value.value)} is not text`];
	}
	if (type === 'resourceMapper') return checkResourceMapper(where, property, value);
	if (type === 'collection') {
		if (!isObject(value)) return [`${where}: ${JSON.stringify(value)} is not a collection`];
		return Object.entries(value).flatMap(([key, v]) =>
			checkKey(
				`${where}.${key}`,
				property.options as INodeProperties[],
				key,
				v,
				`${path}.${property.name}`,
				scope,
			),
		);
	}
	if (type === 'fixedCollection') {
		if (!isObject(value)) return [`${where}: ${JSON.stringify(value)} is not a collection`];
		const groups = property.options as INodePropertyCollection[];
		return Object.entries(value).flatMap(([group, entries]) => {
			const option = groups.find((o) => o.name === group);
			if (!option)
				return [
					`${where}.${group}: not a group of this parameter (groups: ${list(groups.map((g) => g.name))})`,
				];
			const many = property.typeOptions?.multipleValues === true;
			if (many !== Array.isArray(entries))
				return [
					`${where}.${group}: ${many ? 'a list of entries expected' : 'one entry expected, not a list'}`,
				];
			return (many ? (entries as unknown[]) : [entries]).flatMap((entry, i) => {
				const at = many ? `${group}[${i}]` : group;
				return isObject(entry)
					? Object.entries(entry).flatMap(([key, v]) =>
							checkKey(
								`${where}.${at}.${key}`,
								option.values,
								key,
								v,
								`${path}.${property.name}.${at}`,
								scope,
							),
						)
					: [`${where}.${at}: not an entry`];
			});
		});
	}
	return [];
}

/** A resource mapper's value: a mapping mode n8n has, values and matching columns of its schema. */
function checkResourceMapper(where: string, property: INodeProperties, value: unknown): string[] {
	if (!isObject(value))
		return [`${where}: ${JSON.stringify(value)} is not a resource mapper value`];
	const mapper = property.typeOptions?.resourceMapper;
	const modes = mapper?.supportAutoMap === false ? ['defineBelow'] : MAPPING_MODES;
	const problems: string[] = [];
	if (!modes.includes(value.mappingMode as string))
		problems.push(
			`${where}.mappingMode: ${JSON.stringify(value.mappingMode)} is not an allowed value (allowed: ${list(modes)})`,
		);
	const schema = Array.isArray(value.schema) ? (value.schema as Array<{ id?: unknown }>) : [];
	const ids = schema.map((f) => f.id);
	if (!Array.isArray(value.schema) || ids.some((id) => typeof id !== 'string'))
		problems.push(`${where}.schema: a list of columns, each with its id, expected`);
	if (value.mappingMode === 'defineBelow') {
		if (!isObject(value.value)) problems.push(`${where}.value: the values of the columns expected`);
		else
			for (const key of Object.keys(value.value).filter((k) => !ids.includes(k)))
				problems.push(`${where}.value.${key}: not a column of its schema (columns: ${list(ids)})`);
	}
	const matching = value.matchingColumns;
	if (!Array.isArray(matching)) problems.push(`${where}.matchingColumns: a list expected`);
	else {
		for (const key of matching.filter((k) => !ids.includes(k)))
			problems.push(
				`${where}.matchingColumns: ${JSON.stringify(key)} is not a column of its schema (columns: ${list(ids)})`,
			);
		// The update modes find the row by these columns (Google Sheets' Update Row throws without one).
		if ((mapper?.mode === 'update' || mapper?.mode === 'upsert') && matching.length === 0)
			problems.push(
				`${where}.matchingColumns: empty, and this operation finds the row by them (columns: ${list(ids)})`,
			);
		if (mapper?.multiKeyMatch === false && matching.length > 1)
			problems.push(
				`${where}.matchingColumns: ${matching.length} columns, this node matches on one`,
			);
	}
	return problems;
}

/** One key among the properties of its level: known, displayed for the node's values, allowed. */
function checkKey(
	where: string,
	candidates: INodeProperties[],
	key: string,
	value: unknown,
	path: string,
	scope: Scope,
): string[] {
	const { root, node, description, helpers } = scope;
	const shownFor = (p: INodeProperties) =>
		path === ''
			? helpers.displayParameter(root, p, node, description)
			: helpers.displayParameterPath(root, p, path.slice(1), node, description);
	const named = candidates.filter((p) => p.name === key);
	if (named.length === 0) {
		const names = [...new Set(candidates.filter(shownFor).map((p) => p.name))];
		return [
			`${where}: not a parameter of ${description.name} ${node.typeVersion} here (its parameters: ${names.join(', ')})`,
		];
	}
	const shown = named.filter(shownFor);
	if (shown.length === 0)
		return [
			`${where}: not displayed for the node's parameters, so n8n drops it (displayOptions: ${named.map((p) => JSON.stringify(p.displayOptions)).join(' or ')})`,
		];
	const results = shown.map((p) => checkValue(where, p, value, path, scope));
	return results.find((r) => r.length === 0) ?? results[0];
}

/** Whether n8n's resolved value keeps every saved value (defaults it adds are no loss). */
function keeps(resolved: unknown, saved: unknown): boolean {
	if (Array.isArray(saved))
		return (
			Array.isArray(resolved) &&
			resolved.length === saved.length &&
			saved.every((v, i) => keeps(resolved[i], v))
		);
	if (isObject(saved))
		return (
			isObject(resolved) &&
			Object.entries(saved).every(([k, v]) => k in resolved && keeps(resolved[k], v))
		);
	return isDeepStrictEqual(resolved, saved);
}

/**
 * Everything n8n `nodes` would refuse, drop or misread in a saved node (empty: nothing).
 * `placeholders`: the required parameters the user sets in the editor, left empty on purpose.
 */
export function nodeProblems(
	saved: WorkflowNode,
	nodes: N8nNodes,
	placeholders: string[] = [],
): string[] {
	const at = `n8n ${nodes.version}, "${saved.name}"`;
	const description = nodes.describe(saved.type, saved.typeVersion);
	if (typeof description === 'string') return [`${at}: ${description}`];
	const { helpers } = nodes;
	const node = { typeVersion: saved.typeVersion };
	const kept =
		helpers.getNodeParameters(
			description.properties,
			saved.parameters,
			true,
			false,
			node,
			description,
		) ?? {};
	// Display rules read what n8n resolved (defaults filled in, in collection entries too).
	const scope: Scope = { root: { ...saved.parameters, ...kept }, node, description, helpers };
	const problems = Object.entries(saved.parameters).flatMap(([key, value]) => {
		const found = checkKey(`${at}: ${key}`, description.properties, key, value, '', scope);
		if (found.length || keeps(kept[key], value)) return found;
		return [`${at}: ${key}: n8n resolves ${JSON.stringify(value)} to ${JSON.stringify(kept[key])}`];
	});

	// Required parameters: saved, and not flagged by n8n's own check (but the placeholders).
	const shownRequired = description.properties.filter(
		(p) => p.required && helpers.displayParameter(scope.root, p, node, description),
	);
	for (const p of shownRequired)
		if (!(p.name in saved.parameters)) problems.push(`${at}: ${p.name}: required, and not set`);
	const issues = helpers.getNodeParametersIssues(
		description.properties,
		{
			id: 'checked',
			name: saved.name,
			type: saved.type,
			typeVersion: saved.typeVersion,
			position: [0, 0],
			parameters: kept,
		},
		description,
	);
	for (const [key, messages] of Object.entries(issues?.parameters ?? {}))
		if (!placeholders.includes(key)) problems.push(`${at}: ${key}: ${messages.join(' ')}`);
	for (const key of placeholders)
		if (!issues?.parameters?.[key])
			problems.push(`${at}: ${key}: named a placeholder the user sets, but it is set already`);

	// Credentials: each a type the node accepts for these parameters, and the required ones there.
	const accepted = (description.credentials ?? []) as INodeCredentialDescription[];
	const shownCredentials = accepted.filter((c) =>
		helpers.displayParameter(scope.root, c, node, description),
	);
	for (const name of Object.keys(saved.credentials ?? {})) {
		if (!shownCredentials.some((c) => c.name === name))
			problems.push(
				`${at}: credential ${name} is not one this node takes for its parameters (allowed: ${list(shownCredentials.map((c) => c.name))}; all: ${list(accepted.map((c) => c.name))})`,
			);
		else if (!nodes.hasCredential(name))
			problems.push(`${at}: credential type ${name} does not exist in n8n ${nodes.version}`);
	}
	for (const c of shownCredentials.filter((c) => c.required && !saved.credentials?.[c.name]))
		problems.push(`${at}: credential ${c.name} is required, and not set`);
	return [...new Set(problems)];
}
