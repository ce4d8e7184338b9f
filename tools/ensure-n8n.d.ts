// Types of ensure-n8n.js for the TypeScript tests (test/e2e) that call it.
export declare const N8N_VERSION: string;
export declare const N8N_OLDEST_VERSION: string;

export interface N8nInstall {
	/** The cache folder n8n is installed in. */
	dir: string;
	/** n8n's bin script, to run with `node`. */
	bin: string;
	version: string;
	/** The Node 24 binary it was installed for. */
	node: string;
}

export declare function ensureN8n(
	node24Bin: string,
	options?: {
		log?: (message: string) => void;
		env?: NodeJS.ProcessEnv;
		run?: unknown;
		version?: string;
	},
): N8nInstall;

/** Where `ensureN8n` installs `version` (default N8N_VERSION); env: MGEN_CACHE_DIR. */
export declare function n8nDir(version?: string, env?: NodeJS.ProcessEnv): string;

/** Whether a complete install of `version` is in the cache (nothing is installed). */
export declare function n8nInstalled(version?: string, env?: NodeJS.ProcessEnv): boolean;
