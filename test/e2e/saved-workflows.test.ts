// The saved-workflow fixtures of released versions run in n8n 2.41.1 (see savedWorkflows.ts).
import { N8N_VERSION } from '../../tools/ensure-n8n';
import { savedWorkflowsSuite } from './savedWorkflows';

jest.setTimeout(300_000);

describe(`saved workflows of released versions in n8n ${N8N_VERSION}`, () =>
	savedWorkflowsSuite({ name: 'current' }));
