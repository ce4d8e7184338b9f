// The address checked is the address connected (issue 28, finding 1), through n8n-core's engine
// with its own request helpers and real HTTP(S) on loopback. DNS is the one part stubbed: the
// resolver n8n's egress filter hands to nodes (Node's dns.lookup under the default policy)
// answers what a hostile DNS server would, and a test-only route sends connections to one
// public address (PUBLIC) to the "CDN" on 127.0.0.1, as a network would. The "internal
// service" listens on 127.0.0.3, on the same port: whatever connects there was let through.
/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as nodeTls from 'node:tls';

import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { checkImageUrls } from '../../nodes/shared/transport/referenceImageProbe';
import { MANUAL_TRIGGER_TYPE, chain, registerNodeType, runWorkflow } from '../harness';
import { downloadAsItem } from './support';
import { fakeNetwork, notFound, type Answer, type FakeNetwork } from './fake-network';

/** Node 24's default CA list (newer than the @types/node this repository pins). */
const tls = nodeTls as typeof nodeTls & {
	setDefaultCACertificates(certs: string[]): void;
	getCACertificates(type?: 'default' | 'bundled'): string[];
};

jest.setTimeout(60_000);

/** A public address no test traffic really reaches: the route below sends it to 127.0.0.1. */
const PUBLIC = '93.184.215.14';
const INTERNAL = '127.0.0.3';

/**
 * Test-only node: downloads the given URLs as the files of a finished task. `noResolver`: the
 * node sees helpers without getSecureEgressFilter, as on n8n 2.14 (the oldest supported).
 */
class PinProbe implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Pin Probe',
		name: 'test.pinProbe',
		group: ['transform'],
		version: 1,
		description: 'Test-only: runs downloadTaskFiles on the given URLs',
		defaults: { name: 'Probe' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		usableAsTool: true,
		properties: [
			{ displayName: 'URLs', name: 'urls', type: 'json', default: '[]' },
			{ displayName: 'No Resolver', name: 'noResolver', type: 'boolean', default: false },
			{ displayName: 'Reference Images', name: 'referenceImages', type: 'boolean', default: false },
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const urls = JSON.parse(this.getNodeParameter('urls', 0) as string) as string[];
		const ctx = this.getNodeParameter('noResolver', 0) === true ? withoutResolver(this) : this;
		if (this.getNodeParameter('referenceImages', 0) === true) {
			// The reference-image pre-check (HEAD, then a ranged GET when needed) on the URLs.
			try {
				await checkImageUrls(ctx, 0, urls, undefined, false);
				return [[{ json: { checked: true }, pairedItem: { item: 0 } }]];
			} catch (error) {
				return [[{ json: { error: (error as Error).message }, pairedItem: { item: 0 } }]];
			}
		}
		return [
			[
				await downloadAsItem(ctx, 'task-28', urls, {
					modelLabel: 'probe',
					retries: 0,
					allowPrivateFileHosts: false,
				}),
			],
		];
	}
}
registerNodeType(new PinProbe());

/** The node's context with helpers lacking getSecureEgressFilter, as n8n 2.14 gives them. */
function withoutResolver(context: IExecuteFunctions): IExecuteFunctions {
	const helpers = { ...context.helpers, getSecureEgressFilter: undefined };
	return new Proxy(context, {
		get(target, key) {
			if (key === 'helpers') return helpers;
			const value = Reflect.get(target, key, target) as unknown;
			return typeof value === 'function'
				? (value as (...a: unknown[]) => unknown).bind(target)
				: value;
		},
	});
}

const BODY = Buffer.from('the file the CDN serves');
const SECRET = Buffer.from('metadata of the internal service');

interface Seen {
	host?: string;
}
const cdnSeen: Seen[] = [];
const internalSeen: Seen[] = [];

const serve =
	(seen: Seen[], body: Buffer) => (req: http.IncomingMessage, res: http.ServerResponse) => {
		seen.push({ host: req.headers.host });
		res.writeHead(200, { 'Content-Type': 'video/mp4', 'Content-Length': body.length }).end(body);
	};

let cdn: http.Server;
let internal: http.Server;
let tlsCdn: https.Server;
/** TCP connections the TLS server accepted since the last test. */
let tlsConnections = 0;
let port = 0;
let tlsPort = 0;
let certDir = '';
let network: FakeNetwork;

/** What the hostile DNS answers, per name and per call (0 = first). */
const answers: Record<string, Answer> = {
	// Public for the checks (the task's files are checked up front, then at the request), the
	// internal service for whoever asks again.
	'rebind.example': (call) => (call < 2 ? PUBLIC : INTERNAL),
	// The same, for a single check (the reference-image pre-check checks each request once).
	'rebind-once.example': (call) => (call < 1 ? PUBLIC : INTERNAL),
	'files.example': () => PUBLIC,
	'other.example': () => PUBLIC,
	'internal.example': () => INTERNAL,
	'nowhere.example': () => notFound('nowhere.example'),
};

beforeAll(async () => {
	certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-pin-'));
	execFileSync(
		'openssl',
		[
			...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
			...[
				'-keyout',
				path.join(certDir, 'key.pem'),
				'-out',
				path.join(certDir, 'cert.pem'),
				'-days',
				'2',
			],
			...['-subj', '/CN=files.example', '-addext', 'subjectAltName=DNS:files.example'],
		],
		{ stdio: 'ignore' },
	);
	const cert = fs.readFileSync(path.join(certDir, 'cert.pem'), 'utf8');
	tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);

	cdn = http.createServer(serve(cdnSeen, BODY));
	await new Promise<void>((r) => cdn.listen(0, '127.0.0.1', r));
	port = (cdn.address() as AddressInfo).port;
	internal = http.createServer(serve(internalSeen, SECRET));
	await new Promise<void>((r) => internal.listen(port, INTERNAL, r));
	tlsCdn = https.createServer(
		{ key: fs.readFileSync(path.join(certDir, 'key.pem')), cert },
		serve(cdnSeen, BODY),
	);
	tlsCdn.on('connection', () => tlsConnections++);
	await new Promise<void>((r) => tlsCdn.listen(0, '127.0.0.1', r));
	tlsPort = (tlsCdn.address() as AddressInfo).port;

	network = fakeNetwork(answers, (host) => (host === PUBLIC ? { host: '127.0.0.1' } : undefined));
});

afterAll(async () => {
	network.restore();
	tls.setDefaultCACertificates(tls.getCACertificates('bundled'));
	await Promise.all(
		[cdn, internal, tlsCdn].map((s) => new Promise<void>((r) => s.close(() => r()))),
	);
	fs.rmSync(certDir, { recursive: true, force: true });
});

beforeEach(() => {
	cdnSeen.length = 0;
	internalSeen.length = 0;
	tlsConnections = 0;
	network.calls.clear();
});

async function download(urls: string[], noResolver = false, referenceImages = false) {
	const result = await runWorkflow(
		chain(
			{ name: 'Start', type: MANUAL_TRIGGER_TYPE },
			{
				name: 'Probe',
				type: 'test.pinProbe',
				parameters: { urls: JSON.stringify(urls), noResolver, referenceImages },
			},
		),
		{ binaryMode: 'filesystem' },
	);
	expect(result.error).toBeUndefined();
	const [item] = result.outputOf('Probe');
	return { item, error: String(item.json.error ?? ''), result };
}

describe('the connection goes to the address that was checked', () => {
	it('a name that answers public to the check and internal afterwards: the checked address is the one connected', async () => {
		const { item, error, result } = await download([`http://rebind.example:${port}/a.mp4`]);
		expect(error).toBe('');
		expect(internalSeen).toHaveLength(0);
		expect((await result.readBinary(item)).equals(BODY)).toBe(true);
		// The file host still sees its own name.
		expect(cdnSeen.map((s) => s.host)).toEqual([`rebind.example:${port}`]);
	});

	it('https: connected to the checked address, the certificate verified against the name', async () => {
		const { item, error, result } = await download([`https://files.example:${tlsPort}/a.mp4`]);
		expect(error).toBe('');
		expect((await result.readBinary(item)).equals(BODY)).toBe(true);
		expect(cdnSeen.map((s) => s.host)).toEqual([`files.example:${tlsPort}`]);
	});

	it('https: a certificate for another name is refused (verification is not lost by connecting to an address)', async () => {
		const { error } = await download([`https://other.example:${tlsPort}/a.mp4`]);
		// The TLS server was reached (a connection it accepted) and the name check refused its
		// certificate: not any error that quotes the URL (a connection that went nowhere would).
		expect(error).toMatch(/the connection failed \(ERR_TLS_CERT_ALTNAME_INVALID\)$/);
		expect(tlsConnections).toBeGreaterThan(0);
		expect(cdnSeen).toHaveLength(0);
	});

	it('a name that cannot be resolved is refused, not left to the request', async () => {
		const { item, error } = await download([`http://nowhere.example:${port}/a.mp4`]);
		expect(error).toMatch(/refused: the name nowhere\.example could not be resolved \(ENOTFOUND\)/);
		expect(item.json.kind).toBe('config');
		expect(cdnSeen).toHaveLength(0);
	});
});

describe('the reference-image pre-check goes through the same rule', () => {
	it('a name that answers public to the check and internal afterwards: the pre-check connects to the checked address', async () => {
		const { item, error } = await download(
			[`http://rebind-once.example:${port}/a.png`],
			false,
			true,
		);
		expect(error).toBe('');
		expect(item.json.checked).toBe(true);
		expect(internalSeen).toHaveLength(0);
		expect(cdnSeen.map((s) => s.host)).toEqual([`rebind-once.example:${port}`]);
	});
});

describe('an n8n without a resolver for nodes (2.14): the address is checked on the connection', () => {
	// n8n 2.14's client (axios 1.13) hands out the socket's own stream, whose remoteAddress the
	// check reads; this client (2.41's, axios 1.18) wraps it, so here the address cannot be read
	// and the download is refused as well: either way nothing from the connection is kept.
	it('a name resolving to an internal address: refused, its answer never stored', async () => {
		const { item, error } = await download([`http://internal.example:${port}/a.mp4`], true);
		expect(error).toMatch(
			/refused: (internal\.example resolves to 127\.0\.0\.3, a loopback address|the address n8n connected to for internal\.example could not be read)/,
		);
		expect(item.json.kind).toBe('config');
		expect(item.binary).toBeUndefined();
	});
});
