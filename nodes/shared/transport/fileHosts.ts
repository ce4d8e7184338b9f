import type { IDataObject, IHttpRequestOptions } from 'n8n-workflow';

import type { ApiContext } from './api';
import { classifyError, headerValue, ssrfBlock, TransportError, type Fault } from './faults';
import { FETCH_ELSEWHERE } from './fileSizeLimit';

// The rules for the addresses the node fetches files from (result files, reference images):
// http(s) only, no private, loopback or link-local address unless the credential allows it, and
// redirects followed by hand, each hop checked, at most MAX_REDIRECTS. Sends no request itself
// except through `requestCheckedHops`.

/** Redirects followed for one file, at most. */
export const MAX_REDIRECTS = 5;

/** The credential field that allows private addresses, as users see it. */
export const ALLOW_PRIVATE_FIELD = 'Allow Private Network File Hosts';

const shownUrl = (text: string) =>
	JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);

/**
 * A file URL the node may fetch: http or https only. Anything else (file:, ftp:, data:, a bare
 * path) is refused before any request, not retried.
 */
export function checkFileUrl(url: unknown): Fault | undefined {
	const text = typeof url === 'string' ? url.trim() : '';
	const shown = shownUrl(text);
	const refuse = (message: string): Fault => ({
		kind: 'config',
		code: 'ERR_UNSUPPORTED_URL',
		message,
	});
	if (!text) return refuse('the task lists a file without a URL');
	let parsed: URL;
	try {
		parsed = new URL(text);
	} catch {
		return refuse(
			`the file URL ${shown} is not a valid web address: only http:// and https:// links are downloaded`,
		);
	}
	if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
		return refuse(
			`the file URL ${shown} uses "${parsed.protocol}", which is refused: only http:// and https:// links are downloaded`,
		);
	}
	return undefined;
}

// ---------------------------------------------------------------------------------------------
// Addresses

/** Four octets, or undefined. URL parsing already turned 0x7f.1, 2130706433… into dotted form. */
function parseIPv4(text: string): number[] | undefined {
	const parts = text.split('.');
	if (parts.length !== 4) return undefined;
	const octets = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : Number.NaN));
	return octets.every((o) => o >= 0 && o <= 255) ? octets : undefined;
}

/** Eight 16-bit groups, or undefined (accepts "::", an embedded IPv4 tail and a %zone). */
function parseIPv6(input: string): number[] | undefined {
	let text = input.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
	if (!text.includes(':')) return undefined;
	const lastColon = text.lastIndexOf(':');
	if (text.slice(lastColon + 1).includes('.')) {
		// An IPv4 tail (::ffff:127.0.0.1) is two groups written another way.
		const v4 = parseIPv4(text.slice(lastColon + 1));
		if (!v4) return undefined;
		const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
		text = `${text.slice(0, lastColon + 1)}${hex(v4[0], v4[1])}:${hex(v4[2], v4[3])}`;
	}
	const halves = text.split('::');
	if (halves.length > 2) return undefined;
	const groups = (s: string) => (s === '' ? [] : s.split(':'));
	const head = groups(halves[0]);
	const rest = halves.length === 2 ? groups(halves[1]) : [];
	const hex = (g: string) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : Number.NaN);
	const known = [...head.map(hex), ...rest.map(hex)];
	if (known.some((n) => Number.isNaN(n))) return undefined;
	const missing = 8 - known.length;
	if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
	return [...head.map(hex), ...new Array<number>(missing).fill(0), ...rest.map(hex)];
}

// At least n8n's own default block list (@n8n/config's ssrf-protection.config), plus the
// shared address space, Azure's platform address and the IPv6 transition ranges.
const V4_RANGES: Array<[number[], number, string]> = [
	[[0, 0, 0, 0], 8, 'an unspecified ("this network") address, 0.0.0.0/8'],
	[[10, 0, 0, 0], 8, 'a private address (10.0.0.0/8)'],
	[[100, 64, 0, 0], 10, 'a carrier-grade NAT address (100.64.0.0/10)'],
	[[127, 0, 0, 0], 8, 'a loopback address (127.0.0.0/8)'],
	[
		[169, 254, 0, 0],
		16,
		'a link-local address (169.254.0.0/16, where cloud metadata services answer)',
	],
	[[172, 16, 0, 0], 12, 'a private address (172.16.0.0/12)'],
	// Public, but on Azure it is the host's own channel (platform DNS, metadata, agent: the
	// wire server), reachable from every virtual machine.
	[[168, 63, 129, 16], 32, "Azure's platform address (168.63.129.16, its wire server)"],
	[[192, 0, 0, 0], 24, 'an IETF protocol address (192.0.0.0/24)'],
	[[192, 0, 2, 0], 24, 'a documentation address (192.0.2.0/24)'],
	[[192, 168, 0, 0], 16, 'a private address (192.168.0.0/16)'],
	[[198, 18, 0, 0], 15, 'a benchmarking address (198.18.0.0/15)'],
	[[198, 51, 100, 0], 24, 'a documentation address (198.51.100.0/24)'],
	[[203, 0, 113, 0], 24, 'a documentation address (203.0.113.0/24)'],
	[[224, 0, 0, 0], 4, 'a multicast address (224.0.0.0/4)'],
	[[240, 0, 0, 0], 4, 'a reserved address (240.0.0.0/4)'],
];

function v4InRange(ip: number[], base: number[], bits: number): boolean {
	const value = ((ip[0] << 24) | (ip[1] << 16) | (ip[2] << 8) | ip[3]) >>> 0;
	const start = ((base[0] << 24) | (base[1] << 16) | (base[2] << 8) | base[3]) >>> 0;
	const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
	return (value & mask) >>> 0 === (start & mask) >>> 0;
}

function v4Range(ip: number[]): string | undefined {
	return V4_RANGES.find(([base, bits]) => v4InRange(ip, base, bits))?.[2];
}

function v6Range(g: number[]): string | undefined {
	const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
	const embedded = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
	if (zeros(0, 8)) return 'the unspecified address (::)';
	if (zeros(0, 7) && g[7] === 1) return 'the loopback address (::1)';
	// IPv4 written inside IPv6: mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d),
	// compatible (::a.b.c.d) and the well-known NAT64 prefix (64:ff9b::a.b.c.d) all lead to
	// the IPv4 address.
	const inner =
		zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)
			? embedded(g[6], g[7])
			: zeros(0, 4) && g[4] === 0xffff && g[5] === 0
				? embedded(g[6], g[7])
				: g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)
					? embedded(g[6], g[7])
					: undefined;
	if (inner) {
		const range = v4Range(inner);
		return range ? `${range}, written as IPv6` : undefined;
	}
	// Transition ranges whose IPv4 end is decided elsewhere (a relay, a local translator).
	if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) {
		return 'a local-use NAT64 address (64:ff9b:1::/48)';
	}
	if (g[0] === 0x2001 && g[1] === 0) return 'a Teredo tunnel address (2001::/32)';
	if (g[0] === 0x2002) {
		const range = v4Range(embedded(g[1], g[2]));
		return range ? `${range}, written as IPv6 (6to4)` : 'a 6to4 tunnel address (2002::/16)';
	}
	if (g[0] === 0x2001 && g[1] === 0xdb8) return 'a documentation address (2001:db8::/32)';
	if (g[0] === 0x100 && zeros(1, 4)) return 'a discard-only address (100::/64)';
	if ((g[0] & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)';
	if ((g[0] & 0xffc0) === 0xfec0) return 'a site-local address (fec0::/10)';
	if ((g[0] & 0xfe00) === 0xfc00) return 'a unique local (private) address (fc00::/7)';
	if ((g[0] & 0xff00) === 0xff00) return 'a multicast address (ff00::/8)';
	return undefined;
}

/**
 * What kind of non-public address `ip` is ("a loopback address (127.0.0.0/8)"…), or undefined
 * for a public address or a text that is not an IP address.
 */
export function privateAddressKind(ip: string): string | undefined {
	const v4 = parseIPv4(ip);
	if (v4) return v4Range(v4);
	const v6 = parseIPv6(ip);
	return v6 ? v6Range(v6) : undefined;
}

/** Whether `host` (a URL's hostname) is an IP address rather than a name. */
export function isIpAddress(host: string): boolean {
	return parseIPv4(host) !== undefined || parseIPv6(host) !== undefined;
}

type LookupCallback = (
	error: Error | null,
	addresses: string | Array<{ address: string; family: number }>,
) => void;
type LookupFunction = (hostname: string, options: { all: true }, callback: LookupCallback) => void;

/**
 * The DNS lookup n8n's own requests use, when this n8n offers one to nodes (n8n-core's
 * getSecureEgressFilter). Under the instance's default policy it is Node's dns.lookup, or, with
 * n8n's SSRF protection on, a lookup that applies n8n's rules as well.
 */
function lookupOf(ctx: ApiContext): LookupFunction | undefined {
	const helpers = ctx.helpers as { getSecureEgressFilter?: (policy?: 'safe') => unknown };
	if (typeof helpers.getSecureEgressFilter !== 'function') return undefined;
	try {
		const filter = helpers.getSecureEgressFilter('safe') as { createSecureLookup?: () => unknown };
		const lookup = filter?.createSecureLookup?.();
		return typeof lookup === 'function' ? (lookup as LookupFunction) : undefined;
	} catch {
		return undefined;
	}
}

async function resolveAll(lookup: LookupFunction, host: string): Promise<string[]> {
	return await new Promise<string[]>((resolve, reject) => {
		lookup(host, { all: true }, (error, addresses) => {
			if (error) return reject(error);
			resolve(
				typeof addresses === 'string' ? [addresses] : addresses.map((entry) => entry.address),
			);
		});
	});
}

/** What the address rule found wrong with a host, as a clause ("x resolves to 10.0.0.1, …"). */
export function refusedAddress(
	host: string,
	{ address, kind, resolved }: { address: string; kind: string; resolved: boolean },
): string {
	return resolved ? `${host} resolves to ${address}, ${kind}` : `${host} is ${kind}`;
}

function refusal(
	host: string,
	refused: { address: string; kind: string; resolved: boolean },
): Fault {
	const where = refusedAddress(host, refused);
	return {
		kind: 'config',
		code: 'ERR_PRIVATE_ADDRESS',
		message: `refused: ${where}. Files are not downloaded from private, loopback or link-local addresses (they can reach services inside your network). If this file host is on your own network, turn on "${ALLOW_PRIVATE_FIELD}" in the Media Generation credential. Not retried`,
	};
}

function unresolved(host: string, error: unknown): Fault {
	const code = (error as { code?: unknown } | undefined)?.code;
	return {
		kind: 'config',
		code: 'ERR_NOT_RESOLVED',
		message: `refused: the name ${host} could not be resolved${typeof code === 'string' ? ` (${code})` : ''}, so its address could not be checked. Not retried`,
	};
}

/**
 * Where one request goes once its host passed the address rule. `url` is what n8n's client is
 * given: for a name, the checked IP address, so that the connection goes where the check
 * looked (n8n's client would otherwise resolve the name again, and may get another answer);
 * the name travels in the Host header and, for https, as the TLS server name, against which
 * the certificate is still verified. `verifyConnection`: no resolver was available (n8n
 * versions without getSecureEgressFilter), so the address is checked on the connection.
 */
export interface FileTarget {
	url: string;
	headers: Record<string, string>;
	agentOptions?: { servername: string };
	verifyConnection: boolean;
}

const asIs = (url: URL): FileTarget => ({ url: url.href, headers: {}, verifyConnection: false });

/**
 * What the address rule finds for a host (a URL's hostname, brackets removed): `refused` with
 * the non-public address and its kind (`resolved`: found through DNS), `unresolved` when the
 * name does not resolve, `blocked` when n8n's SSRF protection (which then answers the lookup)
 * stopped it, the public `addresses` a name resolved to (none for an IP address, which is its
 * own address), or `unchecked` when this n8n offers nodes no resolver.
 */
export type HostRule =
	| { refused: { address: string; kind: string; resolved: boolean } }
	| { unresolved: unknown }
	| { blocked: unknown }
	| { addresses: string[] }
	| { unchecked: true };

/** The address rule of file hosts, also the check of n8n's own public URL (binaryImageLinks.ts). */
export async function hostRule(ctx: ApiContext, host: string): Promise<HostRule> {
	if (isIpAddress(host)) {
		const kind = privateAddressKind(host);
		return kind ? { refused: { address: host, kind, resolved: false } } : { addresses: [] };
	}
	// RFC 6761: every *.localhost name is the loopback, whatever a resolver answers.
	if (/(^|\.)localhost\.?$/i.test(host)) {
		return {
			refused: { address: host, kind: 'a loopback name (*.localhost, RFC 6761)', resolved: false },
		};
	}
	const lookup = lookupOf(ctx);
	if (!lookup) return { unchecked: true };
	let addresses: string[];
	try {
		addresses = await resolveAll(lookup, host);
	} catch (error) {
		return ssrfBlock(error) ? { blocked: error } : { unresolved: error };
	}
	if (addresses.length === 0) return { unresolved: undefined };
	for (const address of addresses) {
		const kind = privateAddressKind(address);
		if (kind) return { refused: { address, kind, resolved: true } };
	}
	return { addresses };
}

/**
 * Checks the host of `url` against the address rule, after DNS resolution: every address the
 * name resolves to must be public, and the request then goes to one of them (see FileTarget).
 * A name that does not resolve is refused. Returns the refusal or the target.
 */
export async function checkFileHost(
	ctx: ApiContext,
	url: URL,
	allowPrivate: boolean,
): Promise<{ refused: Fault } | { target: FileTarget }> {
	if (allowPrivate) return { target: asIs(url) };
	const host = url.hostname.replace(/^\[|\]$/g, '');
	const rule = await hostRule(ctx, host);
	if ('refused' in rule) return { refused: refusal(host, rule.refused) };
	if ('unresolved' in rule) return { refused: unresolved(host, rule.unresolved) };
	if ('blocked' in rule) {
		const hint = `; a file host on your own network also needs "${ALLOW_PRIVATE_FIELD}" in the Media Generation credential`;
		return { refused: ssrfBlock(rule.blocked, { host, hint }) ?? unresolved(host, rule.blocked) };
	}
	if ('unchecked' in rule) return { target: { ...asIs(url), verifyConnection: true } };
	if (rule.addresses.length === 0) return { target: asIs(url) };
	const pinned = new URL(url.href);
	const first = rule.addresses[0];
	pinned.hostname = first.includes(':') ? `[${first}]` : first;
	return {
		target: {
			url: pinned.href,
			headers: { Host: url.host },
			agentOptions: url.protocol === 'https:' ? { servername: host } : undefined,
			verifyConnection: false,
		},
	};
}

/**
 * The address a response came from, read from its socket, or undefined when the body does not
 * expose one.
 */
function connectedAddress(body: unknown): string | undefined {
	const candidates = [
		(body as { socket?: { remoteAddress?: unknown } } | undefined)?.socket,
		(body as { req?: { socket?: { remoteAddress?: unknown } } } | undefined)?.req?.socket,
	];
	for (const socket of candidates) {
		if (typeof socket?.remoteAddress === 'string') return socket.remoteAddress;
	}
	return undefined;
}

/**
 * Whether the request went through a proxy (n8n 2.14 sends requests through one when
 * HTTP_PROXY, HTTPS_PROXY or ALL_PROXY applies to the URL: its http-proxy-agent and
 * https-proxy-agent carry the proxy's URL as `proxy`). The connection is then the proxy's.
 */
function viaProxy(body: unknown): boolean {
	const agent = (body as { req?: { agent?: { proxy?: unknown } } } | undefined)?.req?.agent;
	return agent?.proxy !== undefined && agent.proxy !== null;
}

/** The check of a connection's address, for n8n versions that give nodes no resolver. */
function checkConnection(host: string, body: unknown): Fault | undefined {
	if (viaProxy(body)) {
		// The address read would be the proxy's: the file host's own address is unknown.
		return {
			kind: 'config',
			code: 'ERR_PRIVATE_ADDRESS',
			message: `refused: n8n sent the request for ${host} through a proxy (HTTP_PROXY, HTTPS_PROXY or ALL_PROXY), which hides the file host's address, and this n8n version gives nodes no way to check the name before connecting. Exempt the file host from the proxy (NO_PROXY), update n8n (2.41 and later check the name before connecting), or, if the file host is on your own network, turn on "${ALLOW_PRIVATE_FIELD}" in the Media Generation credential. Not retried`,
		};
	}
	const address = connectedAddress(body);
	if (address === undefined) {
		return {
			kind: 'config',
			code: 'ERR_PRIVATE_ADDRESS',
			message: `refused: the address n8n connected to for ${host} could not be read, so it could not be checked. If this file host is on your own network, turn on "${ALLOW_PRIVATE_FIELD}" in the Media Generation credential. Not retried`,
		};
	}
	const kind = privateAddressKind(address);
	return kind ? refusal(host, { address, kind, resolved: true }) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Redirects

export interface HopResponse {
	statusCode: number;
	headers: IDataObject;
	body: unknown;
	/** The address this answer came from (after the redirects). */
	url: string;
}

/** Drops a streamed body the node will not read. */
export function discardBody(body: unknown): void {
	const stream = body as { destroy?: (error?: Error) => void } | undefined;
	if (stream && typeof stream.destroy === 'function') stream.destroy();
}

const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status);

/**
 * One GET or HEAD through n8n's plain request helper, following redirects by hand: each address
 * (the first and every Location) must pass checkFileUrl and checkFileHost, and at most
 * MAX_REDIRECTS are followed. Answers other than redirects are returned as they are (HTTP
 * errors included); refusals throw a TransportError.
 */
export async function requestCheckedHops(
	ctx: ApiContext,
	request: Omit<IHttpRequestOptions, 'url'> & { url: string },
	allowPrivate: boolean,
): Promise<HopResponse> {
	let url = request.url;
	for (let hop = 0; ; hop++) {
		const checked = checkFileUrl(url) ?? (await checkFileHost(ctx, new URL(url), allowPrivate));
		const refuse = (fault: Fault) =>
			new TransportError(
				hop === 0
					? fault
					: { ...fault, message: `after a redirect to ${shownUrl(url)}: ${fault.message}` },
			);
		if ('refused' in checked) throw refuse(checked.refused);
		if ('kind' in checked) throw refuse(checked);
		const target = checked.target;
		// Each hop has its own signal (following the caller's): a redirect's body is dropped by
		// aborting it, as n8n's client ends a streamed body only on its next chunk otherwise.
		const outer = request.abortSignal as AbortSignal | undefined;
		const hopController = new AbortController();
		const forward = () => hopController.abort();
		outer?.addEventListener('abort', forward, { once: true });
		if (outer?.aborted) hopController.abort();
		let failure: unknown;
		const response = (await ctx.helpers
			.httpRequest({
				...request,
				url: target.url,
				headers: { ...request.headers, ...target.headers },
				...(target.agentOptions ? { agentOptions: target.agentOptions } : {}),
				// Without a resolver the address is read from the connection: a streamed body
				// exposes it (and is dropped unread when refused).
				...(target.verifyConnection ? { encoding: 'stream' as const } : {}),
				abortSignal: hopController.signal,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				disableFollowRedirect: true,
			})
			.catch((error: unknown) => {
				failure = error;
				return undefined;
			})) as { statusCode: number; headers?: IDataObject; body: unknown } | undefined;
		if (!response) {
			outer?.removeEventListener('abort', forward);
			throw new TransportError(classifyError(failure, outer));
		}
		if (target.verifyConnection) {
			const refused = checkConnection(new URL(url).hostname, response.body);
			if (refused) {
				outer?.removeEventListener('abort', forward);
				hopController.abort();
				discardBody(response.body);
				throw refuse(refused);
			}
			if (request.encoding !== 'stream') {
				// Asked for a HEAD or a body read whole: only HEADs come here (the pre-check).
				discardBody(response.body);
				response.body = undefined;
			}
		}
		const headers = response.headers ?? {};
		const location = headerValue(headers, 'location');
		if (!isRedirect(response.statusCode) || typeof location !== 'string' || location === '') {
			return { statusCode: response.statusCode, headers, body: response.body, url };
		}
		outer?.removeEventListener('abort', forward);
		hopController.abort();
		discardBody(response.body);
		if (hop >= MAX_REDIRECTS) {
			throw new TransportError({
				kind: 'config',
				code: 'ERR_TOO_MANY_REDIRECTS',
				message: `the file host redirected more than ${MAX_REDIRECTS} times (last to ${shownUrl(location)}); at most ${MAX_REDIRECTS} redirects are followed. To get such a file, ${FETCH_ELSEWHERE}. Not retried`,
			});
		}
		// An unreadable Location stays as it is: checkFileUrl refuses it on the next hop.
		url = URL.canParse(location, url) ? new URL(location, url).href : location;
	}
}
