import type { INodeProperties } from 'n8n-workflow';

// What an AI Agent's model reads about each operation when the node is used as a tool (the
// "Media Generation Tool" n8n derives from `usableAsTool`). n8n's own default is one line made
// from the operation's action ("Generate a video in Media Generation"), which says neither what
// a call costs nor what comes back. n8n 2.41 adds its Tool Description fields only when the node
// has no `toolDescription` property of its own, and shows a property marked `@tool` only in the
// tool: so each operation brings its own default here, and the node panel never shows it.

const RESULT =
	'Returns JSON: task_id, status (finished, failed, or not_started/queued/processing while the task still runs), error_message when it failed, and files: one entry per file with url, mime_type, file_name (when the file was downloaded) and file_type; expires_at is when the file URLs stop working (24 hours after generation). Give the user the url.';

const LATER =
	'If this tool does not wait, status is not_started, queued or processing; if its wait times out, the error names the task_id. Either way the task goes on running at the service: keep the task_id and check it later with a Get Status tool, never by generating again.';

const REFUSED =
	'Invalid arguments are refused before anything is sent or paid, with an error naming the field and its allowed values: correct them and call again.';

function generate(what: string): string {
	return `Generates ${what} with an AI model from a text prompt. Each call starts a new, paid generation that spends credits: call it once per ${what.replace(/^an? /, '')} wanted. ${REFUSED} ${RESULT} ${LATER}`;
}

/** Default tool description per resource and operation. */
export const TOOL_DESCRIPTIONS: Record<string, Record<string, string>> = {
	video: { generate: generate('a video') },
	image: { generate: generate('an image') },
	music: { generate: generate('a music track') },
	task: {
		getStatus: `Reads the current state of an earlier generation by its task_id, once. Free: starts no generation and spends no credits; call it again later while the task runs (a video can take minutes). ${RESULT}`,
		waitForCompletion: `Waits for an earlier generation, by its task_id, to finish or fail, and returns its result. Free: starts no generation and spends no credits. ${RESULT} ${LATER}`,
		downloadFiles: `Fetches the files of a finished generation again by its task_id, within the 24 hours its file URLs stay valid. Free: starts no generation and spends no credits. ${RESULT}`,
	},
};

/** One Description field per operation, shown only in the tool (n8n reads it as the tool's description). */
export const toolDescriptionProperties: INodeProperties[] = Object.entries(
	TOOL_DESCRIPTIONS,
).flatMap(([resource, operations]) =>
	Object.entries(operations).map(
		([operation, text]): INodeProperties => ({
			displayName: 'Description',
			name: 'toolDescription',
			type: 'string',
			typeOptions: { rows: 4 },
			required: true,
			default: text,
			description:
				'What the AI model reads about this tool: what it does, what a call costs and what it returns. The default fits this operation.',
			displayOptions: { show: { '@tool': [true], resource: [resource], operation: [operation] } },
		}),
	),
);
