// The resume URL's signature is a secret: masked wherever a text may carry it.
import { parkCallbackUrl } from '../../../nodes/MediaGeneration/actions/durableWait';
import { maskCallbackUrl } from '../../../nodes/shared/callbackUrl';
import { scrubSecret } from '../../../nodes/shared/transport/faults';

const RESUME =
	'https://n8n.example.com/webhook-waiting/42?signature=0123456789abcdef0123456789abcdef';

test('the callback URL of an item is the resume URL with the item index', () => {
	const url = new URL(parkCallbackUrl(RESUME, 7));
	expect(url.pathname).toBe('/webhook-waiting/42');
	expect(url.searchParams.get('signature')).toBe('0123456789abcdef0123456789abcdef');
	expect(url.searchParams.get('mgi')).toBe('7');
});

test.each([
	[
		'plain',
		`POST ${RESUME}&mgi=3 failed`,
		'POST https://n8n.example.com/webhook-waiting/42?signature=***&mgi=3 failed',
	],
	[
		'url-encoded',
		'callback_url=https%3A%2F%2Fx%2Fw%3Fsignature%3Dabc123def%26mgi%3D1',
		'callback_url=https%3A%2F%2Fx%2Fw%3Fsignature%3D***%26mgi%3D1',
	],
	[
		'in JSON',
		'{"callback_url":"http://x/w?signature=abc123"}',
		'{"callback_url":"http://x/w?signature=***"}',
	],
	['last parameter', `${RESUME}`, 'https://n8n.example.com/webhook-waiting/42?signature=***'],
])('scrubSecret: %s', (_label, text, expected) => {
	expect(scrubSecret(text)).toBe(expected);
	expect(scrubSecret(text)).not.toContain('0123456789abcdef');
});

test('scrubSecret leaves texts without a signature alone', () => {
	expect(scrubSecret('task task_1 failed: nsfw')).toBe('task task_1 failed: nsfw');
});

test("maskCallbackUrl masks n8n's signature as it masks the trigger's secret and sig", () => {
	const masked = maskCallbackUrl(`${RESUME}&mgi=2&sig=abcdefabcdefabcdefabcd`);
	expect(masked).toBe('https://n8n.example.com/webhook-waiting/42?signature=***&mgi=2&sig=***');
});
