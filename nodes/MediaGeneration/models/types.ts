import type { IDataObject, INodeProperties } from 'n8n-workflow';
import type { z } from 'zod';

export type MediaKind = 'image' | 'video' | 'music';

/** Reads one parameter of the current item; `fallback` is returned when it is not set. */
export type ParamReader = (name: string, fallback?: unknown) => unknown;

/**
 * One model of the service. Each model is one file under models/ exporting one of these, listed
 * in models/index.ts: the registry builds the node's panels, validation and `input` from them.
 */
export interface ModelDefinition {
	/** Value of the node's Model option. Saved in workflows: never rename. */
	key: string;
	kind: MediaKind;
	displayName: string;
	description: string;
	/**
	 * The `model` identifier sent to the service. When absent the spec gives none and the user
	 * types it in the `modelId` parameter.
	 */
	modelId?: string;
	/**
	 * This model's fields, without displayOptions for resource/operation/model: the registry
	 * adds those. Required fields at top level; optional ones inside one collection so that
	 * nothing the user did not choose is sent.
	 */
	properties: INodeProperties[];
	/** Validates the complete `input` (after "Additional Input Fields" JSON is merged in). */
	schema: z.ZodType<IDataObject>;
	/** Returns `input` exactly as the user set it for one item (no defaults invented). */
	toInput(getParam: ParamReader): IDataObject;
}
