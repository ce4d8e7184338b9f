import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

// Answering a webhook call by hand, for the Trigger (MediaGenerationTrigger/handler.ts) and the
// parked node (MediaGeneration/actions/durableWait.ts): the answer is written and the response
// ended as soon as the decision is made, whatever work follows (a status read, downloads), so
// the caller is not held, and n8n can free what it holds for the call once the response closed.

/** The part of n8n's response (an express response, so a Node one) these answers use. */
interface MinimalResponse {
	headersSent?: boolean;
	statusCode: number;
	setHeader(name: string, value: string): unknown;
	end(body?: string): unknown;
}

export interface AnswerOptions {
	headers?: Record<string, string>;
	/** Applied to the body's text before it is sent (removes secrets it may quote). */
	scrub?: (text: string) => string;
}

const responseOf = (ctx: IWebhookFunctions) =>
	ctx.getResponseObject() as unknown as MinimalResponse;

/** Answers the caller now with a JSON body; a call answered already is left as it is. */
export function answer(
	ctx: IWebhookFunctions,
	status: number,
	body: IDataObject,
	options: AnswerOptions = {},
): void {
	const res = responseOf(ctx);
	if (res.headersSent) return;
	res.statusCode = status;
	res.setHeader('Content-Type', 'application/json; charset=utf-8');
	for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
	const text = JSON.stringify(body);
	res.end(options.scrub ? options.scrub(text) : text);
}

/** Whether the caller has had its answer already. */
export function answered(ctx: IWebhookFunctions): boolean {
	return responseOf(ctx).headersSent === true;
}

/** Answers the caller and ends the call without starting an execution. */
export function refuse(
	ctx: IWebhookFunctions,
	status: number,
	body: IDataObject,
	options?: AnswerOptions,
): IWebhookResponseData {
	answer(ctx, status, body, options);
	return { noWebhookResponse: true };
}

/** Retry-After, in whole seconds (at least 1), for an answer that asks the caller to wait. */
export function retryAfter(ms: number): Record<string, string> {
	return { 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))) };
}
