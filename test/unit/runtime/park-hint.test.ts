// Issue 30: whether this n8n's webhook URL could be reached by the service (no DNS lookup).
import { looksPublic } from '../../../nodes/MediaGeneration/polling/parkHint';

test.each([
	['https://n8n.example.com/webhook-waiting/12?signature=x', true],
	['http://8.8.4.4:5678/webhook-waiting/12', true],
	// A documentation range is refused as a file host (issue 28), so it is not public here either.
	['http://203.0.113.10:5678/webhook-waiting/12', false],
	['http://localhost:5678/webhook-waiting/12', false],
	['http://127.0.0.1:5678/webhook-waiting/12', false],
	['http://192.168.1.20:5678/webhook-waiting/12', false],
	['http://[::1]:5678/webhook-waiting/12', false],
	['http://n8n:5678/webhook-waiting/12', false],
	['https://n8n.internal/webhook-waiting/12', false],
	['https://box.local/webhook-waiting/12', false],
	['not a url', false],
])('%s looks public: %s', (url, expected) => {
	expect(looksPublic(url)).toBe(expected);
});
