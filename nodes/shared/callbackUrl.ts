import { createHash, createHmac, randomBytes, timingSafeEqual } from 'crypto';

/**
 * The contract between the Media Generation node (which builds a task's `callback_url`) and the
 * Media Generation Trigger (which receives it). Everything both sides must agree on lives here:
 *
 *   <trigger Production URL>?ref=<Callback Reference>&secret=<Secret>&nonce=<nonce>&sig=<signature>
 *
 * - `ref`: the user's Callback Reference (optional), output by the trigger as `reference`.
 * - `secret`: the trigger's optional Secret; the user adds it to the URL by hand.
 * - `nonce`: added by the node, new for every submission (from 0.2.0): each task gets a URL of
 *   its own, so the trigger can tell the URLs apart (a URL that has been seen can be flooded
 *   with other task ids; it gets only its own small share of status reads, see
 *   MediaGenerationTrigger/statusReads.ts).
 * - `sig`: added by the node to every callback URL: an HMAC of the reference (or of its
 *   absence) and of the nonce, under a key derived from the credential's API key. Only someone
 *   holding the key can write a `sig` the trigger accepts, so a caller cannot attach a reference
 *   or a nonce the node did not write. The task id is unknown when the URL is built (the service
 *   assigns it), so the signature binds the reference and the nonce to the credential, not to
 *   one task.
 *
 * - the Trigger (issue 51): when the URL's path ends in `<webhookId>/media-generation` (every
 *   URL n8n shows for a Media Generation Trigger, production or test), the signature covers that
 *   webhookId too, and a Trigger checks it with its own: a signed URL's query sent to another
 *   Trigger on the same credential (another workflow, or a second Trigger in one) is refused.
 *
 * Older forms stay valid, checked as they were written: URLs signed without a Trigger (builds of
 * 0.2.0 before issue 51, or a URL whose path does not name a Trigger, such as a proxy's) and URLs
 * signed before nonces existed (before issue 35: no `nonce`, `sig` over the reference only;
 * "legacy" URLs, which share their status reads with every URL of the same reference). These are
 * not bound to one Trigger (docs/security.md). 0.1.0 signed nothing.
 */
export const REFERENCE_PARAM = 'ref';
export const SECRET_PARAM = 'secret';
export const SIGNATURE_PARAM = 'sig';
export const NONCE_PARAM = 'nonce';
/**
 * n8n's own token in `$execution.resumeUrl` (`?signature=`): it resumes the execution at every
 * later wait (Wait, Form, send-and-wait), so it is masked like the others.
 */
export const RESUME_TOKEN_PARAM = 'signature';
/** The Trigger's webhook path: n8n serves it at `…/<webhookId>/media-generation`. */
export const TRIGGER_WEBHOOK_PATH = 'media-generation';
/** The webhookId a Trigger URL's path names (n8n writes UUIDs; imports may carry other ids). */
const TRIGGER_PATH_PATTERN = new RegExp(`/([A-Za-z0-9_-]{1,100})/${TRIGGER_WEBHOOK_PATH}/?$`);
const MASKED_PARAMS = new Set([SECRET_PARAM, SIGNATURE_PARAM, RESUME_TOKEN_PARAM]);

/** Names the purpose of the derived key, so the API key is never used raw for anything else. */
const DERIVATION_CONTEXT = 'n8n-nodes-media-generation/callback-reference/v1';
/** 128 bits of the HMAC, base64url: 22 characters. */
const SIGNATURE_BYTES = 16;
const SIGNATURE_PATTERN = /^[A-Za-z0-9_-]{22}$/;
/** 96 random bits, base64url: 16 characters. */
const NONCE_BYTES = 12;
const NONCE_PATTERN = /^[A-Za-z0-9_-]{16}$/;
/** What every masked value becomes in outputs and errors. */
export const MASK = '***';

/** The signing key: HMAC(apiKey, fixed label). Not the API key itself. */
export function signingKey(apiKey: string): Buffer {
	return createHmac('sha256', apiKey).update(DERIVATION_CONTEXT, 'utf8').digest();
}

/**
 * The signature of a reference (`undefined`: the URL carries none), of the URL's nonce (from
 * 0.2.0) and of the Trigger's webhookId (from issue 51; only with a nonce). Without a webhookId:
 * the form signed before issue 51; without a nonce: the one before nonces existed (legacy URLs).
 */
export function referenceSignature(
	apiKey: string,
	reference: string | undefined,
	nonce?: string,
	webhookId?: string,
): string {
	return signatureWith(signingKey(apiKey), reference, nonce, webhookId);
}

function signatureWith(
	key: Buffer,
	reference: string | undefined,
	nonce?: string,
	webhookId?: string,
): string {
	const signed = reference === undefined ? 'no-ref' : `ref=${reference}`;
	// A legacy message starts with "ref=" or "no-ref", the nonce form with "nonce=" (whose form,
	// 16 base64url characters, holds no newline), the Trigger form with "hook=" (an id of
	// [A-Za-z0-9_-]): no message of one form reads as another.
	let message = nonce === undefined ? signed : `nonce=${nonce}\n${signed}`;
	if (nonce !== undefined && webhookId !== undefined) message = `hook=${webhookId}\n${message}`;
	return createHmac('sha256', key)
		.update(message, 'utf8')
		.digest()
		.subarray(0, SIGNATURE_BYTES)
		.toString('base64url');
}

/** Sets (or replaces) `ref=<reference>`; an empty reference leaves the URL as it is. */
export function withReference(url: string, reference: string | undefined): string {
	if (!reference) return url;
	const parsed = new URL(url);
	parsed.searchParams.set(REFERENCE_PARAM, reference);
	return parsed.toString();
}

/**
 * Whether a URL is n8n's resume URL of an execution (`…/webhook-waiting/<id>?signature=…`):
 * n8n checks its own token there, and the trigger never receives it, so it gets no `sig`.
 */
export function isResumeUrl(url: string): boolean {
	try {
		const parsed = new URL(url);
		return (
			/\/webhook-waiting\/[^/]+/.test(parsed.pathname) &&
			parsed.searchParams.has(RESUME_TOKEN_PARAM)
		);
	} catch {
		return false;
	}
}

/** The webhookId of the Trigger a URL's path names (`…/<webhookId>/media-generation`), if any. */
export function triggerWebhookIdOf(url: string | URL): string | undefined {
	try {
		return TRIGGER_PATH_PATTERN.exec(new URL(url).pathname)?.[1];
	} catch {
		return undefined;
	}
}

/** A new nonce for one submission's callback URL. */
export function newNonce(): string {
	return randomBytes(NONCE_BYTES).toString('base64url');
}

/**
 * Gives the URL a nonce (a new one, unless it carries a well-formed one already) and appends
 * `sig` over the reference it carries (the first `ref`, as the trigger reads it), that nonce and
 * the webhookId its path names (see triggerWebhookIdOf); n8n's resume URLs are left as they are
 * (see isResumeUrl). Signing a signed URL again gives the same URL.
 */
export function signCallbackUrl(url: string, apiKey: string): string {
	if (isResumeUrl(url)) return url;
	const parsed = new URL(url);
	parsed.searchParams.delete(SIGNATURE_PARAM);
	const given = parsed.searchParams.getAll(NONCE_PARAM);
	const nonce = given.length === 1 && NONCE_PATTERN.test(given[0]) ? given[0] : newNonce();
	parsed.searchParams.delete(NONCE_PARAM);
	parsed.searchParams.append(NONCE_PARAM, nonce);
	const reference = parsed.searchParams.get(REFERENCE_PARAM) ?? undefined;
	parsed.searchParams.append(
		SIGNATURE_PARAM,
		referenceSignature(apiKey, reference, nonce, triggerWebhookIdOf(parsed)),
	);
	return parsed.toString();
}

/** A query parameter as one string: repeated parameters (`?ref=a&ref=b`) keep the first. */
export function queryValue(query: unknown, name: string): string | undefined {
	if (typeof query !== 'object' || query === null) return undefined;
	const value = (query as Record<string, unknown>)[name];
	if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
	return typeof value === 'string' ? value : undefined;
}

/** What the trigger reads from the query of a callback. */
export interface CallbackQuery {
	reference?: string;
	secret?: string;
	signature?: string;
	/** `sig` given more than once: never valid (which one would count?). */
	repeatedSignature: boolean;
	/** The URL's nonce (`undefined`: a legacy URL, or unsigned). */
	nonce?: string;
	/** `nonce` given more than once: never valid. */
	repeatedNonce: boolean;
}

export function readCallbackQuery(query: unknown): CallbackQuery {
	const repeated = (name: string) => {
		const raw =
			typeof query === 'object' && query !== null
				? (query as Record<string, unknown>)[name]
				: undefined;
		return Array.isArray(raw) && raw.length > 1;
	};
	return {
		reference: queryValue(query, REFERENCE_PARAM),
		secret: queryValue(query, SECRET_PARAM),
		signature: queryValue(query, SIGNATURE_PARAM),
		repeatedSignature: repeated(SIGNATURE_PARAM),
		nonce: queryValue(query, NONCE_PARAM),
		repeatedNonce: repeated(NONCE_PARAM),
	};
}

export type SignatureCheck = 'valid' | 'missing' | 'invalid';

/**
 * Whether `sig` has the form of a signature (one parameter, 22 base64url characters), and the
 * nonce, when there is one, the form of a nonce (one parameter, 16 base64url characters).
 */
export function signatureWellFormed(query: CallbackQuery): boolean {
	return (
		query.signature !== undefined &&
		!query.repeatedSignature &&
		SIGNATURE_PATTERN.test(query.signature) &&
		!query.repeatedNonce &&
		(query.nonce === undefined || NONCE_PATTERN.test(query.nonce))
	);
}

/**
 * Checks `sig` in constant time against the reference, the nonce (when there is one) and the
 * checking Trigger's own webhookId (`webhookId`), or as a URL signed without a Trigger (the older
 * forms, see the top of this file).
 */
export function checkSignature(
	query: CallbackQuery,
	apiKey: string,
	webhookId?: string,
): SignatureCheck {
	if (query.signature !== undefined && apiKey === '') return 'invalid';
	return checkSignatureWith(query, signingKey(apiKey), webhookId);
}

/** checkSignature with the signing key derived already (see signingKey). */
export function checkSignatureWith(
	query: CallbackQuery,
	key: Buffer,
	webhookId?: string,
): SignatureCheck {
	if (query.signature === undefined) return 'missing';
	if (!signatureWellFormed(query)) return 'invalid';
	const given = Buffer.from(query.signature, 'utf8');
	const matches = (id?: string) =>
		timingSafeEqual(
			Buffer.from(signatureWith(key, query.reference, query.nonce, id), 'utf8'),
			given,
		);
	// Both forms are always computed, so the time taken does not tell which one matched.
	const bound = webhookId !== undefined && query.nonce !== undefined && matches(webhookId);
	const unbound = matches(undefined);
	return bound || unbound ? 'valid' : 'invalid';
}

/**
 * Compares a provided secret with the configured one in constant time (both hashed first, so
 * neither the content nor the length leaks through timing).
 */
export function secretMatches(provided: unknown, expected: string): boolean {
	if (typeof provided !== 'string') return false;
	const a = createHash('sha256').update(provided, 'utf8').digest();
	const b = createHash('sha256').update(expected, 'utf8').digest();
	return timingSafeEqual(a, b);
}

/** The callback URL as shown in outputs: `secret`, `sig` and `signature` masked, the rest kept. */
export function maskCallbackUrl(url: string): string {
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		return scrubCallbackSecrets(url);
	}
	const masked = new URLSearchParams();
	let changed = false;
	for (const [name, value] of parsed.searchParams) {
		const secret = MASKED_PARAMS.has(name);
		changed ||= secret;
		masked.append(name, secret ? MASK : value);
	}
	parsed.search = masked.toString();
	return changed ? parsed.toString() : url;
}

/** `secret=` / `sig=` query values in any text (a URL quoted in an error, say), raw or encoded. */
const PARAM_VALUE = /((?:[?&]|&amp;|%26|%3F)(?:secret|sig)(?:=|%3D))[^&\s"'<>#\\]*/gi;

/**
 * Removes the callback secrets from a text before it reaches an output item, an error or an
 * answer: every `secret=` and `sig=` query value, and the given values wherever they appear.
 */
export function scrubCallbackSecrets(text: string, values: Array<string | undefined> = []): string {
	let result = text.replace(PARAM_VALUE, `$1${MASK}`);
	for (const value of values) {
		if (!value || value.length < 4) continue;
		result = result.split(value).join(MASK);
		const encoded = encodeURIComponent(value);
		if (encoded !== value) result = result.split(encoded).join(MASK);
	}
	return result;
}
