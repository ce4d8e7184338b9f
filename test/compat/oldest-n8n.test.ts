// The oldest n8n the package supports (tools/ensure-n8n.js N8N_OLDEST_VERSION; why that one:
// docs/compatibility.md): the saved-workflow fixtures run on it, one park-mode run included,
// exactly as the e2e layer runs them on n8n 2.41.1; the ones neither runs are NOT_RUN_HERE.
import { N8N_OLDEST_VERSION } from '../../tools/ensure-n8n';
import { savedWorkflowsSuite } from '../e2e/savedWorkflows';

jest.setTimeout(300_000);

describe(`saved workflows and examples in the oldest supported n8n, ${N8N_OLDEST_VERSION}`, () =>
	savedWorkflowsSuite({ name: 'oldest', n8nVersion: N8N_OLDEST_VERSION }));
