// The one rule for a Base URL over http://, shared by the nodes (api.ts) and the credential's
// Test (credentials/MediaGenerationApi.credentials.ts, which writes it into an n8n expression):
// http:// only to this machine, read on the Base URL's text as entered (trimmed). The host part
// must be one of these exactly, followed by an optional port and then a slash or the end; so
// `http://collector.example#.localhost`, `http://localhost@collector.example` and the like are
// not this machine, whatever a URL parser would make of the rest.

/** http:// to this machine: localhost, *.localhost, 127.x.x.x, 0.0.0.0, [::1] or [::]. */
export const LOCAL_HTTP_BASE_URL =
	/^http:\/\/(localhost|([a-z0-9-]+\.)+localhost|127(\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\])(:\d{1,5})?(\/|$)/i;

/** Whether the (trimmed) Base URL is http:// to another host: the key would travel in clear. */
export function isClearTextToAnotherHost(baseUrl: string): boolean {
	const text = baseUrl.trim();
	return /^http:/i.test(text) && !LOCAL_HTTP_BASE_URL.test(text);
}
