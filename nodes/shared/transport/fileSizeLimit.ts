import type { IBinaryData } from 'n8n-workflow';

import type { ApiContext } from './api';
import type { Fault } from './faults';

// The largest file the node downloads: the Max File Size option, or a default that fits the
// binary data mode n8n stores into. n8n does not tell nodes its mode, but every file it stores
// gets an id that starts with it ("filesystem-v2:…", "database:…", "s3:…"; none in the default
// memory mode).

export const MB = 1024 * 1024;

/** Where a later node can still use the file, per n8n binary data mode (MB = MiB, as n8n counts). */
export const DEFAULT_MAX_FILE_SIZE_MB: Record<string, number> = {
	// Streamed to disk: bounded only so that a hostile host cannot fill it.
	filesystem: 2048,
	// PostgreSQL returns a bytea as one hex string, which V8 caps at 512 MiB: about 256 MiB of
	// file is what a later node can read back (n8n itself stores up to 512 MiB by default).
	database: 256,
	// Memory mode: the file is kept in the item as base64, under the same string limit.
	default: 256,
	// External storage: n8n holds the whole file in memory while it uploads it.
	s3: 1024,
	azure: 1024,
};

/** The smallest default: below it, the mode does not matter. */
const SMALLEST_DEFAULT_MB = Math.min(...Object.values(DEFAULT_MAX_FILE_SIZE_MB));

/** The binary data mode of a stored file ("filesystem", "database", "s3", "default"…). */
export function binaryModeOf(binary: Pick<IBinaryData, 'id'>): string {
	const id = typeof binary.id === 'string' ? binary.id : '';
	if (!id.includes(':')) return 'default';
	const mode = id.slice(0, id.indexOf(':'));
	return mode.startsWith('filesystem') ? 'filesystem' : mode;
}

// Per node run (its context object): a process has one mode, but the mode is learnt again in
// each run so that nothing outlives the run.
const learntModes = new WeakMap<object, string>();

/** Remembers the mode of a file n8n stored (called for every download the node commits). */
export function learnBinaryMode(ctx: ApiContext, binary: Pick<IBinaryData, 'id'>): void {
	learntModes.set(ctx, binaryModeOf(binary));
}

/**
 * The mode, learnt from the files stored so far in this run, or from an empty file stored for
 * the purpose: n8n deletes it with the execution's other binary data.
 */
async function binaryMode(ctx: ApiContext): Promise<string | undefined> {
	const known = learntModes.get(ctx);
	if (known) return known;
	try {
		learnBinaryMode(
			ctx,
			await ctx.helpers.prepareBinaryData(
				Buffer.alloc(0),
				'mode-probe',
				'application/octet-stream',
			),
		);
	} catch {
		return undefined;
	}
	return learntModes.get(ctx);
}

export interface SizeLimit {
	bytes: number;
	mb: number;
	/** The binary data mode the default follows; undefined when the option set the limit. */
	mode?: string;
}

/**
 * The limit for one file. `explicitMb` is the option (undefined or 0: automatic). Without it,
 * the mode is looked up only when the file may be larger than the smallest default: when its
 * Content-Length (`announced`) is above it or unknown.
 */
export async function sizeLimitFor(
	ctx: ApiContext,
	explicitMb: number | undefined,
	announced: number | undefined,
): Promise<SizeLimit> {
	if (explicitMb !== undefined && explicitMb > 0) return sizeLimitOf(explicitMb, undefined);
	const small = announced !== undefined && announced <= SMALLEST_DEFAULT_MB * MB;
	return sizeLimitOf(
		undefined,
		learntModes.get(ctx) ?? (small ? undefined : await binaryMode(ctx)),
	);
}

/** The limit for one file, from the option (undefined or 0: automatic) and the mode, if known. */
export function sizeLimitOf(explicitMb: number | undefined, mode: string | undefined): SizeLimit {
	if (explicitMb !== undefined && explicitMb > 0) {
		return { bytes: Math.floor(explicitMb * MB), mb: explicitMb };
	}
	const mb =
		(mode === undefined ? undefined : DEFAULT_MAX_FILE_SIZE_MB[mode]) ?? SMALLEST_DEFAULT_MB;
	return { bytes: mb * MB, mb, mode: mode ?? 'unknown' };
}

export function megabytes(bytes: number): string {
	return `${(bytes / MB).toFixed(1)} MB`;
}

/** The way around any download the node refuses: the URL is in the item for 24 hours. */
export const FETCH_ELSEWHERE =
	'turn off Options → Download Files and fetch the file from its URL (valid 24 hours after generation) with a node that streams it';

const HOW_TO = `Options → Max File Size (MB) changes the limit; or ${FETCH_ELSEWHERE}`;

function limitText(limit: SizeLimit): string {
	if (limit.mode === undefined)
		return `the limit of ${limit.mb} MB set in Options → Max File Size (MB)`;
	if (limit.mode === 'database' || limit.mode === 'default') {
		return `the default limit of ${limit.mb} MB for n8n's "${limit.mode}" binary data mode (a later node cannot read back a larger file from the database or memory: it comes back as one string, which V8 caps at 512 MB)`;
	}
	if (limit.mode === 'unknown') return `the default limit of ${limit.mb} MB`;
	return `the default limit of ${limit.mb} MB for n8n's "${limit.mode}" binary data mode`;
}

/** The refusal of a file over the limit; `exact` false: the size is at least `bytes`. */
export function tooLargeFault(bytes: number, exact: boolean, limit: SizeLimit): Fault {
	const size = `${exact ? '' : 'at least '}${megabytes(bytes)} (${bytes} bytes${exact ? ', its Content-Length' : ' received so far'})`;
	return {
		kind: 'config',
		code: 'ERR_FILE_TOO_LARGE',
		message: `the file is ${size}, over ${limitText(limit)}, so it was not downloaded. ${HOW_TO}. Not retried`,
	};
}

/**
 * n8n's own refusal to store a file (n8n-core's FileTooLargeError, database mode: "Failed to
 * write binary file … because its size of X MB exceeds the max size limit of Y MB…"), as a
 * fault that says what to change. Undefined for any other error.
 */
export function n8nTooLargeFault(error: unknown): Fault | undefined {
	let current = error;
	for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
		const e = current as { name?: unknown; message?: unknown; cause?: unknown };
		const message = typeof e.message === 'string' ? e.message : '';
		const match = /size of ([\d.]+) MB exceeds the max size limit of ([\d.]+) MB/.exec(message);
		if (e.name === 'FileTooLargeError' || match) {
			const size = match ? `${match[1]} MB` : 'larger than allowed';
			const limit = match ? `${match[2]} MB` : 'its configured size';
			return {
				kind: 'config',
				code: 'ERR_FILE_TOO_LARGE',
				message: `n8n refused to store the file: it is ${size}, over the ${limit} limit of n8n's "database" binary data mode (N8N_BINARY_DATA_DATABASE_MAX_FILE_SIZE, at most 1024). A later node could not read back a file over about 256 MB from the database anyway: set Options → Max File Size (MB) to 256 or less (the default in database mode) so such files are refused before they are downloaded, or ${FETCH_ELSEWHERE}. Not retried`,
			};
		}
		current = e.cause;
	}
	return undefined;
}
