// The pure rules of the download bounds (issue 19, finding 2; issue 21, part 2): which
// addresses are not public, the binary data mode read from a stored file's id, the default
// size limit per mode, and n8n's own FileTooLargeError turned into a message users can act on.
import { FileTooLargeError } from 'n8n-core';

import { isIpAddress, privateAddressKind } from '../../../nodes/shared/transport/fileHosts';
import {
	DEFAULT_MAX_FILE_SIZE_MB,
	binaryModeOf,
	n8nTooLargeFault,
	tooLargeFault,
} from '../../../nodes/shared/transport/fileSizeLimit';

describe('addresses that are not public', () => {
	it.each([
		['0.0.0.0', /unspecified/],
		['0.1.2.3', /unspecified/],
		['10.0.0.1', /private address \(10\.0\.0\.0\/8\)/],
		['100.64.0.1', /carrier-grade NAT/],
		['100.127.255.254', /carrier-grade NAT/],
		['127.0.0.1', /loopback address \(127/],
		['127.255.255.255', /loopback/],
		['169.254.169.254', /link-local address \(169\.254\.0\.0\/16, where cloud metadata/],
		['168.63.129.16', /Azure's platform address \(168\.63\.129\.16/],
		['::ffff:168.63.129.16', /Azure's platform address.*, written as IPv6/],
		['172.16.0.1', /private address \(172\.16\.0\.0\/12\)/],
		['172.31.255.255', /172\.16\.0\.0\/12/],
		['192.168.1.1', /192\.168\.0\.0\/16/],
		['224.0.0.1', /multicast/],
		['255.255.255.255', /reserved/],
		['::', /unspecified address \(::\)/],
		['::1', /loopback address \(::1\)/],
		['[::1]', /loopback address \(::1\)/],
		['0:0:0:0:0:0:0:1', /loopback address \(::1\)/],
		['::ffff:127.0.0.1', /loopback address \(127\.0\.0\.0\/8\), written as IPv6/],
		['::ffff:7f00:1', /loopback address \(127\.0\.0\.0\/8\), written as IPv6/],
		['::ffff:a9fe:a9fe', /link-local address \(169\.254/],
		['::127.0.0.1', /loopback/],
		['64:ff9b::a00:1', /private address \(10\.0\.0\.0\/8\), written as IPv6/],
		['2002:c0a8:0101::1', /192\.168\.0\.0\/16\), written as IPv6/],
		// n8n's default block list (@n8n/config ssrf-protection.config) and the transition ranges.
		['192.0.0.8', /IETF protocol address \(192\.0\.0\.0\/24\)/],
		['192.0.2.1', /documentation address \(192\.0\.2\.0\/24\)/],
		['198.18.0.1', /benchmarking address \(198\.18\.0\.0\/15\)/],
		['198.19.255.255', /benchmarking/],
		['198.51.100.7', /documentation address \(198\.51\.100\.0\/24\)/],
		['203.0.113.9', /documentation address \(203\.0\.113\.0\/24\)/],
		['::ffff:0:127.0.0.1', /loopback address \(127\.0\.0\.0\/8\), written as IPv6/],
		['::ffff:0:a9fe:a9fe', /link-local address \(169\.254/],
		['64:ff9b:1::808:808', /local-use NAT64 address \(64:ff9b:1::\/48\)/],
		['2001::1', /Teredo tunnel address \(2001::\/32\)/],
		['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
		['2002:0808:0808::1', /6to4 tunnel address \(2002::\/16\)/],
		['2001:db8::1', /documentation address \(2001:db8::\/32\)/],
		['100::1', /discard-only/],
		['fe80::1', /link-local address \(fe80::\/10\)/],
		['fe80::1%eth0', /link-local/],
		['febf:ffff::1', /link-local/],
		['fc00::1', /unique local \(private\) address \(fc00::\/7\)/],
		['fd12:3456::1', /fc00::\/7/],
		['fec0::1', /site-local/],
		['ff02::1', /multicast/],
	])('%s is refused: %s', (ip, kind) => {
		expect(privateAddressKind(ip)).toMatch(kind);
	});

	it.each([
		'8.8.8.8',
		'1.1.1.1',
		'100.63.255.255',
		'100.128.0.0',
		'172.15.255.255',
		'172.32.0.0',
		'169.253.255.255',
		'168.63.129.15',
		'168.63.129.17',
		'192.169.0.1',
		'11.0.0.1',
		'2606:4700:4700::1111',
		'::ffff:8.8.8.8',
		'64:ff9b::808:808',
		'198.17.255.255',
		'198.20.0.0',
		'192.0.1.1',
		'2001:1::1',
		'2001:4860:4860::8888',
		'::ffff:0:8.8.8.8',
		'fec0::1'.replace('fec0', 'fbff'),
	])('%s is public', (ip) => {
		expect(privateAddressKind(ip)).toBeUndefined();
	});

	it('tells addresses from names', () => {
		expect(isIpAddress('127.0.0.1')).toBe(true);
		expect(isIpAddress('[::1]')).toBe(true);
		expect(isIpAddress('files.example.com')).toBe(false);
		expect(isIpAddress('1.2.3')).toBe(false);
		expect(isIpAddress('1:2:3')).toBe(false);
		expect(isIpAddress('1::2::3')).toBe(false);
		expect(privateAddressKind('files.example.com')).toBeUndefined();
	});
});

describe("the size limit follows n8n's binary data mode", () => {
	it('reads the mode from the id n8n gives a stored file', () => {
		expect(binaryModeOf({ id: 'filesystem-v2:workflows/1/executions/2/binary_data/x' })).toBe(
			'filesystem',
		);
		expect(binaryModeOf({ id: 'database:abc' })).toBe('database');
		expect(binaryModeOf({ id: 's3:workflows/1/x' })).toBe('s3');
		// Memory mode keeps the data in the item: no id.
		expect(binaryModeOf({})).toBe('default');
	});

	it('defaults: 256 MB where a later node reads the file back as one string, 2048 on disk', () => {
		expect(DEFAULT_MAX_FILE_SIZE_MB.database).toBe(256);
		expect(DEFAULT_MAX_FILE_SIZE_MB.default).toBe(256);
		expect(DEFAULT_MAX_FILE_SIZE_MB.filesystem).toBe(2048);
	});

	it('the refusal in database mode names the size, the mode, the reason and the setting', () => {
		const fault = tooLargeFault(600 * 1024 * 1024, true, {
			bytes: 256 * 1024 * 1024,
			mb: 256,
			mode: 'database',
		});
		expect(fault.kind).toBe('config');
		expect(fault.message).toContain('the file is 600.0 MB (629145600 bytes, its Content-Length)');
		expect(fault.message).toContain(
			`the default limit of 256 MB for n8n's "database" binary data mode`,
		);
		expect(fault.message).toContain('V8 caps at 512 MB');
		expect(fault.message).toContain('Options → Max File Size (MB) changes the limit');
		expect(fault.message).toContain('valid 24 hours');
	});
});

describe("n8n's own FileTooLargeError (n8n-core's class, as the database mode throws it)", () => {
	const error = new FileTooLargeError({
		fileSizeMb: 600.4,
		maxFileSizeMb: 512,
		fileId: '5f0c…',
		fileName: 'generate-music-ba8ed2f1-1.mp3',
	});

	it('becomes a size fault, not a connection failure, not retried', () => {
		const fault = n8nTooLargeFault(error);
		expect(fault?.kind).toBe('config');
		expect(fault?.code).toBe('ERR_FILE_TOO_LARGE');
	});

	it('the message keeps what the user needs: size, limit, mode, settings', () => {
		const message = n8nTooLargeFault(error)?.message ?? '';
		expect(message).toContain('it is 600.4 MB, over the 512 MB limit');
		expect(message).toContain(`n8n's "database" binary data mode`);
		expect(message).toContain('N8N_BINARY_DATA_DATABASE_MAX_FILE_SIZE');
		expect(message).toContain('Options → Max File Size (MB)');
		expect(message).not.toMatch(/connection failed/);
	});

	it('is found as the cause of a wrapping error too, and nothing else is taken for it', () => {
		expect(n8nTooLargeFault(new Error('stream failed', { cause: error }))?.code).toBe(
			'ERR_FILE_TOO_LARGE',
		);
		expect(n8nTooLargeFault(new Error('ECONNRESET'))).toBeUndefined();
	});
});
