// The resume URL's signature is a secret: masked wherever a text may carry it.
import { maskSignature, parkCallbackUrl } from '../../../nodes/MediaGeneration/actions/durableWait';

const RESUME = 'https://n8n.example.com/webhook-waiting/42?signature=0123456789abcdef0123456789abcdef';

test('the callback URL of an item is the resume URL with the item index', () => {
	const url = new URL(parkCallbackUrl(RESUME, 7));
	expect(url.pathname).toBe('/webhook-waiting/42');
	expect(url.searchParams.get('signature')).toBe('0123456789abcdef0123456789abcdef');
	expect(url.searchParams.get('mgi')).toBe('7');
});

test.each([
	['plain', `POST ${RESUME}&mgi=3 failed`, 'POST https://n8n.example.com/webhook-waiting/42?signature=***&mgi=3 failed'],
	['url-encoded', 'callback_url=https%3A%2F%2Fx%2Fw%3Fsignature%3Dabc123def%26mgi%3D1', 'callback_url=https%3A%2F%2Fx%2Fw%3Fsignature%3D***'],
	['in JSON', '{"callback_url":"http://x/w?signature=abc123"}', '{"callback_url":"http://x/w?signature=***"}'],
	['last parameter', `${RESUME}`, 'https://n8n.example.com/webhook-waiting/42?signature=***'],
])('maskSignature: %s', (_label, text, expected) => {
	expect(maskSignature(text)).toBe(expected);
	expect(maskSignature(text)).not.toContain('0123456789abcdef');
});

test('maskSignature leaves texts without a signature alone', () => {
	expect(maskSignature('task task_1 failed: nsfw')).toBe('task task_1 failed: nsfw');
});
