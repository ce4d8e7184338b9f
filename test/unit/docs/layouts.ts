// Test-only. The one source of what each workflow layout keeps when n8n stops: README.md's
// promise and docs/reliability.md's layout table are both written from it, and
// test/unit/docs/layouts.test.ts holds them equal to it. Every cell names the test that shows
// it; a cell no test shows says "not tested".

/** The test that shows a cell: a file, and words of one of its test titles. */
export interface ShownBy {
	file: string;
	title: string;
}

export interface Cell {
	text: string;
	/** One test, or one for each part of the cell's claim. */
	shownBy?: ShownBy | ShownBy[];
}

/** The situations, in the table's column order. */
export const SITUATIONS = [
	'n8n killed or restarted (regular mode)',
	'Queue mode: a worker killed, the process that queued it alive',
	'Queue mode: the worker and the process that queued it lost',
	'n8n killed while the tasks are being sent',
] as const;

export interface Layout {
	name: string;
	/** What the README's promise says of it (no code words: the README's first screen). */
	promise: string;
	cells: [Cell, Cell, Cell, Cell];
}

const notTested: Cell = { text: 'not tested' };

const TABLE_E2E = 'test/e2e/table-job.test.ts';
const CALLBACK_E2E = 'test/e2e/callback.test.ts';
const QUEUE = 'test/queue/queue.test.ts';
const RETRIES = 'test/engine/retries.test.ts';
const PARKED_E2E = 'test/e2e/durable-wait.test.ts';
const LOST_RUNS_E2E = 'test/e2e/lost-runs.test.ts';
const AGENT = 'test/agent/agent.test.ts';

export const LAYOUTS: Layout[] = [
	{
		name: 'The table as the ledger: each row claimed before it is sent, its task ID written into the row, then Task → Wait for Completion on every row with a task ID ([the table job](spreadsheet-to-videos.md))',
		promise: 'the table job collects every video already paid for and never pays twice for a row',
		cells: [
			{
				text: 'when n8n starts again it collects every video on its own, sending nothing again',
				shownBy: { file: TABLE_E2E, title: 'killed (SIGKILL) while it waits for the videos' },
			},
			{
				text: 'the next run sends nothing again and every row gets its video',
				shownBy: {
					file: QUEUE,
					title: 'the worker SIGKILLed while the job waits, the process that queued it alive',
				},
			},
			{
				text: 'the next run sends nothing again and every row gets its video',
				shownBy: {
					file: QUEUE,
					title: 'the worker and the webhook process that queued the job both SIGKILLed',
				},
			},
			{
				text: 'the rows of the batch being sent (at most 50) are marked "may have been charged" and never sent again; every other row gets its video',
				shownBy: { file: TABLE_E2E, title: 'killed (SIGKILL) while it sends' },
			},
		],
	},
	{
		name: 'The AI Agent job: Start Video (_Wait for Completion_ off) with a Callback URL to the Trigger that saves each video, a row per task in a Data table, and a scheduled fetch of the rows whose callback never came ([an AI Agent that makes videos](agent-videos.md))',
		promise:
			"the AI Agent job keeps every task ID in a table and later fetches each video whose 'ready' call from the service never arrived, without paying again",
		cells: [
			{
				text: "every task ID is in the table; a video whose callback came while n8n was down stays 'submitted' until the save workflow's scheduled fetch downloads it by its task ID, saves it and marks its row saved; nothing is submitted again",
				shownBy: {
					file: AGENT,
					title: 'n8n restarted while a video renders, its callback lost',
				},
			},
			notTested,
			notTested,
			notTested,
		],
	},
	{
		name: 'Crash-safe: Generate with _Wait for Completion_ off → Task → Wait for Completion, _Save execution progress_ on',
		promise:
			'a Generate with Wait for Completion off, followed by Task → Wait for Completion, gives back every result when you press Retry on the stopped execution, if the workflow setting Save execution progress is on (not in queue mode when only a worker is killed: n8n erases that execution, so nothing is left to retry; a Callback URL to a Media Generation Trigger still receives every video)',
		cells: [
			{
				text: 'Retry returns every result, submits nothing',
				shownBy: {
					file: CALLBACK_E2E,
					title: 'the crash-safe layout returns the 6 results byte for byte',
				},
			},
			{
				text: 'n8n wipes the execution: nothing to retry; a Callback URL to a Trigger delivers every task',
				shownBy: {
					file: QUEUE,
					title: 'the Callback URL delivers every task to the trigger, Retry submits nothing',
				},
			},
			{
				text: 'Retry returns every result, submits nothing',
				shownBy: {
					file: QUEUE,
					title: 'the Retry of the crash-safe layout returns the 6 results, submitting nothing',
				},
			},
			{
				text: "Retry sends nothing again: the items of the submitting node's lost run say what to do",
				shownBy: {
					file: RETRIES,
					title: 'sends nothing again: every item says its submission may have been accepted',
				},
			},
		],
	},
	{
		name: 'Generate with _Wait Mode: Park Until Callbacks_ → Task → Wait for Completion',
		promise:
			'a Generate set to Park Until Callbacks finishes by itself once n8n is back, paying nothing twice',
		cells: [
			{
				text: 'stopped while parked and started again: the callbacks complete it, nothing sent twice',
				shownBy: {
					file: PARKED_E2E,
					title: 'n8n stopped while parked and started again, the callbacks complete it',
				},
			},
			notTested,
			notTested,
			notTested,
		],
	},
	{
		name: 'One Generate that waits (_Wait for Completion_ on): images and quick tries',
		promise:
			'a single Generate that waits for its results (fine for images and quick tries) pays nothing again on Retry, but the results of the interrupted run do not come back into the workflow: each item says where to find them',
		cells: [
			{
				text: "Retry sends nothing again, also for a loop's later run (Loop Over Items, _Save execution progress_ on); every item of the run n8n lost says what to do; that run's results are lost to n8n",
				shownBy: [
					{ file: CALLBACK_E2E, title: 'n8n killed while the node waits (SIGKILL)' },
					{
						file: LOST_RUNS_E2E,
						title:
							'Loop Over Items of 2 batches, n8n SIGKILLed while the second batch waits, started again: the Retry submits nothing again',
					},
				],
			},
			notTested,
			notTested,
			{
				text: 'Retry sends nothing again; every item says what to do',
				shownBy: {
					file: RETRIES,
					title: 'sends nothing again: every item says its submission may have been accepted',
				},
			},
		],
	},
];

/** README.md's promise, one bullet. */
export const README_PROMISE = `- **Long videos, paid once.** If n8n stops while videos are being made (a restart, a crash, an update): ${LAYOUTS.map(
	(l) => l.promise,
).join('; ')} ([what each layout keeps](docs/reliability.md#what-each-layout-keeps)).`;

const escape = (text: string) => text.replace(/\|/g, '\\|');

/** docs/reliability.md's table, as rows of cells (the header first). */
export function tableRows(): string[][] {
	return [
		['Layout', ...SITUATIONS],
		...LAYOUTS.map((l) => [l.name, ...l.cells.map((c) => c.text)].map(escape)),
	];
}
