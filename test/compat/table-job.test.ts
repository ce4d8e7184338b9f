// The table job (examples/table-rows-to-videos.json and its batch sub-workflow) in the oldest
// supported n8n (tools/ensure-n8n.js N8N_OLDEST_VERSION): one run, two runs at once, a row whose
// files expired, exactly as the e2e layer runs them on n8n 2.41.1 (test/e2e/tableJob.ts). The
// crash cases run on 2.41.1 only (test/e2e/table-job.test.ts).
import { N8N_OLDEST_VERSION } from '../../tools/ensure-n8n';
import { tableJobSuite } from '../e2e/tableJob';

jest.setTimeout(400_000);

describe(`the table job in the oldest supported n8n, ${N8N_OLDEST_VERSION}`, () => {
	tableJobSuite({ name: 'table-job-oldest', n8nVersion: N8N_OLDEST_VERSION });
});
