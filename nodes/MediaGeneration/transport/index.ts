// The node's calls to the service. The request code itself lives in nodes/shared so that the
// trigger node parses, retries and downloads exactly the same way.
export {
	apiRequest,
	getApiCredentials,
	getTaskStatus,
	normaliseBaseUrl,
	submitTask,
	type ApiContext,
} from '../../shared/api';
export { downloadTaskFiles } from '../../shared/files';
export { waitForTask, WaitTimeoutError, type WaitOptions, type WaitResult } from './wait';
