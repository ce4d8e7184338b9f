// How the test runner gets Debian's packages for the editor and queue layers: apt-get as root,
// `sudo -n apt-get` where the user is not root but sudo needs no password (GitHub's hosted
// runners, where ci.yml runs `npm test`), and a reason to show otherwise.
/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only) */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { aptRunner, sudoWorks } from '../../../tools/system-packages';

test('as root, apt-get runs directly and sudo is never asked', () => {
	const sudo = jest.fn(() => true);
	expect(aptRunner({ root: true, sudo })).toEqual({ cmd: 'apt-get', prefix: [] });
	expect(sudo).not.toHaveBeenCalled();
});

test('not root with password-less sudo: sudo -n, with DEBIAN_FRONTEND passed through sudo', () => {
	expect(aptRunner({ root: false, sudo: () => true })).toEqual({
		cmd: 'sudo',
		prefix: ['-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get'],
	});
});

test('not root and sudo would prompt: a reason naming sudo, no command', () => {
	const r = aptRunner({ root: false, sudo: () => false });
	expect(r.cmd).toBeUndefined();
	expect(r.reason).toMatch(/not root.*sudo -n/);
});

describe('sudoWorks asks `sudo -n true` and never waits for a password', () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-fake-sudo-'));
	const oldPath = process.env.PATH;
	const log = path.join(dir, 'calls');
	afterAll(() => {
		process.env.PATH = oldPath;
		fs.rmSync(dir, { recursive: true, force: true });
	});
	const fakeSudo = (exitCode: number) => {
		fs.writeFileSync(
			path.join(dir, 'sudo'),
			`#!/bin/sh\nprintf "%s\\n" "$*" >> "${log}"\nexit ${exitCode}\n`,
			{ mode: 0o755 },
		);
		process.env.PATH = `${dir}${path.delimiter}${oldPath}`;
	};

	test('a sudo that lets the user in', () => {
		fakeSudo(0);
		expect(sudoWorks()).toBe(true);
		expect(fs.readFileSync(log, 'utf8').trim().split('\n').pop()).toBe('-n true');
	});

	test('a sudo that would ask for a password (exit 1 under -n)', () => {
		fakeSudo(1);
		expect(sudoWorks()).toBe(false);
	});

	test('no sudo at all', () => {
		process.env.PATH = dir;
		fs.rmSync(path.join(dir, 'sudo'), { force: true });
		expect(sudoWorks()).toBe(false);
	});
});
