// Types of ensure-verdaccio.js for the release layer (test/release).
export declare const VERDACCIO_VERSION: string;
export declare function ensureVerdaccio(options?: {
	log?: (message: string) => void;
	env?: NodeJS.ProcessEnv;
}): { dir: string; bin: string; version: string };
