// The nodes' side of the one http:// rule for the Base URL (issue 28, finding 2), against the
// table the credential's Test is held to as well (test/engine/credentials.test.ts).
import { BASE_URL_TABLE } from '../../fixtures/base-url-table';
import { normaliseBaseUrl } from '../../../nodes/shared/transport/api';

describe('the nodes apply the Base URL table', () => {
	it.each(BASE_URL_TABLE)('%s → %s', (template, verdict) => {
		const url = template.replace('{port}', '8080');
		if (verdict === 'refused') {
			expect(() => normaliseBaseUrl(url)).toThrow(
				/uses http:\/\/ for a host that is not this machine|is not an http\(s\) address/,
			);
		} else {
			// Used as it is: the same text, trimmed, without its trailing slash (paths are appended).
			expect(normaliseBaseUrl(url)).toBe(url.trim().replace(/\/$/, ''));
		}
	});
});
