// Test-only. Checks a node saved by an older release against today's node description: what
// n8n would lose or misread when it opens that workflow (CONTRIBUTING.md, "Saved workflows and
// typeVersion"). Display rules are n8n-workflow's own (displayParameter, displayParameterPath,
// getNodeParameters, getNodeParametersIssues), so `displayOptions` count as n8n applies them.
/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
import {
	NodeHelpers,
	type INode,
	type INodeParameters,
	type INodeProperties,
	type INodePropertyCollection,
	type INodePropertyOptions,
	type INodeType,
	type INodeTypeDescription,
	type IVersionedNodeType,
	type NodeParameterValueType,
} from 'n8n-workflow';
import { isDeepStrictEqual } from 'node:util';

export interface SavedNode {
	name: string;
	type: string;
	typeVersion: number;
	parameters: INodeParameters;
}

const isExpression = (v: unknown) => typeof v === 'string' && v.startsWith('=');
const isObject = (v: unknown): v is Record<string, unknown> =>
	typeof v === 'object' && v !== null && !Array.isArray(v);

/** The description n8n uses for a saved node's typeVersion, or why there is none. */
export function descriptionFor(
	nodeType: INodeType | IVersionedNodeType,
	typeVersion: number,
): INodeTypeDescription | string {
	const description = NodeHelpers.getVersionedNodeType(nodeType, typeVersion).description;
	const versions = ([] as number[]).concat(description.version);
	if (!versions.includes(typeVersion))
		return `typeVersion ${typeVersion} is gone (the node has ${versions.join(', ')}): keep the old version`;
	return description;
}

/** The saved node being checked: its values (defaults filled in), typeVersion and description. */
interface Scope {
	root: INodeParameters;
	node: Pick<INode, 'typeVersion'>;
	description: INodeTypeDescription;
}

/** Problems of one saved value against the property n8n displays for it (empty: none). */
function checkValue(
	where: string,
	property: INodeProperties,
	value: unknown,
	path: string,
	scope: Scope,
): string[] {
	if (isExpression(value)) return [];
	const type = property.type;
	if (type === 'options' || type === 'multiOptions') {
		if (property.typeOptions?.loadOptionsMethod || property.typeOptions?.loadOptions) return [];
		const allowed = (property.options as INodePropertyOptions[]).map((o) => o.value);
		const values = type === 'multiOptions' && Array.isArray(value) ? value : [value];
		return values
			.filter((v) => !allowed.some((a) => isDeepStrictEqual(a, v)))
			.map(
				(v) =>
					`${where}: saved value ${JSON.stringify(v)} is no longer offered (allowed: ${allowed.map((a) => JSON.stringify(a)).join(', ')})`,
			);
	}
	if (type === 'boolean' && typeof value !== 'boolean')
		return [`${where}: saved ${JSON.stringify(value)} is not a boolean`];
	if (type === 'number') {
		if (typeof value !== 'number')
			return [`${where}: saved ${JSON.stringify(value)} is not a number`];
		const { minValue, maxValue } = property.typeOptions ?? {};
		if (typeof minValue === 'number' && value < minValue)
			return [`${where}: saved ${value} is below the minimum ${minValue}`];
		if (typeof maxValue === 'number' && value > maxValue)
			return [`${where}: saved ${value} is above the maximum ${maxValue}`];
		return [];
	}
	if (type === 'string') {
		const values = property.typeOptions?.multipleValues && Array.isArray(value) ? value : [value];
		return values.some((v) => typeof v !== 'string')
			? [`${where}: saved ${JSON.stringify(value)} is not text`]
			: [];
	}
	if (type === 'collection') {
		if (!isObject(value)) return [`${where}: saved ${JSON.stringify(value)} is not a collection`];
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
		if (!isObject(value)) return [`${where}: saved ${JSON.stringify(value)} is not a collection`];
		return Object.entries(value).flatMap(([group, entries]) => {
			const option = (property.options as INodePropertyCollection[]).find((o) => o.name === group);
			if (!option) return [`${where}.${group}: no such group any more (renamed or removed)`];
			const list = Array.isArray(entries) ? entries : [entries];
			return list.flatMap((entry, i) =>
				isObject(entry)
					? Object.entries(entry).flatMap(([key, v]) =>
							checkKey(
								`${where}.${group}[${i}].${key}`,
								option.values,
								key,
								v,
								`${path}.${property.name}.${group}[${i}]`,
								scope,
							),
						)
					: [`${where}.${group}[${i}]: not an entry`],
			);
		});
	}
	return [];
}

/**
 * One saved key among the properties of its level: known, displayed for the saved values
 * (collections' children: with paths, `/x` read from the node's root), and its value allowed.
 */
function checkKey(
	where: string,
	candidates: INodeProperties[],
	key: string,
	value: unknown,
	path: string,
	scope: Scope,
): string[] {
	const { root, node, description } = scope;
	const named = candidates.filter((p) => p.name === key);
	if (named.length === 0) return [`${where}: unknown parameter (renamed or removed)`];
	const shown = named.filter((p) =>
		path === ''
			? NodeHelpers.displayParameter(root, p, node, description)
			: NodeHelpers.displayParameterPath(root, p, path.slice(1), node, description),
	);
	if (shown.length === 0)
		return [
			`${where}: no longer displayed for the saved values, so n8n drops it (displayOptions changed)`,
		];
	// Several displayed definitions of one name (never the case today): any that accepts it will do.
	const results = shown.map((p) => checkValue(where, p, value, path, scope));
	return results.find((r) => r.length === 0) ?? results[0];
}

/** Everything today's description would lose or misread of a saved node (empty: nothing). */
export function savedNodeProblems(
	saved: SavedNode,
	nodeType: INodeType | IVersionedNodeType,
): string[] {
	const description = descriptionFor(nodeType, saved.typeVersion);
	if (typeof description === 'string') return [`${saved.name}: ${description}`];
	const node = { typeVersion: saved.typeVersion };
	// What n8n keeps when it opens the node (the editor's own resolution, defaults added): display
	// rules read the defaults of what was not saved (a saved workflow omits default values).
	const kept =
		NodeHelpers.getNodeParameters(
			description.properties,
			saved.parameters,
			true,
			false,
			node,
			description,
		) ?? {};
	const scope: Scope = { root: { ...kept, ...saved.parameters }, node, description };
	const problems = Object.entries(saved.parameters).flatMap(([key, value]) => {
		const found = checkKey(`${saved.name}: ${key}`, description.properties, key, value, '', scope);
		if (found.length || isDeepStrictEqual(kept[key], value as NodeParameterValueType)) return found;
		return [
			`${saved.name}: ${key}: n8n resolves the saved ${JSON.stringify(value)} to ${JSON.stringify(kept[key])}`,
		];
	});
	// A parameter added without a usable default (a new required field) flags the old workflow.
	const issues = NodeHelpers.getNodeParametersIssues(
		description.properties,
		{
			id: 'saved',
			name: saved.name,
			type: saved.type,
			typeVersion: saved.typeVersion,
			position: [0, 0],
			parameters: kept,
		},
		description,
	);
	for (const [key, messages] of Object.entries(issues?.parameters ?? {}))
		problems.push(
			`${saved.name}: ${key}: ${messages.join(' ')} (a parameter added without a default that keeps the old behaviour)`,
		);
	return [...new Set(problems)];
}
