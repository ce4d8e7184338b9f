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
	/**
	 * Validates the complete `input` (after "Additional Input Fields" JSON is merged in) and
	 * returns it with values from expressions coerced ("8" → 8). Issue messages follow the
	 * convention of rules.ts (the text of what the field allows).
	 */
	schema: z.ZodType<IDataObject, z.ZodTypeDef, unknown>;
	/** Returns `input` exactly as the user set it for one item (no defaults invented). */
	toInput(getParam: ParamReader): IDataObject;
	/**
	 * Panel names of `input` keys whose name differs from the field the user filled in
	 * (e.g. `image_urls[0]` → "Start Frame URL"), quoted in error messages.
	 */
	labels?: Record<string, string>;
	/**
	 * Type and size limits the spec documents for this model's reference images, checked by the
	 * optional pre-check. Without them the pre-check only verifies that each URL downloads.
	 */
	referenceImages?: { types: readonly string[]; maxBytes: number };
	/**
	 * When the panel takes this model's `image_urls` from binary fields of the input item rather
	 * than URLs: those fields in the order of `image_urls` (toInput then leaves `image_urls`
	 * out). Undefined when the images are URLs. The registry checks the names and the count; the
	 * files are checked and linked by shared/transport/binaryImageLinks.ts.
	 */
	binaryImages?(getParam: ParamReader): BinaryImageChoice | undefined;
	/** Hint under this model's "Additional Input Fields". */
	additionalFieldsHint?: string;
	/**
	 * How long a task of this model typically takes from submission to finish, and where that
	 * figure comes from (listed in docs/models.md). The duration learner's first prior: until a
	 * task of the kind has finished, a task waited for alone without usable progress reads no
	 * more often than a share of it (polling/schedule.ts), instead of every 2 s.
	 */
	typicalDuration: { ms: number; source: string };
}

/** The binary fields a panel names for `image_urls` (see ModelDefinition.binaryImages). */
export interface BinaryImageChoice {
	/** Each field in order: the parameter (`name`, as in errors), its panel name and its value. */
	fields: Array<{ name: string; label: string; value: unknown }>;
	/** The most images the model takes. */
	max: number;
	/** The panel name of the fields as a whole, quoted in errors. */
	label: string;
}
