/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only); it reads docs/ and examples/ from disk */
// What each guide tells the user to click, and where the editor shows it (issue 50). Every
// word a guide sets in bold or italics is listed for its guide: a control of n8n, a node of
// the guide's examples, a field of a node's panel, a node n8n's node list offers, or words that
// name no control (and why). test/unit/docs/guide-controls.test.ts fails on a word a guide
// uses that is not listed here, so a new click in a guide is checked before it ships. The editor
// layer follows the places of kinds ui, node, field, nodes and workflow through n8n 2.41.1's
// editor in the guide's words (test/editor/editor.test.ts, "the guides name what n8n shows":
// each example opened once, each panel once) and fails on a word not where this list says.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.join(__dirname, '..', '..', '..');

/**
 * Where a guide's word is found in n8n's editor.
 * - `ui`: n8n's own controls, from the example's canvas (`from: 'canvas'`), the Overview page
 *   (`'home'`) or a node's open panel (`{ node }`): the word's parts (split at "→", or `path`)
 *   clicked in turn, the last one seen. `⋯` is the workflow's menu at the top right.
 * - `node`: a node on the canvas of one of the guide's examples (`name` when the guide says it
 *   differently).
 * - `field`: a field label in a node's panel (`tab: 'Settings'`: the panel's Settings tab), or
 *   with `value`, the field shows that value.
 * - `nodes`: n8n's node list (the + button's search, or its AI view's) offers a node of that
 *   name (and, after "→", that action).
 * - `workflow`: the name of one of the guide's example workflows.
 * - `package`: a name the package itself declares (credential or node display name).
 * - `words`: not a control (emphasis, a column, a status, a value to type); `why` says so.
 * - `elsewhere`: a control not opened here; `why` says where it is checked or why not.
 */
export type Place =
	| { kind: 'ui'; from: 'canvas' | 'home' | { node: string }; path?: string[] }
	| { kind: 'node'; name?: string }
	| { kind: 'field'; node: string; label?: string; tab?: 'Settings'; value?: string }
	| { kind: 'nodes' }
	| { kind: 'workflow' }
	| { kind: 'package' }
	| { kind: 'words'; why: string }
	| { kind: 'elsewhere'; why: string };

export interface Guide {
	file: string;
	/** The examples the guide imports, opened in the editor in this order. */
	examples: string[];
	places: Record<string, Place>;
}

const words = (why: string): Place => ({ kind: 'words', why });
const node: Place = { kind: 'node' };
const canvas: Place = { kind: 'ui', from: 'canvas' };
const fieldOf = (n: string, more: Omit<Extract<Place, { kind: 'field' }>, 'kind' | 'node'> = {}) =>
	({ kind: 'field', node: n, ...more }) as Place;
const COLUMN = words('a column of the table or sheet');
const HEADING = words('the lead-in of a paragraph or step');

/** Words every guide may use alike (a guide need not use each). */
export const COMMON: Record<string, Place> = {
	'Media Generation API': { kind: 'package' },
	Publish: canvas,
	'Execute workflow': canvas,
	Executions: canvas,
	'Create workflow': { kind: 'ui', from: 'home' },
	'⋯ → Import → From file': canvas,
	'Import from file…': words("the same menu item in older n8n 2.x (2.14.2's words)"),
	'Settings → Save execution progress': {
		kind: 'ui',
		from: 'canvas',
		path: ['⋯', 'Settings', 'Save execution progress'],
	},
	Retry: {
		kind: 'elsewhere',
		why: 'the Retry of a failed execution in Executions: the e2e layer retries executions the way that button does',
	},
};

export const GUIDES: Guide[] = [
	{
		file: 'docs/spreadsheet-to-videos.md',
		examples: [
			'table-rows-to-videos.json',
			'table-rows-to-videos-batch.json',
			'table-rows-to-videos-google-sheets.json',
		],
		places: {
			...COMMON,
			'The table is the ledger, and each row is paid once.': HEADING,
			'The table.': HEADING,
			'The workflows.': HEADING,
			'The sheet.': HEADING,
			'While it waits for the videos': HEADING,
			'While it sends': HEADING,
			'Data table': { kind: 'nodes' },
			'Google Drive → Upload file': { kind: 'nodes' },
			'Overview → Data tables': { kind: 'ui', from: 'home' },
			'Create data table': {
				kind: 'ui',
				from: 'home',
				path: ['Overview', 'Data tables', 'Create data table'],
			},
			'Import CSV': {
				kind: 'ui',
				from: 'home',
				path: ['Overview', 'Data tables', 'Create data table', 'Import CSV'],
			},
			'`products`': words('the name to give the table'),
			sku: COLUMN,
			prompt: COLUMN,
			status: COLUMN,
			task_id: COLUMN,
			video_file: COLUMN,
			error: COLUMN,
			product: COLUMN,
			String: words('the column type in the table'),
			part: words("the batch workflow's input"),
			claims: words('emphasis'),
			no: words('a cell of the status table'),
			maybe: words('a cell of the status table'),
			Sheet1: words('the usual name of a Google sheet'),
			'Generate Videos': node,
			'Wait for Videos': node,
			'Save Video File': node,
			'Send 50 Rows': node,
			'Collect 50 Videos': node,
			'Every Hour': node,
			'When n8n Starts': node,
			'Rows of the Sheet': node,
			'Results into the Sheet': node,
			'Media Generation: table rows to videos (one batch)': { kind: 'workflow' },
			'Media Generation: table rows to videos, the list in Google Sheets': { kind: 'workflow' },
			Prompt: fieldOf('Generate Videos'),
			'Wait for Completion': fieldOf('Generate Videos'),
			'On Error': fieldOf('Generate Videos', { tab: 'Settings' }),
			Continue: fieldOf('Generate Videos', {
				tab: 'Settings',
				label: 'On Error',
				value: 'Continue',
			}),
			'Task → Wait for Completion': fieldOf('Wait for Videos', { label: 'Resource → Operation' }),
			'Timeout (Minutes)': fieldOf('Wait for Videos'),
			Workflow: fieldOf('Send 50 Rows'),
			'Get Row(s)': fieldOf('Rows of the Sheet', { label: 'Operation' }),
			'Update Row': fieldOf('Results into the Sheet', { label: 'Operation' }),
			Upsert: fieldOf('Sheet Rows into the Table', { label: 'Operation' }),
			Get: fieldOf('Rows of the Table', { label: 'Operation' }),
			Credential: fieldOf('Rows of the Sheet'),
			Document: fieldOf('Rows of the Sheet'),
			Sheet: fieldOf('Rows of the Sheet'),
			'Column to match on': {
				kind: 'elsewhere',
				why: "shown once n8n has read the sheet's columns (a Google account); test/compat/google-sheets-example.test.ts checks the parameter against the Google Sheets node of each tested n8n",
			},
			'Connect to Google Sheets': { kind: 'ui', from: { node: 'Rows of the Sheet' } },
			...Object.fromEntries(
				['Client ID', 'Client Secret', 'OAuth Redirect URL', 'Save'].map((w) => [
					w,
					{
						kind: 'ui',
						from: { node: 'Rows of the Sheet' },
						path: ['Connect to Google Sheets', w],
					} satisfies Place,
				]),
			),
			'Sign in with Google': {
				kind: 'elsewhere',
				why: 'shown once the credential is saved with a Client ID and Secret (self-hosted n8n): a Google Cloud OAuth client',
			},
			'File → Import': { kind: 'elsewhere', why: "Google Sheets' own menu, outside n8n" },
		},
	},
	{
		file: 'docs/form-photos-to-videos.md',
		examples: ['form-photo-to-video.json'],
		places: {
			...COMMON,
			'self-hosted': words('a kind of n8n'),
			beside: words('emphasis'),
			'n8n Form': { kind: 'nodes' },
			'Send Email': { kind: 'nodes' },
			Gmail: { kind: 'nodes' },
			'Google Drive → Upload file': { kind: 'nodes' },
			'Upload file': words(
				"Google Drive's action, named as the node it would be (checked as Google Drive → Upload file)",
			),
			'Photo Form': node,
			'Animate Photo': node,
			'Wait for Video': node,
			'Your Video': node,
			'Keep a Copy': node,
			Model: fieldOf('Animate Photo'),
			Prompt: fieldOf('Animate Photo'),
			'Frames From': fieldOf('Animate Photo'),
			'Start Frame Binary Field': fieldOf('Animate Photo'),
			'Vidmodel 2.0 Fast (Image to Video)': fieldOf('Animate Photo', {
				label: 'Model',
				value: 'Vidmodel 2.0 Fast (Image to Video)',
			}),
			'Binary Files': fieldOf('Animate Photo', { label: 'Frames From', value: 'Binary Files' }),
			Photo: fieldOf('Animate Photo', { label: 'Start Frame Binary Field', value: 'Photo' }),
			'Wait for Completion': fieldOf('Animate Photo'),
			'Timeout (Minutes)': fieldOf('Wait for Video'),
			'Task → Wait for Completion': fieldOf('Wait for Video', { label: 'Resource → Operation' }),
			'Task → Download Files': words(
				'the Task resource and its operation, named in the node reference (README)',
			),
			'File Path and Name': fieldOf('Keep a Copy'),
			'Settings → On Error': fieldOf('Keep a Copy', { tab: 'Settings', label: 'On Error' }),
			Continue: fieldOf('Keep a Copy', { tab: 'Settings', label: 'On Error', value: 'Continue' }),
			'Production URL': { kind: 'ui', from: { node: 'Photo Form' } },
			'Form Path': fieldOf('Photo Form'),
			To: words("Send Email's field, once the user adds that node"),
			'Execute step': words('named only as the button not to press'),
			Crashed: words('an execution status in Executions'),
			'Allow Private Network File Hosts': words(
				"a field of the package's credential (credentials/)",
			),
			'"the service cannot fetch the reference images from this n8n"':
				words('an error the node gives'),
			'A file that is not a JPEG, PNG or WebP, or larger than 10 MB': words('an error case'),
			'The service could not fetch the photo': words('an error case'),
		},
	},
	{
		file: 'docs/agent-videos.md',
		examples: ['agent-media-generation.json', 'save-finished-videos.json'],
		places: {
			...COMMON,
			'AI Agent': node,
			'Simple Memory': node,
			'Start Video': node,
			'Get Video Status': node,
			'Media Generation Trigger': node,
			'Save Video File': node,
			'OpenAI Chat Model': node,
			'When chat message received': node,
			OpenAI: words('the credential type of OpenAI Chat Model'),
			'Postgres Chat Memory': { kind: 'nodes' },
			'Redis Chat Memory': { kind: 'nodes' },
			'Google Drive → Upload file': { kind: 'nodes' },
			'save-finished-videos': words("the example's file name"),
			'agent-media-generation': words("the example's file name"),
			'Import both workflows': HEADING,
			'The Callback URL': HEADING,
			'Ask with the task ID': HEADING,
			'Do not ask for the same video again': HEADING,
			'"Is it ready?" and the agent does not know which video': HEADING,
			'The video is not saved': HEADING,
			'A video failed': HEADING,
			off: words('the value of Wait for Completion'),
			'Chat Model': words("the AI Agent's connector on the canvas"),
			Memory: words("the AI Agent's connector on the canvas"),
			'Production URL': {
				kind: 'ui',
				from: { node: 'Media Generation Trigger' },
				path: ['Webhook URLs', 'Production URL'],
			},
			'Webhook URLs': { kind: 'ui', from: { node: 'Media Generation Trigger' } },
			'Callback URL': fieldOf('Start Video'),
			'Wait for Completion': fieldOf('Start Video'),
			'Trigger On: Finished': words('a setting of the Trigger that users keep at its default'),
			'Task → Download Files': words(
				'the Task resource and its operation, named in the node reference (README)',
			),
			'Open chat': canvas,
			'Make Chat Publicly Available': fieldOf('When chat message received'),
			Authentication: words('shown once Make Chat Publicly Available is on'),
			'Basic Auth': words('a choice of Authentication'),
			'n8n User Auth': words('a choice of Authentication'),
			None: words('a choice of Authentication'),
			'Let the model define this parameter': words("n8n's button beside a tool's field"),
			'Every 15 Minutes': node,
			'Fetch Video': node,
			'Save Fetched Video': node,
			'Record Task': node,
			Answer: node,
			'Mark Saved': node,
			'Mark Fetched': node,
			'Callback Never Came': node,
			'Fetch Now': node,
			'The table.': HEADING,
			'To let others use the chat': HEADING,
			'One message starts at most 3 videos.': HEADING,
			'Every task ID in the table.': HEADING,
			'The task IDs are kept outside the agent': HEADING,
			'A video whose report never came is fetched.': HEADING,
			'No row in `agent_videos`': HEADING,
			'"The agent says it cannot start more videos"': HEADING,
			'The public chat answers 401 or asks for a password': HEADING,
			'Overview → Data tables': { kind: 'ui', from: 'home' },
			'Create data table': {
				kind: 'ui',
				from: 'home',
				path: ['Overview', 'Data tables', 'Create data table'],
			},
			'`agent_videos`': words('the name to give the table'),
			session: COLUMN,
			user: COLUMN,
			prompt: COLUMN,
			task_id: COLUMN,
			status: COLUMN,
			video_file: COLUMN,
			error: COLUMN,
			asked_at: COLUMN,
			String: words('the column type in the table'),
			Date: words('the column type in the table'),
			'Max Submissions per Execution': fieldOf('Start Video'),
			Mode: words('shown once Make Chat Publicly Available is on'),
			'Embedded Chat': words('a choice of Mode'),
			'Include User in Output': words('shown once Authentication is n8n User Auth'),
			'Return Intermediate Steps': fieldOf('AI Agent'),
		},
	},
];

/** Parts of a word that names a path of clicks ("⋯ → Import → From file"). */
export const partsOf = (word: string) => word.split('→').map((p) => p.trim());

/**
 * What a `field` place says its panel shows: each label (split at "→": 'Resource → Operation')
 * and, where the word is not that label (nor "Settings → label"), the value each shows: the
 * place's `value`, or else the word ('Task → Wait for Completion' under Resource → Operation).
 */
export function fieldShows(
	word: string,
	place: Extract<Place, { kind: 'field' }>,
): Array<{ label: string; value?: string }> {
	const label = place.label ?? word;
	const value =
		place.value ?? ([label, `${place.tab} → ${label}`].includes(word) ? undefined : word);
	const labels = partsOf(label);
	const values = value === undefined ? [] : labels.length > 1 ? partsOf(value) : [value];
	if (value !== undefined && values.length !== labels.length)
		throw new Error(`"${word}": ${values.length} values for the ${labels.length} fields ${label}`);
	return labels.map((l, i) => ({ label: l, value: values[i] }));
}

/**
 * The words a guide sets in **bold** or _italics_, in prose (code, code blocks and HTML
 * comments aside), whitespace made single.
 */
export function guideWords(markdown: string): string[] {
	const text = markdown
		.replace(/```[\s\S]*?```/g, '')
		.replace(/<!--[\s\S]*?-->/g, '')
		.replace(/`[^`\n]*`/g, (code) => (/^`[a-z_]+`$/.test(code) ? code : '`…`'));
	const found = new Set<string>();
	for (const m of text.matchAll(/\*\*([^*\n]+(?:\n[^*\n]+)?)\*\*/g))
		found.add(m[1].replace(/\s+/g, ' ').trim());
	const rest = text.replace(/\*\*[^*]+\*\*/g, ' ');
	for (const m of rest.matchAll(/(?<![\w\\])_([^_\n][^_]*?)_(?!\w)/g))
		found.add(m[1].replace(/\s+/g, ' ').trim());
	return [...found].filter((w) => w !== '`…`');
}

export const readGuide = (guide: Guide) => fs.readFileSync(path.join(ROOT, guide.file), 'utf8');

export interface ExampleWorkflow {
	name: string;
	nodes: Array<{ name: string; type: string; parameters: Record<string, unknown> }>;
}

export const readExample = (file: string) =>
	JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8')) as ExampleWorkflow;
