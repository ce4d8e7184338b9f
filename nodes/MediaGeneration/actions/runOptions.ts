import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { withReference } from '../../shared/callbackUrl';
import type { PollPace } from '../polling/schedule';

// The run options at execution time: read and checked per item. The panel that offers them is
// runOptionsPanel.ts.

/** Settings of the wait/download/batch part, read per item (expressions allowed). */
export interface RunOptions {
	waitForCompletion: boolean;
	downloadFiles: boolean;
	binaryPropertyName: string;
	timeoutMs: number;
	maxConcurrentTasks: number;
	maxPollIntervalMs: number;
	/** Options → Check for Results: where on the trade-off of status reads and lag to poll. */
	pollPace: PollPace;
	callbackUrl?: string;
	callbackReference?: string;
	checkReferenceImages: boolean;
	/** Options → Max File Size (MB); undefined: the default of n8n's binary data mode. */
	maxFileSizeMb?: number;
	/** Options → Max Submissions per Execution: the spend guard (Generate only). */
	maxSubmissions: number;
}

export const DEFAULT_TIMEOUT_MINUTES = 30;
export const DEFAULT_MAX_CONCURRENT = 50;
export const DEFAULT_MAX_POLL_INTERVAL_SECONDS = 30;
/**
 * The spend guard's default: ten times a large daily batch (100 rows), a tenth of the
 * 10,000-row spreadsheet picked by mistake. Raised per node for bigger runs.
 */
export const DEFAULT_MAX_SUBMISSIONS = 1000;

function fail(ctx: IExecuteFunctions, itemIndex: number, message: string): never {
	throw new NodeOperationError(ctx.getNode(), `Item ${itemIndex}: ${message}`, { itemIndex });
}

function numberOption(
	ctx: IExecuteFunctions,
	itemIndex: number,
	options: IDataObject,
	name: string,
	label: string,
	fallback: number,
	rule: { min: number; integer?: boolean },
): number {
	const raw = options[name];
	if (raw === undefined || raw === null || raw === '') return fallback;
	const value = typeof raw === 'string' ? Number(raw) : raw;
	const ok =
		typeof value === 'number' &&
		Number.isFinite(value) &&
		value >= rule.min &&
		(!rule.integer || Number.isInteger(value));
	if (!ok) {
		fail(
			ctx,
			itemIndex,
			`"${label}" is ${JSON.stringify(raw)}; allowed: ${rule.integer ? 'an integer' : 'a number'} of at least ${rule.min}`,
		);
	}
	return value as number;
}

/** Appends `ref=<reference>` to the callback URL (the trigger reads it back). */
export const callbackUrlWithReference = withReference;

function referenceOf(options: IDataObject): string | undefined {
	const raw = options.callbackReference;
	const reference = raw === undefined || raw === null ? '' : String(raw);
	return reference || undefined;
}

/**
 * The item's Callback Reference, for an item refused before its options were read; undefined
 * when it has none or its options cannot be read (an expression that fails).
 */
export function readCallbackReference(
	ctx: IExecuteFunctions,
	itemIndex: number,
): string | undefined {
	try {
		return referenceOf(ctx.getNodeParameter('options', itemIndex, {}) as IDataObject);
	} catch {
		return undefined;
	}
}

/** Reads and checks the options of one item; throws NodeOperationError naming the field. */
export function readRunOptions(
	ctx: IExecuteFunctions,
	itemIndex: number,
	hasWaitParameter: boolean,
): RunOptions {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const waitForCompletion = hasWaitParameter
		? (ctx.getNodeParameter('waitForCompletion', itemIndex, true) as boolean)
		: true;
	const binaryPropertyName =
		typeof options.binaryPropertyName === 'string' && options.binaryPropertyName.trim() !== ''
			? options.binaryPropertyName.trim()
			: 'data';
	if (!/^[A-Za-z0-9_$-]+$/.test(binaryPropertyName)) {
		fail(
			ctx,
			itemIndex,
			`"Put Output File in Field" is ${JSON.stringify(binaryPropertyName)}; allowed: letters, digits, "_", "-" and "$"`,
		);
	}
	const timeoutMinutes = numberOption(
		ctx,
		itemIndex,
		options,
		'timeoutMinutes',
		'Timeout (Minutes)',
		DEFAULT_TIMEOUT_MINUTES,
		{ min: 0.01 },
	);
	const maxConcurrentTasks = numberOption(
		ctx,
		itemIndex,
		options,
		'maxConcurrentTasks',
		'Max Tasks in Flight',
		DEFAULT_MAX_CONCURRENT,
		{ min: 1, integer: true },
	);
	const maxPoll = numberOption(
		ctx,
		itemIndex,
		options,
		'maxPollIntervalSeconds',
		'Max Poll Interval (Seconds)',
		DEFAULT_MAX_POLL_INTERVAL_SECONDS,
		{ min: 1 },
	);

	const pace = options.checkForResults ?? 'balanced';
	if (pace !== 'sooner' && pace !== 'balanced' && pace !== 'fewer') {
		fail(
			ctx,
			itemIndex,
			`"Check for Results" is ${JSON.stringify(pace)}; allowed: "sooner", "balanced" or "fewer" (Sooner, Balanced, Fewer Requests)`,
		);
	}

	// 0 (or unset): the default that fits n8n's binary data mode (transport/fileSizeLimit.ts).
	const maxFileSizeMb = numberOption(
		ctx,
		itemIndex,
		options,
		'maxFileSizeMb',
		'Max File Size (MB)',
		0,
		{ min: 0 },
	);

	const maxSubmissions = numberOption(
		ctx,
		itemIndex,
		options,
		'maxSubmissions',
		'Max Submissions per Execution',
		DEFAULT_MAX_SUBMISSIONS,
		{ min: 1, integer: true },
	);

	let callbackUrl: string | undefined;
	const rawCallback = typeof options.callbackUrl === 'string' ? options.callbackUrl.trim() : '';
	const reference = referenceOf(options);
	if (rawCallback) {
		let valid = false;
		try {
			const parsed = new URL(rawCallback);
			valid = parsed.protocol === 'http:' || parsed.protocol === 'https:';
		} catch {
			valid = false;
		}
		if (!valid) {
			fail(
				ctx,
				itemIndex,
				`"Callback URL" is ${JSON.stringify(rawCallback)}; allowed: an http(s) URL such as the Production URL of a Media Generation Trigger`,
			);
		}
		callbackUrl = callbackUrlWithReference(rawCallback, reference);
	}

	return {
		waitForCompletion,
		downloadFiles: options.downloadFiles !== false,
		binaryPropertyName,
		timeoutMs: Math.round(timeoutMinutes * 60_000),
		maxConcurrentTasks,
		maxPollIntervalMs: Math.round(maxPoll * 1000),
		pollPace: pace as PollPace,
		callbackUrl,
		callbackReference: reference,
		checkReferenceImages: options.checkReferenceImages === true,
		maxFileSizeMb: maxFileSizeMb > 0 ? maxFileSizeMb : undefined,
		maxSubmissions,
	};
}
