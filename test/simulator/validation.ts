// Submission validation: every rule of the spec's field and limit tables for the three named
// models, and the quickstart shapes for the image and further video model. Messages name the
// field, the value received and what is allowed, as a 400 body's `msg`.
import type { MediaKind } from './media';

export const MODEL_15_PRO = 'vidmodel-1.5-pro';
export const MODEL_20_FAST = 'vidmodel-2.0-fast/image-to-video';
export const MODEL_MUSIC = 'generate-music';

export const ASPECT_15_PRO = ['1:1', '21:9', '4:3', '3:4', '16:9', '9:16'];
export const RESOLUTION_15_PRO = ['480p', '720p', '1080p'];
export const DURATION_15_PRO = [4, 8, 12];
export const ASPECT_20_FAST = ['auto', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'];
export const RESOLUTION_20_FAST = ['480p', '720p'];
export const PROMPT_MAX_20_FAST = 20000;
export const IMAGE_N_MAX = 10;

export interface ValidationConfig {
	imageModelId: string;
	videoModelId: string;
	/** Name of the 2.0 fast model's audio option (the spec does not show it). */
	fastAudioField: string;
	/** Whether 2.0 fast requires `duration` and `aspect_ratio` (the spec does not say). */
	fastRequiresDurationAndAspect: boolean;
}

export interface ValidSubmission {
	model: string;
	kind: MediaKind;
	input: Record<string, unknown>;
	callbackUrl?: string;
	/** Files the task produces unless a marker says otherwise. */
	defaultFiles: number;
}

export class ValidationError extends Error {}

function show(value: unknown): string {
	if (typeof value === 'string')
		return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
	try {
		return JSON.stringify(value) ?? String(value);
	} catch {
		return String(value);
	}
}

function fail(field: string, value: unknown, rule: string): never {
	throw new ValidationError(`${field}: ${show(value)} is invalid; ${rule}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isHttpUrl(v: unknown): boolean {
	if (typeof v !== 'string' || v.trim() !== v || v === '') return false;
	try {
		const u = new URL(v);
		return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
	} catch {
		return false;
	}
}

function required(input: Record<string, unknown>, field: string, what: string): void {
	if (input[field] === undefined || input[field] === null)
		throw new ValidationError(`input.${field} is required (${what})`);
}

function prompt(input: Record<string, unknown>, max?: number): void {
	required(input, 'prompt', 'a non-empty string');
	const p = input.prompt;
	if (typeof p !== 'string') fail('input.prompt', p, 'must be a string');
	if (p.trim() === '') fail('input.prompt', p, 'must not be empty');
	// The spec's "characters", read the way a service written in most server languages reads
	// it: Unicode code points (an emoji is one, "é" typed as e + accent is two). Deliberately
	// not the node's grapheme count, so that tests see where the two readings part.
	const length = max === undefined ? 0 : [...p].length;
	if (max !== undefined && length > max)
		throw new ValidationError(
			`input.prompt: ${length} characters is too long; allowed at most ${max} characters`,
		);
}

function oneOf(
	input: Record<string, unknown>,
	field: string,
	allowed: Array<string | number>,
): void {
	const v = input[field];
	if (v === undefined) return;
	if (!allowed.includes(v as string | number))
		fail(`input.${field}`, v, `allowed values: ${allowed.map((a) => show(a)).join(', ')}`);
}

function integerIn(input: Record<string, unknown>, field: string, min: number, max: number): void {
	const v = input[field];
	if (v === undefined) return;
	if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
		fail(`input.${field}`, v, `must be an integer from ${min} to ${max}`);
}

function type(input: Record<string, unknown>, field: string, t: 'string' | 'boolean'): void {
	const v = input[field];
	if (v === undefined) return;
	if (typeof v !== t) fail(`input.${field}`, v, `must be a ${t}`);
}

function ratio(input: Record<string, unknown>, field: string): void {
	const v = input[field];
	if (v === undefined) return;
	if (typeof v !== 'string' || !/^[1-9]\d*:[1-9]\d*$/.test(v))
		fail(`input.${field}`, v, 'must be a ratio "W:H" such as "16:9"');
}

function imageUrls(input: Record<string, unknown>, min: number, max: number): void {
	const v = input.image_urls;
	if (v === undefined) return;
	if (!Array.isArray(v)) fail('input.image_urls', v, 'must be an array of URLs');
	if (v.length < min || v.length > max)
		fail(
			'input.image_urls',
			v,
			min === max
				? `must hold ${min} item(s)`
				: `must hold ${min} to ${max} items (got ${v.length})`,
		);
	v.forEach((u, i) => {
		if (!isHttpUrl(u)) fail(`input.image_urls[${i}]`, u, 'must be an http(s) URL');
	});
}

function noUnknown(input: Record<string, unknown>, known: string[], model: string): void {
	for (const k of Object.keys(input))
		if (!known.includes(k))
			throw new ValidationError(
				`input.${k} is not a field of ${model}; allowed fields: ${known.join(', ')}`,
			);
}

export function validateSubmission(body: unknown, cfg: ValidationConfig): ValidSubmission {
	if (!isObject(body)) fail('body', body, 'must be a JSON object');
	const models = [MODEL_15_PRO, MODEL_20_FAST, MODEL_MUSIC, cfg.imageModelId, cfg.videoModelId];
	if (body.model === undefined || body.model === null)
		throw new ValidationError(`model is required; allowed values: ${models.join(', ')}`);
	if (typeof body.model !== 'string' || !models.includes(body.model))
		fail('model', body.model, `allowed values: ${models.join(', ')}`);
	const model = body.model;
	let callbackUrl: string | undefined;
	if (body.callback_url !== undefined && body.callback_url !== null) {
		if (!isHttpUrl(body.callback_url))
			fail('callback_url', body.callback_url, 'must be an http(s) URL');
		callbackUrl = body.callback_url as string;
	}
	if (body.input === undefined || body.input === null)
		throw new ValidationError('input is required (an object of model parameters)');
	if (!isObject(body.input)) fail('input', body.input, 'must be an object');
	const input = body.input;

	if (model === MODEL_15_PRO) {
		noUnknown(
			input,
			[
				'prompt',
				'image_urls',
				'aspect_ratio',
				'resolution',
				'duration',
				'fixed_lens',
				'generate_audio',
			],
			model,
		);
		prompt(input);
		imageUrls(input, 0, 2);
		required(input, 'aspect_ratio', `one of ${ASPECT_15_PRO.join(', ')}`);
		oneOf(input, 'aspect_ratio', ASPECT_15_PRO);
		oneOf(input, 'resolution', RESOLUTION_15_PRO);
		required(input, 'duration', `one of ${DURATION_15_PRO.join(', ')} (seconds, integer)`);
		oneOf(input, 'duration', DURATION_15_PRO);
		type(input, 'fixed_lens', 'boolean');
		type(input, 'generate_audio', 'boolean');
		return { model, kind: 'video', input, callbackUrl, defaultFiles: 1 };
	}
	if (model === MODEL_20_FAST) {
		for (const k of Object.keys(input))
			if (/^reference/i.test(k))
				throw new ValidationError(
					`input.${k}: reference fields are not accepted by ${model}; give start/end frames in image_urls`,
				);
		noUnknown(
			input,
			['prompt', 'image_urls', 'duration', 'resolution', 'aspect_ratio', cfg.fastAudioField],
			model,
		);
		prompt(input, PROMPT_MAX_20_FAST);
		required(input, 'image_urls', 'a start frame URL and an optional end frame URL');
		imageUrls(input, 1, 2);
		if (cfg.fastRequiresDurationAndAspect) {
			required(input, 'duration', 'an integer from 4 to 15');
			required(input, 'aspect_ratio', `one of ${ASPECT_20_FAST.join(', ')}`);
		}
		integerIn(input, 'duration', 4, 15);
		oneOf(input, 'resolution', RESOLUTION_20_FAST);
		oneOf(input, 'aspect_ratio', ASPECT_20_FAST);
		type(input, cfg.fastAudioField, 'boolean');
		return { model, kind: 'video', input, callbackUrl, defaultFiles: 1 };
	}
	if (model === MODEL_MUSIC) {
		prompt(input);
		for (const f of ['style', 'title', 'mv']) type(input, f, 'string');
		for (const f of ['custom_mode', 'instrumental']) type(input, f, 'boolean');
		return { model, kind: 'audio', input, callbackUrl, defaultFiles: 1 };
	}
	if (model === cfg.imageModelId) {
		prompt(input);
		ratio(input, 'size');
		integerIn(input, 'n', 1, IMAGE_N_MAX);
		return { model, kind: 'image', input, callbackUrl, defaultFiles: (input.n as number) ?? 1 };
	}
	// The further video model (quickstart shape).
	prompt(input);
	integerIn(input, 'duration', 1, 600);
	ratio(input, 'aspect_ratio');
	return { model, kind: 'video', input, callbackUrl, defaultFiles: 1 };
}
