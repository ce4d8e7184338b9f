// Issue 30: after a manual run that polled, the output pane leads to Wait Mode → Park Until
// Callbacks when this n8n's webhook URL is public (the service could call it back), through
// n8n-core's real execution hints. Not when the URL is local, nor in production runs.
import type { IDataObject } from 'n8n-workflow';

import { PARK_HINT } from '../../nodes/MediaGeneration/polling/parkHint';
import { NODE, mediaWorkflow, run, useSimulator } from './support';

const sim = useSimulator();
jest.setTimeout(60_000);

const params: IDataObject = {
	resource: 'image',
	operation: 'generate',
	modelId: 'image-1',
	prompt: '={{ $json.prompt }}',
	options: { downloadFiles: false },
};

async function hintsOf(options: { baseUrl?: string; mode?: 'manual' | 'trigger' }) {
	const result = await run(sim(), mediaWorkflow(params), {
		items: [{ prompt: 'hint [sim:duration=300]' }, { prompt: 'hint [sim:duration=300]' }],
		...options,
	});
	expect(result.outputOf(NODE).map((i) => i.json.status)).toEqual(['finished', 'finished']);
	const task = result.runData[NODE][0] as { hints?: Array<{ message: string }> };
	return (task.hints ?? []).map((h) => h.message);
}

describe('the Park Until Callbacks hint', () => {
	it('appears once after a manual run that polled, when the webhook URL is public', async () => {
		expect(await hintsOf({ baseUrl: 'https://n8n.example.com/' })).toEqual([PARK_HINT]);
	});

	it('does not appear when the webhook URL is local, nor in production runs', async () => {
		expect(await hintsOf({})).toEqual([]);
		expect(await hintsOf({ baseUrl: 'https://n8n.example.com/', mode: 'trigger' })).toEqual([]);
	});
});
