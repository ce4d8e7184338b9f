/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code: runs under plain Node, never inside n8n (the package ships dist/ only), so the n8n Cloud runtime rules do not apply */
// Test-only. Imported first by the harness, before n8n-core loads: n8n-core reads these
// variables when its singletons are first created, and without N8N_USER_FOLDER it would write
// ~/.n8n/config on the developer's machine.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mgen-harness-'));

/** The private n8n user folder of this process (config, binary data). Removed at exit. */
export const HARNESS_ROOT = root;
/** Where filesystem-mode binary data is written. */
export const BINARY_DATA_PATH = path.join(root, 'binary-data');

process.env.N8N_USER_FOLDER = root;
process.env.N8N_BINARY_DATA_STORAGE_PATH = BINARY_DATA_PATH;
process.env.N8N_DEFAULT_BINARY_DATA_MODE ??= 'filesystem';
process.env.N8N_DIAGNOSTICS_ENABLED = 'false';
process.env.N8N_LOG_LEVEL ??= 'silent';
// The config file holds a generated encryption key; n8n warns when its mode is too open.
process.env.N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS = 'false';

process.on('exit', () => {
	if (process.env.MGEN_KEEP_HARNESS_FILES) return;
	fs.rmSync(root, { recursive: true, force: true });
});
