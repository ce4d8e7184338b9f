import type { IExecuteFunctions } from 'n8n-workflow';

import type { ApiContext } from '../../shared/transport/api';
import { isIpAddress, privateAddressKind } from '../../shared/transport/fileHosts';

// Issue 30: a result is seen soonest, for no status reads, by Wait Mode → Park Until Callbacks,
// which needs the service to reach this n8n. The editor cannot tell a node whether WEBHOOK_URL is
// public (a notice's text is fixed, a node hint's condition sees no $execution), but a run can:
// after a manual run that polled, the output pane says so when the resume URL is public.

export const PARK_HINT =
	"This n8n's webhook URL looks public: Options → Wait Mode → Park Until Callbacks sees each result as soon as the service calls back, with no status reads and no execution running while it waits.";

/** Names that only resolve inside a network (docker service names have no dot). */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|lan|home\.arpa|intranet|corp)$/i;

/** Whether a URL's host could be reached by a service on the internet (no DNS lookup). */
export function looksPublic(url: string): boolean {
	let host: string;
	try {
		const parsed = new URL(url);
		if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return false;
		host = parsed.hostname.replace(/^\[|\]$/g, '');
	} catch {
		return false;
	}
	if (isIpAddress(host)) return privateAddressKind(host) === undefined;
	return host.includes('.') && !LOCAL_NAME.test(host);
}

const hinted = new WeakSet<object>();

/** Once per node run, in manual runs only: the hint above, when the resume URL is public. */
export function hintParking(ctx: ApiContext): void {
	if (hinted.has(ctx) || !('addExecutionHints' in ctx)) return;
	hinted.add(ctx);
	const run = ctx as IExecuteFunctions;
	try {
		if (run.getMode() !== 'manual') return;
		const resumeUrl = run.evaluateExpression('{{ $execution.resumeUrl }}', 0);
		if (typeof resumeUrl !== 'string' || !looksPublic(resumeUrl)) return;
		run.addExecutionHints({ message: PARK_HINT, type: 'info', location: 'outputPane' });
	} catch {
		// A hint is never worth failing the run over.
	}
}
