// n8n before 2.34.4 (n8n-workflow before 2.34.2) cannot resolve a node's parameters when a
// `displayOptions` rule names something that is neither a parameter of the same level nor a root
// path (`/name`): every workflow with the node then fails to activate or run with "Could not
// resolve parameter dependencies. Max iterations reached!" (seen on n8n 2.14.2 with
// 'options.downloadFiles'). The package supports n8n from 2.14.2 (docs/compatibility.md), so
// its panels keep to what those versions resolve; the compat layer runs them there.
import { NodeHelpers, type INodeProperties, type INodeTypeDescription } from 'n8n-workflow';

import { MediaGeneration } from '../../../nodes/MediaGeneration/MediaGeneration.node';
import { MediaGenerationTrigger } from '../../../nodes/MediaGenerationTrigger/MediaGenerationTrigger.node';

/** Every displayOptions key that old n8n cannot resolve, as `<path>: <key>`. */
function unresolvable(properties: INodeProperties[], path = ''): string[] {
	const names = new Set(properties.map((p) => p.name));
	return properties.flatMap((p) => {
		const keys = Object.values(p.displayOptions ?? {}).flatMap((rule) =>
			Object.keys((rule ?? {}) as object),
		);
		const bad = keys
			.filter((k) => !names.has(k) && !k.startsWith('/') && !k.startsWith('@'))
			.map((k) => `${path}${p.name}: ${k}`);
		const children =
			p.type === 'collection'
				? unresolvable(p.options as INodeProperties[], `${path}${p.name}.`)
				: p.type === 'fixedCollection'
					? (p.options as Array<{ name: string; values: INodeProperties[] }>).flatMap((o) =>
							unresolvable(o.values, `${path}${p.name}.${o.name}.`),
						)
					: [];
		return [...bad, ...children];
	});
}

test.each([
	['Media Generation', new MediaGeneration().description],
	['Media Generation Trigger', new MediaGenerationTrigger().description],
])(
	'%s: every displayOptions rule names a parameter of its level or a root path',
	(_name, description) => {
		expect(unresolvable(description.properties)).toEqual([]);
	},
);

test('the files notice shows exactly when the node waits and Download Files is off', () => {
	const description: INodeTypeDescription = new MediaGeneration().description;
	const notice = description.properties.find((p) => p.name === 'videoFilesNotice')!;
	const shown = (values: Record<string, unknown>) =>
		NodeHelpers.displayParameter(
			{ resource: 'video', operation: 'generate', ...values } as never,
			notice,
			{ typeVersion: 1 },
			description,
		);
	expect(shown({ waitForCompletion: true, options: { downloadFiles: false } })).toBe(true);
	expect(shown({ waitForCompletion: true, options: { downloadFiles: true } })).toBe(false);
	expect(shown({ waitForCompletion: true, options: {} })).toBe(false);
	expect(shown({ waitForCompletion: false, options: { downloadFiles: false } })).toBe(false);
});
