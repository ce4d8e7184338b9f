import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import {
	scrubCallbackSecrets,
	type CallbackQuery,
	type SignatureCheck,
} from '../shared/callbackUrl';
import type { EventFilter, StatusClass } from '../shared/callbackBody';
import { getApiCredentials } from '../shared/transport/api';
import { scrubSecret } from '../shared/transport/faults';
import {
	answer as answerCall,
	answered as answeredCall,
	refuse as refuseCall,
} from '../shared/webhookAnswer';

// One callback as the trigger's steps see it (handler.ts, verify.ts): what the request brings,
// who wrote its URL, the trigger's settings, and the answers, scrubbed of every secret.

/** One callback's context: what may be quoted and what must be scrubbed from it. */
export interface Call {
	ctx: IWebhookFunctions;
	/** Values that never appear in an answer, output or error (API key, secret, signature). */
	secrets: Array<string | undefined>;
}

/**
 * Reads the trigger's credential (once per call) and notes its API key among the values to
 * scrub; returns the key. Done before any request that uses the credential.
 */
export async function knowKey(call: Call): Promise<string> {
	const { apiKey } = await getApiCredentials(call.ctx);
	if (!call.secrets.includes(apiKey)) call.secrets.push(apiKey);
	return apiKey;
}

export function scrub(call: Call, text: string): string {
	return scrubCallbackSecrets(scrubSecret(text, call.secrets), call.secrets);
}

/** Answers the caller now (before any download or late status read), scrubbed. */
export function answer(
	call: Call,
	status: number,
	body: IDataObject,
	headers: Record<string, string> = {},
): void {
	answerCall(call.ctx, status, body, { headers, scrub: (text) => scrub(call, text) });
}

/** Whether the caller has had its answer (the "confirming" answer of a slow status read). */
export function answered(call: Call): boolean {
	return answeredCall(call.ctx);
}

/** Ends the request without starting an execution. */
export function refuse(
	call: Call,
	status: number,
	body: IDataObject,
	headers?: Record<string, string>,
): IWebhookResponseData {
	return refuseCall(call.ctx, status, body, { headers, scrub: (text) => scrub(call, text) });
}

/** Output fields that must never carry a secret: scrubbed as text, then parsed back. */
export function scrubbedJson(call: Call, json: IDataObject): IDataObject {
	const text = JSON.stringify(json);
	const clean = scrub(call, text);
	return clean === text ? json : (JSON.parse(clean) as IDataObject);
}

/** A step either hands its result to the next one or ends the call with this answer. */
export type Step<T> = { ok: T } | { done: IWebhookResponseData };

/** What the request brings: the trigger's options, the callback URL's query, the secrets. */
export interface Request {
	call: Call;
	options: IDataObject;
	query: CallbackQuery;
	/** When the caller must have its answer (ANSWER_WITHIN_MS after arrival). */
	deadline: number;
	arrivedAt: number;
}

/** Who wrote the callback URL: signed by the node (with this credential), or accepted unsigned. */
export interface Authenticated {
	signature: SignatureCheck;
	acceptUnsigned: boolean;
	reference?: string;
	/**
	 * Which URL the call came to, for the share of status reads it may cause
	 * (statusReads.ts): one submission's URL (`nonce`), a URL many tasks share (a legacy signed one, one per
	 * reference; unsigned ones).
	 */
	source: { key: string; shared: boolean };
}

/** The trigger's settings for this call, and the key of its run in the de-duplication memory. */
export interface Settings {
	event: EventFilter;
	verify: boolean;
	download: boolean;
	binaryProperty: string;
	/** Minutes the files of one callback may take, waiting included (Download Deadline). */
	downloadMinutes: number;
	/** Options → Max File Size in MB (`undefined`: automatic). */
	maxFileSizeMb?: number;
	trigger: string;
	/** Production URL: runs are de-duplicated (the Test URL runs every call it is sent). */
	production: boolean;
	keyFor: (status: StatusClass) => string;
}
