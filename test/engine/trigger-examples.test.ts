// The example pair as a user runs it: examples/callback-submit.json submits a video without
// waiting, with the trigger's Production URL as Callback URL and a Callback Reference;
// examples/callback-receive.json (the Media Generation Trigger) gets the simulator's callback
// and starts with the confirmed task, the reference and the file.
import { randomBytes } from 'crypto';

import type { IDataObject, INode } from 'n8n-workflow';

import { MEDIA_GENERATION_TYPE, loadWorkflowFile, runWorkflow } from '../harness';
import { startCallbackReceiver } from '../harness/webhook';
import { startSimulator } from '../simulator';

const API_KEY = `sk-${randomBytes(12).toString('hex')}`;

it('callback-submit.json ends at once with the task; callback-receive.json gets its result', async () => {
	const sim = await startSimulator({ apiKey: API_KEY, defaultDurationMs: 200 });
	// allowPrivateFileHosts: the file host runs on this machine (127.0.0.1), a loopback address the node refuses by default.
	const credentials = {
		mediaGenerationApi: { apiKey: API_KEY, baseUrl: sim.baseUrl, allowPrivateFileHosts: true },
	};
	const receive = loadWorkflowFile('examples/callback-receive.json');
	const receiver = await startCallbackReceiver({ workflow: receive, credentials });
	try {
		// The example's trigger keeps its webhookId, so its Production URL has the same path
		// as the one written in callback-submit.json: only the host differs.
		const submit = loadWorkflowFile('examples/callback-submit.json');
		const node = submit.nodes.find((n) => n.type === MEDIA_GENERATION_TYPE) as INode;
		const options = node.parameters.options as IDataObject;
		const written = new URL(String(options.callbackUrl));
		expect(new URL(receiver.url).pathname).toBe(written.pathname);
		options.callbackUrl = receiver.url;

		const sent = await runWorkflow(submit, { credentials });
		expect(sent.status).toBe('success');
		const [submitted] = sent.outputOf(node.name);
		expect(submitted.json).toMatchObject({ status: 'not_started', model: 'vidmodel-1.5-pro' });
		const reference = submitted.json.reference as string;
		expect(reference).toMatch(/^order-\d{8}-\d{6}$/);
		// Ended before the task did: nothing waited for the video.
		expect(sim.task(submitted.json.task_id as string)!.endedAt).toBeUndefined();

		const [delivery] = await receiver.waitFor(1);
		expect(delivery.status).toBe(200);
		const execution = await delivery.execution!;
		const [item] = execution.outputOf('Store the Result (replace me)');
		expect(item.json).toMatchObject({
			task_id: submitted.json.task_id,
			status: 'finished',
			reference,
			verified: true,
		});
		expect(item.binary?.data.mimeType).toBe('video/mp4');
		const bytes = await receiver.readBinary(item);
		expect(bytes.subarray(4, 8).toString('ascii')).toBe('ftyp');
		// Same item shape as the generation node's waiting path, plus the trigger's fields.
		expect(Object.keys(item.json).sort()).toEqual(
			// `outcome` (a ledger row's status) is on the node's items only.
			[
				...Object.keys(submitted.json).filter((k) => k !== 'callback_url' && k !== 'outcome'),
				'verified',
				'signed',
			]
				.filter((k, i, all) => all.indexOf(k) === i)
				.sort(),
		);
	} finally {
		await sim.idle();
		await receiver.close();
		await sim.close();
	}
});
