import type { INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { waitModeOption } from './durableWait';
import {
	DEFAULT_MAX_CONCURRENT,
	DEFAULT_MAX_POLL_INTERVAL_SECONDS,
	DEFAULT_MAX_SUBMISSIONS,
	DEFAULT_TIMEOUT_MINUTES,
} from './runOptions';

// The panel of the run options (wait, download, batch, callback): what the editor shows. How
// each value is read and checked at execution time is runOptions.ts.

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
		'Whether to wait until the task is finished or failed and return its files. Off: returns the task_id at once; get the result with the Media Generation Trigger (set a Callback URL) or Task → Wait for Completion. This node retries service faults itself where that is safe; Settings → Retry On Fail and a Retry of the execution resume accepted tasks and submit anew only failed ones.',
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
		'Per item: how long to wait for its task and download its files, counted from its own start (right after it is submitted), so items that wait for a free slot are not cut short. With Wait Mode Park Until Callbacks: one deadline for the whole batch, counted from when the execution parks. When it runs out the task keeps running on the service: pick it up with Task → Wait for Completion and its task_id.',
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
		'How many items are submitted and awaited at the same time; the others wait for a free slot, so a batch takes about (items ÷ this) × one task’s time: 200 ten-minute videos take about 40 minutes at 50. The service answers 429 when over its limit; the node then waits and retries.',
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

const checkForResultsOption: INodeProperties = {
	displayName: 'Check for Results',
	name: 'checkForResults',
	type: 'options',
	options: [
		{
			name: 'Balanced',
			value: 'balanced',
			description:
				'For a task alone or a batch of 50, never more status requests than checking every 5 seconds, and fewer on long tasks (a batch of ten tasks of seconds: up to 1.2 times as many); the result is seen within about 5 seconds, or a tenth of a long task',
		},
		{
			name: 'Fewer Requests',
			value: 'fewer',
			description:
				'About half the requests of Balanced; the result may be seen up to about 10 seconds, or a fifth of a long task, late',
		},
		{
			name: 'Sooner',
			value: 'sooner',
			description:
				'The result is seen within about 2.5 seconds on tasks of up to a minute (a twentieth of longer ones), at about twice the requests of Balanced',
		},
	],
	default: 'balanced',
	description:
		'How often to read the status while waiting, when nothing better is known: tasks that report progress, and kinds of task the node has seen finish, are read around their expected end whichever you pick',
};

const maxFileSizeOption: INodeProperties = {
	displayName: 'Max File Size (MB)',
	name: 'maxFileSizeMb',
	type: 'number',
	typeOptions: { minValue: 0 },
	default: 0,
	description:
		"Largest file to download, in MB of 1,048,576 bytes; a task's files may take this much each. A larger file is not downloaded: the item fails with its URL, valid 24 hours. 0: fits n8n's binary data mode, 256 in database (queue mode's default) and memory mode, 2048 in filesystem mode, and 4 GB for a task's files together.",
};

/** Properties of the generate operations that are not model fields. */
export function generateRunProperties(kind: 'image' | 'video' | 'music'): INodeProperties[] {
	const options: INodeProperties[] = [
		{ ...binaryOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
		{ ...maxFileSizeOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
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
		{
			displayName: 'Max Submissions per Execution',
			name: 'maxSubmissions',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: DEFAULT_MAX_SUBMISSIONS,
			description:
				'Spend guard: the most tasks this node may submit in one execution (all items, all runs of a loop). Over it, the node fails before submitting anything. Raise it for larger batches.',
		},
		{ ...pollIntervalOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
		{ ...checkForResultsOption, displayOptions: { show: { '/waitForCompletion': [true] } } },
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
	return updateDisplayOptions({ show: { resource: [kind], operation: ['generate'] } }, [
		waitProperty,
		triggerNotice,
		{
			displayName: 'Options',
			name: 'options',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			options,
		},
		{
			...filesNotice,
			name: `${kind}FilesNotice`,
			// A root path ('/…'): n8n before 2.34.4 fails to resolve a workflow's parameters
			// ("Max iterations reached") on a dependency that is not a parameter of its level.
			displayOptions: { show: { waitForCompletion: [true], '/options.downloadFiles': [false] } },
		},
	]);
}

/** Options of Task → Wait for Completion / Download Files. */
export function taskRunOptions(operation: 'waitForCompletion' | 'downloadFiles'): INodeProperties {
	const options =
		operation === 'waitForCompletion'
			? [
					binaryOption,
					checkForResultsOption,
					downloadOption,
					concurrencyOption,
					maxFileSizeOption,
					pollIntervalOption,
					timeoutOption,
					waitModeOption,
				]
			: [binaryOption, concurrencyOption, maxFileSizeOption];
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [...options].sort((a, b) => a.displayName.localeCompare(b.displayName)),
	};
}
