import type { ModelDefinition } from './types';

type Limits = NonNullable<ModelDefinition['referenceImages']>;

/** Types and size the spec allows for reference images (documented for vidmodel-1.5-pro). */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
/** "10.0 MB" read as MiB: a pre-check must not reject a file the service would take. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
export const DOCUMENTED_LIMITS: Limits = { types: IMAGE_TYPES, maxBytes: MAX_IMAGE_BYTES };
