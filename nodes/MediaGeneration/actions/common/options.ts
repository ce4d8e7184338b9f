import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { withReference } from '../../../shared/callbackUrl';
import { waitModeOption } from './durableWait';

/** Settings of the wait/download/batch part, read per item (expressions allowed). */
export interface RunOptions {
	waitForCompletion: boolean;
	downloadFiles: boolean;
	binaryPropertyName: string;
	timeoutMs: number;
	maxConcurrentTasks: number;
	maxPollIntervalMs: number;
	callbackUrl?: string;
	callbackReference?: string;
	checkReferenceImages: boolean;
}

export const DEFAULT_TIMEOUT_MINUTES = 30;
export const DEFAULT_MAX_CONCURRENT = 50;
export const DEFAULT_MAX_POLL_INTERVAL_SECONDS = 30;

// Shown only where it matters: when the node returns file URLs instead of the files.
const filesNotice: INodeProperties = {
	displayName:
		'The file URLs stay valid for 24 hours after generation. To get the files later, use Task → Download Files with the task_id within that time.',
	name: 'filesNotice',
	type: 'notice',
	default: '',
};

const waitProperty: INodeProperties = {
	displayName: 'Wait for Completion',
	name: 'waitForCompletion',
	type: 'boolean',
	default: true,
	description:
		'Whether to wait until the task is finished or failed and return its files. Off: returns the task_id at once; get the result with the Media Generation Trigger (set a Callback URL) or Task → Wait for Completion. This node retries service faults itself where that is safe and never submits a task twice, so leave Settings → Retry On Fail off.',
};

const triggerNotice: INodeProperties = {
	displayName:
		'Not waiting: put the Production URL of a Media Generation Trigger in Options → Callback URL to receive the result in another workflow, with a Callback Reference to tell the items apart',
	name: 'triggerNotice',
	type: 'notice',
	default: '',
	displayOptions: { show: { waitForCompletion: [false] } },
};

const timeoutOption: INodeProperties = {
	displayName: 'Timeout (Minutes)',
	name: 'timeoutMinutes',
	type: 'number',
	typeOptions: { minValue: 0.1, numberPrecision: 1 },
	default: DEFAULT_TIMEOUT_MINUTES,
	description:
		'How long to wait for the task. When it runs out the task keeps running on the service: pick it up with Task → Wait for Completion and its task_id.',
};

const downloadOption: INodeProperties = {
	displayName: 'Download Files',
	name: 'downloadFiles',
	type: 'boolean',
	default: true,
	description:
		"Whether to download the generated files into the item's binary data. Off: only their URLs are returned, valid for 24 hours after generation.",
};

const binaryOption: INodeProperties = {
	displayName: 'Put Output File in Field',
	name: 'binaryPropertyName',
	type: 'string',
	default: 'data',
	// Hints are shown as HTML: no angle brackets in the text.
	hint: 'Further files go to this name followed by _1, _2, … (e.g. data_1, data_2)',
	description: 'Name of the binary field the first file is put in',
};

const concurrencyOption: INodeProperties = {
	displayName: 'Max Tasks in Flight',
	name: 'maxConcurrentTasks',
	type: 'number',
	typeOptions: { minValue: 1 },
	default: DEFAULT_MAX_CONCURRENT,
	description:
		'How many items are submitted and awaited at the same time. The service answers 429 when over its limit; the node then waits and retries.',
};

const pollIntervalOption: INodeProperties = {
	displayName: 'Max Poll Interval (Seconds)',
	name: 'maxPollIntervalSeconds',
	type: 'number',
	typeOptions: { minValue: 1 },
	default: DEFAULT_MAX_POLL_INTERVAL_SECONDS,
	description:
		'Longest pause between two status reads. Reads start fast and space out as the task runs; progress is used to aim at the finish.',
};

/** Properties of the generate operations that are not model fields. */
export function generateRunProperties(kind: 'image' | 'video' | 'music'): INodeProperties[] {
	const show = { resource: [kind], operation: ['generate'] };
	const options: INodeProperties[] = [
		{ ...binaryOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
		{
			displayName: 'Callback Reference',
			name: 'callbackReference',
			type: 'string',
			default: '',
			description:
				'A value of yours (e.g. a row ID) added to the Callback URL as query parameter "ref"; the Media Generation Trigger outputs it as "reference"',
		},
		{
			displayName: 'Callback URL',
			name: 'callbackUrl',
			type: 'string',
			default: '',
			placeholder: 'https://n8n.example.com/webhook/…/media-generation',
			description:
				'Address the service POSTs the result to when the task finishes or fails, e.g. the Production URL of a Media Generation Trigger',
		},
		{ ...downloadOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
		concurrencyOption,
		{ ...pollIntervalOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
		{ ...timeoutOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
		{ ...waitModeOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
	];
	if (kind === 'video') {
		options.push({
			displayName: 'Pre-Check Reference Images',
			name: 'checkReferenceImages',
			type: 'boolean',
			default: false,
			description:
				'Whether to check each image URL (type JPEG/PNG/WebP, at most 10 MB) with a HEAD or ranged GET before submitting, so a bad image fails before any credits are spent',
		});
	}
	options.sort((a, b) => a.displayName.localeCompare(b.displayName));
	return [
		{ ...waitProperty, displayOptions: { show } },
		{ ...triggerNotice, displayOptions: { show: { ...show, waitForCompletion: [false] } } },
		{
			displayName: 'Options',
			name: 'options',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			displayOptions: { show },
			options,
		},
		{
			...filesNotice,
			name: `${kind}FilesNotice`,
			displayOptions: {
				show: { ...show, waitForCompletion: [true], 'options.downloadFiles': [false] },
			},
		},
	];
}

/** Options of Task → Wait for Completion / Download Files. */
export function taskRunOptions(operation: 'waitForCompletion' | 'downloadFiles'): INodeProperties {
	const options =
		operation === 'waitForCompletion'
			? [binaryOption, downloadOption, concurrencyOption, pollIntervalOption, timeoutOption, waitModeOption]
			: [binaryOption, concurrencyOption];
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { resource: ['task'], operation: [operation] } },
		options: [...options].sort((a, b) => a.displayName.localeCompare(b.displayName)),
	};
}

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

	let callbackUrl: string | undefined;
	const rawCallback = typeof options.callbackUrl === 'string' ? options.callbackUrl.trim() : '';
	const reference =
		options.callbackReference === undefined || options.callbackReference === null
			? ''
			: String(options.callbackReference);
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
		callbackUrl = callbackUrlWithReference(rawCallback, reference || undefined);
	}

	return {
		waitForCompletion,
		downloadFiles: options.downloadFiles !== false,
		binaryPropertyName,
		timeoutMs: Math.round(timeoutMinutes * 60_000),
		maxConcurrentTasks,
		maxPollIntervalMs: Math.round(maxPoll * 1000),
		callbackUrl,
		callbackReference: reference || undefined,
		checkReferenceImages: options.checkReferenceImages === true,
	};
}
