import type {
	IDataObject,
	IDisplayOptions,
	IExecuteFunctions,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError, UnexpectedError } from 'n8n-workflow';

import { generateMusic } from './generateMusic';
import { imageById } from './imageById';
import { checkImageUrls } from '../../shared/transport/referenceImageProbe';
import { pendingImageUrl, type BinaryImageRef } from '../../shared/transport/binaryImageLinks';
import { DOCUMENTED_LIMITS } from './referenceImages';
import { describeValue, formatIssues, isModelId, listText, MODEL_ID_ALLOWED } from './rules';
import type { MediaKind, ModelDefinition, ParamReader } from './types';
import { videoById } from './videoById';
import { vidmodel15Pro } from './vidmodel15Pro';
import { vidmodel20FastImageToVideo } from './vidmodel20FastImageToVideo';

export type { MediaKind, ModelDefinition, ParamReader } from './types';

/** Every model; the first of each kind is that resource's default in the Model dropdown. */
export const MODELS: ModelDefinition[] = [
	vidmodel15Pro,
	vidmodel20FastImageToVideo,
	videoById,
	imageById,
	generateMusic,
];

export const ADDITIONAL_FIELDS = 'additionalInputFields';
const ADDITIONAL_LABEL = 'Additional Input Fields';

export function getModel(key: string): ModelDefinition {
	const model = MODELS.find((m) => m.key === key);
	if (!model) throw new UnexpectedError(`Unknown model "${key}"`);
	return model;
}

export function modelsOf(kind: MediaKind): ModelDefinition[] {
	return MODELS.filter((m) => m.kind === kind);
}

/**
 * Whether the resource shows a Model dropdown: not when it has a single model (a dropdown of one
 * entry is noise). Adding a second model brings it back with the first as default, so saved
 * workflows keep their model.
 */
function hasModelChoice(kind: MediaKind): boolean {
	return modelsOf(kind).length > 1;
}

function withModel(property: INodeProperties, kind: MediaKind, models: string[]): INodeProperties {
	const show: IDisplayOptions['show'] = {
		...(property.displayOptions?.show ?? {}),
		resource: [kind],
		operation: ['generate'],
		...(hasModelChoice(kind) ? { model: models } : {}),
	};
	return { ...property, displayOptions: { ...property.displayOptions, show } };
}

/** Example identifiers shown in the Model ID field. */
const MODEL_ID_EXAMPLES: Record<MediaKind, string> = {
	image: 'image-1',
	video: 'video-1',
	music: 'music-1',
};

export function generateProperties(kind: MediaKind): INodeProperties[] {
	const models = modelsOf(kind);
	if (models.length === 0) return [];
	const byId = models.filter((m) => m.modelId === undefined).map((m) => m.key);
	const firstModel = models[0].key;
	const properties: INodeProperties[] = [];
	if (hasModelChoice(kind)) {
		properties.push({
			displayName: 'Model',
			name: 'model',
			type: 'options',
			noDataExpression: true,
			options: models.map((m) => ({
				name: m.displayName,
				value: m.key,
				description: m.description,
			})),
			default: firstModel,
			displayOptions: { show: { resource: [kind], operation: ['generate'] } },
		});
	}
	if (byId.length > 0) {
		properties.push(
			withModel(
				{
					displayName: 'Model ID',
					name: 'modelId',
					type: 'string',
					required: true,
					default: '',
					placeholder: `e.g. ${MODEL_ID_EXAMPLES[kind]}`,
					description:
						"The model's identifier as listed by your media generation service (sent as model)",
				},
				kind,
				byId,
			),
		);
	}
	for (const model of models) {
		for (const property of model.properties)
			properties.push(withModel(property, kind, [model.key]));
		properties.push(
			withModel(
				{
					displayName: ADDITIONAL_LABEL,
					name: ADDITIONAL_FIELDS,
					type: 'json',
					default: '{}',
					description:
						'JSON object of further input fields, such as options this panel does not show yet. Merged last and validated with the fields above.',
					...(model.additionalFieldsHint ? { hint: model.additionalFieldsHint } : {}),
				},
				kind,
				[model.key],
			),
		);
	}
	return properties;
}

type Validation =
	| { ok: true; model: string; input: IDataObject; binaryImages?: BinaryImageRef[] }
	| { ok: false; errors: string[] };

function parseAdditional(value: unknown, modelName: string): IDataObject | string {
	const allowed = 'a JSON object such as {"field": "value"}';
	let parsed = value;
	if (value === undefined || value === null) return {};
	if (typeof value === 'string') {
		if (value.trim() === '') return {};
		try {
			parsed = JSON.parse(value);
		} catch (error) {
			return `"${ADDITIONAL_LABEL}" is not valid JSON (${(error as Error).message}) for model ${modelName}; allowed: ${allowed}`;
		}
	}
	if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
		return `"${ADDITIONAL_LABEL}" is ${describeValue(parsed)} for model ${modelName}; allowed: ${allowed}`;
	}
	return parsed as IDataObject;
}

function validateWith(model: ModelDefinition, read: ParamReader): Validation {
	const errors: string[] = [];
	let modelId = model.modelId;
	let modelName = model.modelId ?? model.displayName;
	if (modelId === undefined) {
		const typed = read('modelId');
		if (isModelId(typed)) {
			modelId = typed.trim();
			modelName = modelId;
		} else {
			errors.push(
				`"modelId" (Model ID) is ${describeValue(typed)} for ${model.displayName}; allowed: ${MODEL_ID_ALLOWED}`,
			);
		}
	}
	// A panel switch that is not sent (noDataExpression: no expression sets it, but a workflow's
	// JSON can hold any value): one it does not offer would silently mean its default.
	for (const property of model.properties) {
		if (property.type !== 'options' || property.noDataExpression !== true) continue;
		const allowed = (property.options ?? []).map((o) => (o as { value: unknown }).value);
		const value = read(property.name, property.default);
		if (!allowed.includes(value)) {
			errors.push(
				`"${property.name}" (${property.displayName}) is ${describeValue(value)} for model ${modelName}; allowed: ${listText(allowed.map(String))}`,
			);
		}
	}
	const input = model.toInput(read);
	const extra = parseAdditional(read(ADDITIONAL_FIELDS, '{}'), modelName);
	if (typeof extra === 'string') errors.push(extra);
	// Additional fields come last: they may add fields or replace a panel value, and the
	// merged whole is validated, so a replacement is held to the same rules.
	const merged: IDataObject = typeof extra === 'string' ? input : { ...input, ...extra };
	const binaryImages = readBinaryImages(model, read, merged, modelName, errors);
	const result = model.schema.safeParse(merged);
	if (!result.success)
		errors.push(...formatIssues(result.error.issues, merged, modelName, model.labels));
	if (errors.length > 0 || !result.success || modelId === undefined) return { ok: false, errors };
	return {
		ok: true,
		model: modelId,
		input: result.data,
		...(binaryImages ? { binaryImages } : {}),
	};
}

/**
 * The binary fields the panel names for `image_urls`, checked as names (the files are checked
 * before anything is sent, in generate.ts). Until then `image_urls` holds stand-ins, one per
 * field, so that the model's schema holds the rest of the input to its rules.
 */
function readBinaryImages(
	model: ModelDefinition,
	read: ParamReader,
	merged: IDataObject,
	modelName: string,
	errors: string[],
): BinaryImageRef[] | undefined {
	const choice = model.binaryImages?.(read);
	if (!choice) return undefined;
	const refs: BinaryImageRef[] = [];
	for (const field of choice.fields) {
		if (typeof field.value === 'string' && field.value.trim() !== '') {
			refs.push({ property: field.value.trim(), label: field.label });
		} else {
			errors.push(
				`"${field.name}" (${field.label}) is ${describeValue(field.value)} for model ${modelName}; allowed: the name of a binary field of the input item, such as "data"`,
			);
		}
	}
	if (choice.fields.length > choice.max) {
		const names = choice.fields.map((f) => describeValue(f.value)).join(', ');
		errors.push(
			`"${choice.label}" names ${choice.fields.length} binary fields (${names}) for model ${modelName}; allowed: at most ${choice.max}`,
		);
	}
	if (merged.image_urls !== undefined) {
		const from =
			model.toInput(read).image_urls !== undefined
				? (model.labels?.image_urls ?? 'Reference Image URLs')
				: ADDITIONAL_LABEL;
		errors.push(
			`"image_urls" is set in "${from}" while the images come from "${choice.label}" for model ${modelName}; allowed: one of them`,
		);
	}
	// At most as many as the model takes: a surplus is refused above, not twice.
	merged.image_urls = choice.fields.slice(0, choice.max).map((_, i) => pendingImageUrl(i));
	return refs;
}

export function validateSubmission(modelKey: string, params: Record<string, unknown>): Validation {
	const model = MODELS.find((m) => m.key === modelKey);
	if (!model) {
		return {
			ok: false,
			errors: [
				`"model" is ${describeValue(modelKey)}; allowed: ${listText(MODELS.map((m) => m.key))}`,
			],
		};
	}
	return validateWith(model, (name, fallback) =>
		params[name] === undefined ? fallback : params[name],
	);
}

export function buildSubmission(
	ctx: IExecuteFunctions,
	itemIndex: number,
	kind: MediaKind,
): { model: string; modelKey: string; input: IDataObject; binaryImages?: BinaryImageRef[] } {
	const node = ctx.getNode();
	// A resource with a single model shows no Model dropdown: that model, whatever was saved.
	const key = hasModelChoice(kind)
		? (ctx.getNodeParameter('model', itemIndex, '') as string)
		: modelsOf(kind)[0]?.key;
	const model = modelsOf(kind).find((m) => m.key === key);
	if (!model) {
		throw new NodeOperationError(
			node,
			`Item ${itemIndex}: "model" is ${describeValue(key)} for resource ${kind}; allowed: ${listText(modelsOf(kind).map((m) => m.key))}`,
			{ itemIndex },
		);
	}
	// getNodeParameter throws for a parameter that is absent without a fallback: null stands
	// for "not set" and is read back as undefined.
	const read: ParamReader = (name, fallback) => {
		const value = ctx.getNodeParameter(name, itemIndex, fallback === undefined ? null : fallback);
		return value === null ? undefined : value;
	};
	const result = validateWith(model, read);
	if (!result.ok) {
		// Every problem of the item in one message: fixing them one run at a time costs runs.
		throw new NodeOperationError(node, `Item ${itemIndex}: ${result.errors.join(' | ')}`, {
			itemIndex,
			description: result.errors.join('\n'),
		});
	}
	return {
		model: result.model,
		modelKey: model.key,
		input: result.input,
		...(result.binaryImages ? { binaryImages: result.binaryImages } : {}),
	};
}

/**
 * Optional pre-check of reference image URLs before submitting (HEAD, or a ranged GET of the
 * first bytes). Every URL must be publicly downloadable; type (JPEG, PNG, WebP) and size
 * (10 MB) are checked against the limits the model documents, or against the documented
 * limits when no model is named. Never sends the credential. Throws one NodeOperationError
 * listing every URL with a problem.
 */
export async function checkReferenceImages(
	ctx: IExecuteFunctions,
	itemIndex: number,
	urls: string[],
	modelKey?: string,
	allowPrivateFileHosts?: boolean,
): Promise<void> {
	const limits = modelKey === undefined ? DOCUMENTED_LIMITS : getModel(modelKey).referenceImages;
	await checkImageUrls(ctx, itemIndex, urls, limits, allowPrivateFileHosts);
}
