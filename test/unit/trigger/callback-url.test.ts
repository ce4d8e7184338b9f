import {
	checkSignature,
	maskCallbackUrl,
	readCallbackQuery,
	referenceSignature,
	scrubCallbackSecrets,
	signCallbackUrl,
	triggerWebhookIdOf,
	withReference,
} from '../../../nodes/shared/callbackUrl';

const KEY = ['sk', 'unit', 'credential'].join('-');
const BASE = 'https://n8n.example/webhook/abc/media-generation';

/** The query as n8n (express) hands it to the trigger: repeated keys become arrays. */
function queryOf(url: string) {
	const out: Record<string, string | string[]> = {};
	for (const [k, v] of new URL(url).searchParams) {
		const prev = out[k];
		out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
	}
	return readCallbackQuery(out);
}

describe('callback URL contract: the node signs, the trigger checks', () => {
	it('a URL the node built passes, with or without a reference', () => {
		for (const url of [
			signCallbackUrl(withReference(BASE, 'row 7'), KEY),
			signCallbackUrl(BASE, KEY),
			signCallbackUrl(withReference(`${BASE}?secret=s3cr3t`, 'r&1=ü'), KEY),
		]) {
			expect(checkSignature(queryOf(url), KEY, 'abc')).toBe('valid');
		}
	});

	it('is deterministic (Retry On Fail compares request bodies) and replaces an old sig', () => {
		const once = signCallbackUrl(withReference(BASE, 'a'), KEY);
		expect(signCallbackUrl(once, KEY)).toBe(once);
		expect(new URL(once).searchParams.getAll('sig')).toHaveLength(1);
	});

	it('a changed or added reference fails the check', () => {
		const signed = new URL(signCallbackUrl(withReference(BASE, 'row-1'), KEY));
		signed.searchParams.set('ref', 'row-2');
		expect(checkSignature(queryOf(signed.toString()), KEY, 'abc')).toBe('invalid');
		// A reference added to a URL signed without one.
		const bare = new URL(signCallbackUrl(BASE, KEY));
		bare.searchParams.set('ref', 'forged');
		expect(checkSignature(queryOf(bare.toString()), KEY, 'abc')).toBe('invalid');
		// A reference removed from a URL signed with one.
		const removed = new URL(signCallbackUrl(withReference(BASE, 'x'), KEY));
		removed.searchParams.delete('ref');
		expect(checkSignature(queryOf(removed.toString()), KEY, 'abc')).toBe('invalid');
	});

	it('another credential, a garbled, repeated or missing sig fail', () => {
		const url = signCallbackUrl(withReference(BASE, 'row-1'), KEY);
		expect(checkSignature(queryOf(url), 'sk-other-key', 'abc')).toBe('invalid');
		expect(checkSignature(queryOf(url), '', 'abc')).toBe('invalid');
		const sig = new URL(url).searchParams.get('sig')!;
		expect(checkSignature(queryOf(`${url}&sig=${sig}`), KEY, 'abc')).toBe('invalid');
		for (const bad of [
			'',
			'x',
			`${sig}A`,
			sig.replace(/./, (c) => (c === 'A' ? 'B' : 'A')),
			'%00'.repeat(22),
		]) {
			const u = new URL(url);
			u.searchParams.set('sig', bad);
			expect(checkSignature(queryOf(u.toString()), KEY, 'abc')).toBe('invalid');
		}
		expect(checkSignature(queryOf(withReference(BASE, 'row-1')), KEY, 'abc')).toBe('missing');
	});

	it('every URL the node signs has a nonce of its own, under the signature (issue 35)', () => {
		const urls = [1, 2, 3].map(() => new URL(signCallbackUrl(withReference(BASE, 'r'), KEY)));
		const nonces = urls.map((u) => u.searchParams.get('nonce'));
		expect(nonces.every((n) => /^[A-Za-z0-9_-]{16}$/.test(n ?? ''))).toBe(true);
		expect(new Set(nonces).size).toBe(3);
		const url = urls[0];
		const changed = new URL(url);
		changed.searchParams.set('nonce', nonces[1]!);
		const removed = new URL(url);
		removed.searchParams.delete('nonce');
		const repeated = new URL(url);
		repeated.searchParams.append('nonce', nonces[0]!);
		const garbled = new URL(url);
		garbled.searchParams.set('nonce', `${nonces[0]}=`);
		for (const bad of [changed, removed, repeated, garbled]) {
			expect(checkSignature(queryOf(bad.toString()), KEY, 'abc')).toBe('invalid');
		}
		expect(queryOf(url.toString()).nonce).toBe(nonces[0]);
	});

	it('URLs signed before nonces existed (sig over the reference) stay valid, and a nonce cannot be added to them', () => {
		for (const ref of ['row-1', undefined]) {
			const legacy = new URL(ref === undefined ? BASE : withReference(BASE, ref));
			legacy.searchParams.append('sig', referenceSignature(KEY, ref));
			expect(checkSignature(queryOf(legacy.toString()), KEY, 'abc')).toBe('valid');
			expect(queryOf(legacy.toString()).nonce).toBeUndefined();
			legacy.searchParams.append('nonce', 'AAAAAAAAAAAAAAAA');
			expect(checkSignature(queryOf(legacy.toString()), KEY, 'abc')).toBe('invalid');
		}
	});

	it("a URL is signed for the Trigger its path names: that Trigger's check passes, another Trigger's on the same credential fails (issue 51, finding 1)", () => {
		const production = withReference(BASE, 'row-1');
		const test = withReference('https://n8n.example/webhook-test/abc/media-generation', 'row-1');
		expect(triggerWebhookIdOf(production)).toBe('abc');
		expect(triggerWebhookIdOf(test)).toBe('abc');
		for (const url of [production, test]) {
			const query = queryOf(signCallbackUrl(url, KEY));
			expect(checkSignature(query, KEY, 'abc')).toBe('valid');
			expect(checkSignature(query, KEY, 'xyz')).toBe('invalid');
			// A Trigger with no webhookId (none of n8n's) accepts only URLs signed for none.
			expect(checkSignature(query, KEY)).toBe('invalid');
		}
		// The same query on another Trigger's URL: signed for abc, checked by xyz.
		const other = signCallbackUrl(production, KEY).replace('/abc/', '/xyz/');
		expect(checkSignature(queryOf(other), KEY, 'xyz')).toBe('invalid');
	});

	it('a URL whose path names no Trigger (a proxy) is signed for none and passes on any Trigger of the credential, as URLs signed before issue 51 do', () => {
		const proxy = withReference('https://hooks.example/mg?x=1', 'row-1');
		expect(triggerWebhookIdOf(proxy)).toBeUndefined();
		const query = queryOf(signCallbackUrl(proxy, KEY));
		expect(checkSignature(query, KEY, 'abc')).toBe('valid');
		expect(checkSignature(query, KEY)).toBe('valid');
		// The form written before issue 51: nonce and reference, no Trigger.
		const nonce = 'AAAAAAAAAAAAAAAA';
		const older = new URL(withReference(BASE, 'row-1'));
		older.searchParams.append('nonce', nonce);
		older.searchParams.append('sig', referenceSignature(KEY, 'row-1', nonce));
		expect(checkSignature(queryOf(older.toString()), KEY, 'abc')).toBe('valid');
		expect(referenceSignature(KEY, 'row-1', nonce, 'abc')).not.toBe(
			referenceSignature(KEY, 'row-1', nonce),
		);
	});

	it('the signature is not the API key and does not contain it', () => {
		const sig = referenceSignature(KEY, 'r');
		expect(sig).toMatch(/^[A-Za-z0-9_-]{22}$/);
		expect(sig).not.toContain(KEY);
		expect(referenceSignature(KEY, undefined)).not.toBe(referenceSignature(KEY, ''));
	});
});

describe('masking and scrubbing', () => {
	it('masks secret and sig in a URL, keeping the order of the other parameters', () => {
		const url = signCallbackUrl(withReference(`${BASE}?secret=s3cr3t`, '7'), KEY);
		const masked = maskCallbackUrl(url);
		const nonce = new URL(url).searchParams.get('nonce');
		expect(masked).toBe(`${BASE}?secret=***&ref=7&nonce=${nonce}&sig=***`);
		expect(maskCallbackUrl(`${BASE}?ref=7`)).toBe(`${BASE}?ref=7`);
	});

	it('scrubs secret= and sig= values from any text, raw, encoded or HTML-escaped', () => {
		const url = signCallbackUrl(withReference(`${BASE}?secret=hunter2`, 'r1'), KEY);
		const sig = new URL(url).searchParams.get('sig')!;
		const texts = [
			`callback_url ${url} is not reachable`,
			`{"callback_url":"${url}"}`,
			`quoted ${encodeURIComponent(url)}`,
			`html ${url.replace(/&/g, '&amp;')}`,
		];
		for (const text of texts) {
			const clean = scrubCallbackSecrets(text, ['hunter2', sig]);
			expect(clean).not.toContain('hunter2');
			expect(clean).not.toContain(sig);
			expect(clean).toContain('***');
		}
		// Given values are scrubbed wherever they appear, even outside a URL.
		expect(scrubCallbackSecrets('the secret is hunter2.', ['hunter2'])).toBe('the secret is ***.');
	});
});
