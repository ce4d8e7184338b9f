// The one rule for the Base URL, shared by the nodes (api.ts) and the credential's Test
// (credentials/MediaGenerationApi.credentials.ts, which writes it into an n8n expression): an
// allow-list read on exactly the text that is used (trimmed by String.prototype.trim, which drops
// every Unicode space, U+00A0, U+FEFF, U+2028, U+3000 included), never on what a URL parser makes
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

/**
 * The Base URL as both sides use it: String.prototype.trim() (which also drops U+00A0, U+FEFF,
 * U+2028, U+3000 and every other Unicode space), then trailing slashes dropped.
 */
export function usedBaseUrl(raw: unknown): string {
	return String(raw).trim().replace(/\/+$/, '');
}

/** usedBaseUrl, written as the n8n expression the credential's Test evaluates. */
export const USED_BASE_URL_EXPRESSION = 'String($credentials.baseUrl).trim().replace(/\\/+$/, "")';

/**
 * What a URL parser makes of a text before reading its scheme (leading and trailing C0 controls
 * and spaces dropped, then every tab and newline): applied to the used text, never to the raw one.
 */
const PARSER_EDGES_SOURCE = '^[\\u0000-\\u0020]+|[\\u0000-\\u0020]+$';
const PARSER_EDGES = new RegExp(PARSER_EDGES_SOURCE, 'g');
const PARSER_DROPS = /[\t\n\r]/g;
const HTTP_SCHEME = /^https?:/i;

/**
 * The one verdict, on the text that will be used: `allowed` (https://, or http:// to this
 * machine as written), `refused` (a text a URL parser reads as http(s) to anything else: the key
 * would travel in clear text), or `not-http` (no http(s) scheme even then: no request can go out
 * with the key, the nodes refuse it, the Test fails with "Invalid URL").
 */
export function baseUrlVerdict(raw: unknown): 'allowed' | 'refused' | 'not-http' {
	const used = usedBaseUrl(raw);
	if (ALLOWED_BASE_URL.test(used)) return 'allowed';
	const parsed = used.replace(PARSER_EDGES, '').replace(PARSER_DROPS, '');
	return HTTP_SCHEME.test(parsed) ? 'refused' : 'not-http';
}

/**
 * baseUrlVerdict as an n8n expression: whether the Test may send its request to the used text
 * (allowed, or not http(s) at all). Built from the same regular expressions.
 */
export const BASE_URL_SENDABLE_EXPRESSION = `(/${ALLOWED_BASE_URL.source}/i.test(${USED_BASE_URL_EXPRESSION}) || !/${HTTP_SCHEME.source}/i.test(${USED_BASE_URL_EXPRESSION}.replace(/${PARSER_EDGES.source}/g, "").replace(/${PARSER_DROPS.source}/g, "")))`;

/** Whether the Base URL may carry the key: https, or http to this machine. */
export function isAllowedBaseUrl(baseUrl: string): boolean {
	return baseUrlVerdict(baseUrl) === 'allowed';
}
