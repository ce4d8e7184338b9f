import type { INodeProperties } from 'n8n-workflow';

// The trigger's panel: what the user sets. What it does with a callback is handler.ts (and
// shared/callbackBody.ts for reading the body).
export const triggerProperties: INodeProperties[] = [
	{
		displayName:
			'Copy this node\'s Production URL (above) into the "Callback URL" option of the Media Generation node, then publish this workflow. The service has no webhook registration: the URL travels with each task. A "Callback Reference" set there comes back here as <code>reference</code>.',
		name: 'notice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Trigger On',
		name: 'event',
		type: 'options',
		options: [
			{
				name: 'Finished or Failed',
				value: 'any',
				description: 'Every task outcome starts the workflow',
			},
			{
				name: 'Finished',
				value: 'finished',
				description: 'Only tasks that produced files',
			},
			{
				name: 'Failed',
				value: 'failed',
				description: 'Only tasks that failed (the output carries error_message)',
			},
		],
		default: 'any',
	},
	{
		displayName: 'Verify With Status Endpoint',
		name: 'verify',
		type: 'boolean',
		default: true,
		description:
			"Whether to confirm each callback with the service's status endpoint before starting. The service does not sign its callbacks: with this on, a forged or replayed call cannot inject a task, a status or files (the task and its files come from the service). Off trusts the callback body, files included.",
	},
	{
		displayName:
			'Verification is off: anyone who has this URL with a valid signature can start this workflow with a task, status and file URLs of their choosing, and the files are downloaded from wherever the body points. Turn it off only for a service you reach over a private network.',
		name: 'verifyOffNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { verify: [false] } },
	},
	{
		displayName: 'Download Files',
		name: 'download',
		type: 'boolean',
		default: true,
		description:
			'Whether to download the result files as binary data (streamed). Links expire 24 hours after generation.',
	},
	{
		displayName: 'Put Output File in Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		displayOptions: { show: { download: [true] } },
		hint: 'The first file goes to this field; further files to data_1, data_2… (same as the Media Generation node)',
		description: 'Name of the binary field the downloaded file is put in',
	},
	{
		displayName: 'Download Deadline (Minutes)',
		name: 'downloadMinutes',
		type: 'number',
		typeOptions: { minValue: 0.05, numberPrecision: 2 },
		default: 10,
		displayOptions: { show: { download: [true] } },
		description:
			"How long one callback's files may take to download, waiting for other callbacks of this trigger included. Past it the workflow starts without the files, with an error and their URLs (valid 24 hours): fetch them then with Task → Download Files.",
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Secret',
				name: 'secret',
				type: 'string',
				typeOptions: { password: true },
				default: '',
				description:
					'When set, a callback is accepted only if its URL carries <code>?secret=</code> with this value. Add it to the Callback URL you give the Media Generation node. It is masked in every output.',
			},
			{
				displayName: 'Accept Unsigned Callbacks',
				name: 'acceptUnsigned',
				type: 'boolean',
				default: false,
				description:
					'Whether to accept callbacks whose URL has no <code>sig</code> parameter. The Media Generation node signs every Callback URL (and its Callback Reference) with this credential; tasks submitted another way carry no signature and are refused (401) unless this is on. A wrong signature is always refused.',
			},
			{
				displayName: 'On Verification Error',
				name: 'onVerifyError',
				type: 'options',
				options: [
					{
						name: 'Reject (Answer 503)',
						value: 'reject',
						description:
							'Start nothing and answer 503 with Retry-After, so the service calls again later',
					},
					{
						name: 'Start With Error',
						value: 'start',
						description:
							'Start the workflow with the task ID and an error field, no status or files. Anyone who can reach the URL can then start runs while the service is unreachable.',
					},
				],
				default: 'reject',
				description:
					'What to do when the status endpoint cannot confirm the callback within 5 seconds (not when it says the task is unknown: then nothing starts)',
			},
			{
				displayName: 'Max File Size (MB)',
				name: 'maxFileSizeMb',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: 0,
				displayOptions: { show: { '/download': [true] } },
				description:
					"Largest file to download, in MB of 1,048,576 bytes; a task's files may take this much each. A larger file is not downloaded: the run starts with an error and the file's URL, valid 24 hours. 0: fits n8n's binary data mode, 256 in database (queue mode's default) and memory mode, 2048 in filesystem mode, and 4 GB for a task's files together.",
			},
		],
	},
];
