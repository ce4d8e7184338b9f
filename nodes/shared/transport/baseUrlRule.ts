// The one rule for the Base URL, shared by the nodes (api.ts) and the credential's Test
// (credentials/MediaGenerationApi.credentials.ts, which writes it into an n8n expression): an
// allow-list read on the Base URL's text as entered (trimmed), never on what a URL parser makes
// of it (a parser drops tabs, newlines and leading control characters, so "ht\ttp://…" or
// "\u0001http://…" would be http:// to anyone). Allowed: https://, or http:// to this machine
// written as such: the host part must be one of these exactly, followed by an optional port and
// then a slash or the end; so `http://collector.example#.localhost`,
// `http://localhost@collector.example` and the like are not this machine, whatever a URL parser
// would make of the rest. Names under .localhost are not allowed over http://: they go to DNS,
// which may answer with any address.

/** https://, or http:// to this machine: localhost, 127.x.x.x, 0.0.0.0, [::1] or [::]. */
export const ALLOWED_BASE_URL =
	/^(https:\/\/[^\s/]|http:\/\/(localhost|127(\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\])(:\d{1,5})?(\/|$))/i;

/** Whether the (trimmed) Base URL may carry the key: https, or http to this machine. */
export function isAllowedBaseUrl(baseUrl: string): boolean {
	return ALLOWED_BASE_URL.test(baseUrl.trim());
}
