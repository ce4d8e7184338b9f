import type { IDataObject } from 'n8n-workflow';
import { z } from 'zod';

/*
 * Building blocks for the models' zod schemas. Convention: the message of every issue a field
 * schema raises is the text of what that field allows ("4, 8, 12"); formatIssues() adds the
 * field name, the value given and the model, so each rule states its allowed values once.
 * Issues flagged with params.sentence carry a complete sentence instead (rules that are not
 * about one field's value, such as fields that must not be combined).
 */

const only = (message: string) => ({ errorMap: () => ({ message }) });

/** "8" from an expression means 8; anything else is left for the schema to reject. */
export function coerceNumber(value: unknown): unknown {
	if (typeof value === 'string' && /^\s*[+-]?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
	return value;
}

/** "true"/"false" from an expression mean the booleans. */
export function coerceBoolean(value: unknown): unknown {
	if (typeof value === 'string') {
		const v = value.trim().toLowerCase();
		if (v === 'true') return true;
		if (v === 'false') return false;
	}
	return value;
}

/** 20000 → "20,000" (no dependence on the runtime's locale data). */
export function thousands(n: number): string {
	return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function listText(values: readonly (string | number)[]): string {
	return values.join(', ');
}

/** A string from a fixed list. */
export function oneOf<T extends string>(values: readonly [T, ...T[]]) {
	return z.enum(values, only(listText(values)));
}

/** An integer from a fixed list ("8" is accepted as 8). */
export function integerOneOf(values: readonly number[]) {
	const allowed = listText(values);
	return z.preprocess(
		coerceNumber,
		z
			.number(only(allowed))
			.int(allowed)
			.refine((v) => values.includes(v), allowed),
	);
}

/** An integer within min..max inclusive (max optional). */
export function integerRange(min: number, max?: number) {
	const allowed =
		max === undefined ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
	let n = z.number(only(allowed)).int(allowed).min(min, allowed);
	if (max !== undefined) n = n.max(max, allowed);
	return z.preprocess(coerceNumber, n);
}

export function bool() {
	return z.preprocess(coerceBoolean, z.boolean(only('true or false')));
}

interface GraphemeSegmenter {
	segment(text: string): Iterable<unknown>;
}
/** Intl.Segmenter where the runtime has it (every Node n8n supports); typed here, not in lib. */
const Segmenter = (
	Intl as unknown as {
		Segmenter?: new (locale: undefined, options: { granularity: 'grapheme' }) => GraphemeSegmenter;
	}
).Segmenter;

/** Unicode code points of a text: UTF-16 units minus surrogate pairs. */
function codePointCount(value: string): number {
	return value.length - (value.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}

/**
 * Length of a text as a person counts it: user-perceived characters (Unicode extended grapheme
 * clusters: "é" written as e + accent, a flag or a family emoji is one), or code points where
 * the runtime has no Intl.Segmenter. Never more than the code points nor the UTF-16 units, so a
 * limit checked this way never rejects a text that a service counting either would accept.
 * `stopAfter` bounds the work on huge texts: counting stops once past it.
 */
export function characterCount(value: string, stopAfter = Infinity): number {
	if (!Segmenter) return codePointCount(value);
	let count = 0;
	for (const segment of new Segmenter(undefined, { granularity: 'grapheme' }).segment(value)) {
		if (segment !== undefined && ++count > stopAfter) break;
	}
	return count;
}

/** Whether a text is at most `max` characters as characterCount counts them. */
export function withinCharacters(value: string, max: number): boolean {
	// Every character holds at least one code point: within by code points needs no segmenting.
	if (codePointCount(value) <= max) return true;
	return characterCount(value, max) <= max;
}

/** Text that is not blank, optionally with a maximum length (counted by characterCount). */
export function text(maxLength?: number) {
	const allowed =
		maxLength === undefined
			? 'non-empty text'
			: `non-empty text of up to ${thousands(maxLength)} characters`;
	return z
		.string(only(allowed))
		.refine((v) => v.trim().length > 0, allowed)
		.refine((v) => maxLength === undefined || withinCharacters(v, maxLength), allowed);
}

export function isHttpUrl(value: string): boolean {
	if (!/^https?:\/\//i.test(value) || /\s/.test(value)) return false;
	try {
		const url = new URL(value);
		return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
	} catch {
		return false;
	}
}

const HTTP_URL = 'a public http(s) URL';

export function httpUrl() {
	return z.string(only(HTTP_URL)).refine(isHttpUrl, HTTP_URL);
}

/** A list of http(s) URLs with min..max items. */
export function httpUrlList(min: number, max: number) {
	const allowed =
		min === max
			? `a list of exactly ${min} http(s) URLs`
			: `a list of ${min} to ${max} http(s) URLs`;
	return z.array(httpUrl(), only(allowed)).min(min, allowed).max(max, allowed);
}

const RATIO = 'a ratio W:H of two positive integers, such as 16:9';

/** An aspect ratio written W:H. */
export function ratio() {
	return z.string(only(RATIO)).regex(/^[1-9]\d*:[1-9]\d*$/, RATIO);
}

/** The model identifier typed by the user for models the spec gives no identifier for. */
export const MODEL_ID_ALLOWED = 'the identifier of a model of the service, without spaces';

export function isModelId(value: unknown): value is string {
	return typeof value === 'string' && value.trim().length > 0 && !/\s/.test(value.trim());
}

/**
 * The schema of a model's whole `input`: the fields of `shape` (unknown keys pass through, as
 * "Additional Input Fields" may add options the spec does not name) plus `check` for rules
 * spanning several keys. Both always run, so one message lists every problem of an item
 * (a plain zod superRefine is skipped as soon as one field is invalid).
 */
export function inputSchema(
	shape: z.ZodRawShape,
	check?: (input: Record<string, unknown>, ctx: z.RefinementCtx) => void,
): z.ZodType<IDataObject, z.ZodTypeDef, unknown> {
	const fields = z.object(shape).passthrough();
	const known = Object.keys(shape);
	return z.unknown().transform((input, ctx): IDataObject => {
		if (input === null || typeof input !== 'object' || Array.isArray(input)) {
			sentence(ctx, [], 'input must be an object');
			return z.NEVER;
		}
		const result = fields.safeParse(input);
		if (!result.success) {
			for (const issue of result.error.issues) {
				const { path, message } = issue;
				const params = (issue as { params?: Record<string, unknown> }).params;
				ctx.addIssue({ code: z.ZodIssueCode.custom, path, message, params });
			}
		}
		rejectLookAlikes(input as Record<string, unknown>, known, ctx);
		check?.(input as Record<string, unknown>, ctx);
		return result.success ? (result.data as IDataObject) : z.NEVER;
	});
}

const squash = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * An unknown key that differs from a known field only in spelling style ("aspectRatio" for
 * aspect_ratio) would be sent unvalidated and most likely ignored by the service, leaving the
 * user with a result that silently lacks what they asked for.
 */
function rejectLookAlikes(input: Record<string, unknown>, known: string[], ctx: z.RefinementCtx) {
	for (const key of Object.keys(input)) {
		if (known.includes(key)) continue;
		const meant = known.find((k) => squash(k) === squash(key));
		if (meant !== undefined) {
			sentence(
				ctx,
				[key],
				`"${key}" is not a field of model {model}; the field is named "${meant}" (check Additional Input Fields)`,
			);
		}
	}
}

/**
 * Adds an issue whose message is a complete sentence, not the text of allowed values;
 * `{model}` in it stands for the model's name.
 */
export function sentence(ctx: z.RefinementCtx, path: (string | number)[], message: string) {
	ctx.addIssue({ code: z.ZodIssueCode.custom, path, message, params: { sentence: true } });
}

/** How a value given by the user is quoted in an error message. */
export function describeValue(value: unknown): string {
	if (value === undefined) return 'missing';
	if (value === null) return 'null';
	if (value === '') return 'empty';
	if (typeof value === 'string') {
		if (value.trim() === '') return 'blank';
		if (value.length > 120) {
			return `a text of ${thousands(characterCount(value))} characters`;
		}
		return JSON.stringify(value);
	}
	if (Array.isArray(value)) {
		return `a list of ${value.length} item${value.length === 1 ? '' : 's'}`;
	}
	if (typeof value === 'object') {
		const json = JSON.stringify(value);
		return json.length > 120 ? 'an object' : json;
	}
	return String(value);
}

export function pathText(path: (string | number)[]): string {
	return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function valueAt(input: unknown, path: (string | number)[]): unknown {
	let v = input;
	for (const p of path) {
		if (v === null || typeof v !== 'object') return undefined;
		v = (v as Record<string | number, unknown>)[p];
	}
	return v;
}

/**
 * Turns zod issues into messages naming the field, the value given and what is allowed:
 * `"duration" is 10 for model vidmodel-1.5-pro; allowed: 4, 8, 12`.
 */
export function formatIssues(
	issues: z.ZodIssue[],
	input: IDataObject,
	modelName: string,
	labels: Record<string, string> = {},
): string[] {
	const out: string[] = [];
	for (const issue of issues) {
		const params = (issue as { params?: { sentence?: boolean } }).params;
		if (params?.sentence) {
			out.push(issue.message.split('{model}').join(modelName));
			continue;
		}
		const field = pathText(issue.path);
		const label = labels[field] ? ` (${labels[field]})` : '';
		const value = describeValue(valueAt(input, issue.path));
		const message = `"${field}"${label} is ${value} for model ${modelName}; allowed: ${issue.message}`;
		// zod may report one field twice (type and refinement): say it once.
		if (!out.includes(message)) out.push(message);
	}
	return out;
}

/** Sets `key` only when the user chose a value: unset, blank and empty lists are not sent. */
export function setIfChosen(target: IDataObject, key: string, value: unknown): void {
	if (isChosen(value)) target[key] = value as IDataObject[string];
}

export function isChosen(value: unknown): boolean {
	if (value === undefined || value === null) return false;
	if (typeof value === 'string' && value.trim() === '') return false;
	if (Array.isArray(value) && value.length === 0) return false;
	return true;
}

/**
 * URLs from a multiple-values field (array) or from an expression that gave one string: a JSON
 * array, or URLs separated by whitespace (which no URL contains). Blank entries are dropped.
 */
export function urlList(value: unknown): unknown {
	if (value === undefined || value === null) return undefined;
	if (typeof value === 'string' && value.trim().startsWith('[')) {
		// A JSON array an expression wrote out as text (e.g. {{ JSON.stringify($json.urls) }}).
		try {
			const parsed: unknown = JSON.parse(value);
			if (Array.isArray(parsed)) return urlList(parsed);
		} catch {
			// Not JSON after all: the URL check will name the text.
		}
	}
	if (typeof value === 'string') return value.split(/\s+/).filter((s) => s.length > 0);
	if (Array.isArray(value)) {
		return value
			.map((v: unknown) => (typeof v === 'string' ? v.trim() : v))
			.filter((v) => v !== '');
	}
	return value;
}

/**
 * Binary field names from a multiple-values field (array), or from an expression that gave one
 * string: names separated by commas or whitespace. Blank entries are dropped; anything that is
 * not a string is kept for the registry to name.
 */
export function fieldList(value: unknown): unknown[] {
	if (value === undefined || value === null) return [];
	if (typeof value === 'string') return value.split(/[\s,]+/).filter((s) => s.length > 0);
	if (!Array.isArray(value)) return [value];
	return value
		.map((v: unknown) => (typeof v === 'string' ? v.trim() : v))
		.filter((v) => v !== '' && v !== undefined && v !== null);
}
