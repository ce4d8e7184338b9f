import type { INodeProperties } from 'n8n-workflow';

import type { ModelDefinition } from './types';

type Limits = NonNullable<ModelDefinition['referenceImages']>;

/** Types and size the spec allows for reference images (documented for vidmodel-1.5-pro). */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
/** "10.0 MB" read as MiB: a pre-check must not reject a file the service would take. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
export const DOCUMENTED_LIMITS: Limits = { types: IMAGE_TYPES, maxBytes: MAX_IMAGE_BYTES };

/** Where a model's reference images come from: the panel's source option values. */
export const IMAGE_SOURCE_URLS = 'url';
export const IMAGE_SOURCE_BINARY = 'binary';

/** What the panels say of a binary reference image (the facts are in binaryImageLinks.ts). */
export const BINARY_IMAGE_HINT =
	'A JPEG, PNG or WebP of at most 10 MB. n8n gives the service a temporary link to it (n8n must be reachable at its public URL, WEBHOOK_URL).';

/**
 * The source option of a model whose image_urls the panel fills. Default URLs: workflows saved
 * before it existed keep their URLs. Hidden in the AI Agent tool, which passes URLs.
 */
export function imageSourceProperty(name: string, displayName: string): INodeProperties {
	return {
		displayName,
		name,
		type: 'options',
		noDataExpression: true,
		required: true,
		options: [
			{ name: 'URLs', value: IMAGE_SOURCE_URLS, description: 'Public URLs of the images' },
			{
				name: 'Binary Files',
				value: IMAGE_SOURCE_BINARY,
				description:
					'Files of the input item: an upload, a download, an image generated earlier in the workflow',
			},
		],
		default: IMAGE_SOURCE_URLS,
		displayOptions: { hide: { '@tool': [true] } },
	};
}
