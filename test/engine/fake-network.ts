// Test-only DNS and routes for engine tests: n8n's code and Node's sockets stay real, but a name
// answers what the test says (per call, so an answer can change between the check and the
// connection, as a hostile DNS server's does), and a connection to a chosen address and port is
// routed to a server on loopback, as a network would. Restore with the returned function.
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test code: runs under plain Node, never inside n8n */

// The core modules as n8n's code sees them (not an ES-module copy), so the stubs reach it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dns = require('node:dns') as typeof import('node:dns');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const net = require('node:net') as typeof import('node:net');

/** What a name answers on its n-th lookup (0 = first): an address, or an error. */
export type Answer = (call: number) => string | Error;

export interface FakeNetwork {
	/** Lookups per name so far. */
	calls: Map<string, number>;
	restore(): void;
}

type LookupCallback = (error: Error | null, address?: unknown, family?: number) => void;

/**
 * `names`: the stubbed names (others resolve as usual). `route(host, port)`: where a connection
 * really goes ({ host, port }), or undefined to leave it.
 */
export function fakeNetwork(
	names: Record<string, Answer>,
	route: (host: string, port: number) => { host: string; port?: number } | undefined,
): FakeNetwork {
	const calls = new Map<string, number>();
	const original = dns.lookup;
	const lookup = jest.spyOn(dns, 'lookup');
	lookup.mockImplementation(((host: string, options: unknown, callback: LookupCallback) => {
		const answer = names[host];
		if (!answer) return (original as unknown as (...a: unknown[]) => void)(host, options, callback);
		const call = calls.get(host) ?? 0;
		calls.set(host, call + 1);
		const result = answer(call);
		const all =
			typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
		const family = result instanceof Error ? 0 : result.includes(':') ? 6 : 4;
		process.nextTick(() => {
			if (result instanceof Error) callback(result);
			else if (all) callback(null, [{ address: result, family }]);
			else callback(null, result, family);
		});
	}) as unknown as typeof dns.lookup);
	const realConnect = net.Socket.prototype.connect;
	const connect = jest.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (
		this: import('node:net').Socket,
		...args: unknown[]
	) {
		const first = args[0];
		const options = (Array.isArray(first) ? first[0] : first) as
			| { host?: string; port?: number }
			| undefined;
		if (options && typeof options === 'object' && typeof options.host === 'string') {
			const to = route(options.host, Number(options.port));
			if (to) {
				options.host = to.host;
				if (to.port !== undefined) options.port = to.port;
			}
		}
		return (realConnect as (...a: unknown[]) => import('node:net').Socket).apply(this, args);
	});
	return {
		calls,
		restore() {
			lookup.mockRestore();
			connect.mockRestore();
		},
	};
}

/** A DNS error as Node's resolver reports it. */
export const notFound = (host: string): Error =>
	Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
