import { createHash } from 'crypto';
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError, UnexpectedError } from 'n8n-workflow';

import { scrubSecret } from './faults';
import { hostRule, refusedAddress } from './fileHosts';
import { megabytes, sniffImageType, SNIFF_BYTES, type ImageLimits } from './referenceImageProbe';

// Reference images taken from binary fields of the input item: the one module that reads them,
// checks them and hands the service a link to them. The link is n8n's own signed URL of a
// binary file (helpers.createBinarySignedUrl: `<WEBHOOK_URL>rest/binary-data/signed?token=<JWT>`,
// served without login by n8n's BinaryDataController while the file exists and the token has
// not expired). Nothing here sends a request: n8n serves the file, the service fetches it.

/** A reference image the panel takes from a binary field of the input item. */
export interface BinaryImageRef {
	/** Name of the binary field (the value the user typed). */
	property: string;
	/** The panel field that names it, quoted in errors ("Start Frame Binary Field"). */
	label: string;
}

/** A binary reference image that passed every check, ready to be linked. */
export interface CheckedImage extends BinaryImageRef {
	binary: IBinaryData;
	/** SHA-256 of the file's bytes, hex: what the service must receive. */
	sha256: string;
	bytes: number;
	/** The type its first bytes show (and its declared type). */
	type: string;
}

/** The environment variable of n8n's binary data mode, named in the refusal of in-memory data. */
export const BINARY_MODE_VARIABLE = 'N8N_DEFAULT_BINARY_DATA_MODE';
/** The environment variable of n8n's public URL, named in the refusal of a local one. */
export const PUBLIC_URL_VARIABLE = 'WEBHOOK_URL';
/** The query parameter of n8n's signed URL that carries the token. */
export const LINK_TOKEN_PARAM = 'token';
/**
 * How long a link lives when the node does not wait for the task (Wait for Completion off):
 * the service fetches reference images when it starts the task, and the execution, which may
 * end at once, no longer bounds it. When the node waits, the link lives as long as its Timeout
 * (Park Until Callbacks: its own deadline), at most MAX_LINK_MS.
 */
export const UNWAITED_LINK_MS = 30 * 60_000;
/**
 * The longest a link lives, whatever the Timeout: the service fetches reference images when it
 * starts the task, so a leaked link costs little after that (issue 45: a Timeout of ten years
 * made a token valid for ten years).
 */
export const MAX_LINK_MS = 3 * 60 * 60_000;

const where = (ref: BinaryImageRef) => `binary field "${ref.property}" ("${ref.label}")`;

/**
 * n8n's id of a file of an execution (filesystem and S3 modes):
 * `<mode>:workflows/<workflow id>/executions/<execution id>/binary_data/<file id>`.
 */
const EXECUTION_FILE =
	/^[a-z0-9-]+:workflows\/([^/\\]+)\/executions\/[^/\\]+\/binary_data\/[^/\\]+$/i;
/**
 * n8n's database mode: `database:<file UUID>`, which names no workflow (n8n keeps the file's
 * execution in its table, out of a node's reach): the UUID, unguessable, is the only key.
 */
const DATABASE_FILE = /^database:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Why n8n's signed link must not be made for this binary data id, or undefined: the node signs
 * links only to files of this workflow's own executions (n8n itself checks only that the path
 * stays in its storage folder), so an item naming another workflow's file id gets no link to it.
 */
function foreignFile(ctx: IExecuteFunctions, id: string): string | undefined {
	if (DATABASE_FILE.test(id)) return undefined;
	const match = EXECUTION_FILE.exec(id);
	const mine = ctx.getWorkflow().id;
	const allowed =
		'allowed: binary data of an execution of this workflow (a file a node of this workflow read, downloaded or made)';
	if (!match || id.split(/[/\\]/).some((part) => part === '..' || part === '.')) {
		return `is not stored as a file of an execution of this workflow (binary data id "${id.split(':')[0]}:…"), so no link is made for it; ${allowed}`;
	}
	if (!mine || match[1] !== String(mine)) {
		// n8n hands an Execute Workflow sub-workflow its caller's items with the caller's binary data
		// ids unchanged (only the sub-workflow's output is copied to the caller:
		// duplicateBinaryDataToParent, n8n 2.41.1), so the caller's files land here. An AI Agent's
		// tool workflow gets no binary data at all: one item of the model's fields
		// (WorkflowToolService.prepareWorkflowItems).
		return `is a file of another workflow (id ${match[1]}), so no link is made for it; ${allowed}. A sub-workflow (Execute Workflow) receives its caller's files under the caller's ids: run this Generate in the calling workflow, or pass the picture to the sub-workflow as a URL (Reference Image URLs)`;
	}
	return undefined;
}

/** The stand-in of an unchecked binary reference in `image_urls` until the file is checked. */
export function pendingImageUrl(index: number): string {
	return `https://n8n-binary-reference.invalid/${index}`;
}

/**
 * What stands for a checked file in the node's own records (the ledger of submitted tasks):
 * its content, so that a retry of the same file finds the task, whatever link it was sent as.
 */
export function contentReference(image: CheckedImage): string {
	return `n8n-binary:sha256:${image.sha256}`;
}

/** One error for an item's problems, each naming the field and file. */
export function imageError(
	ctx: IExecuteFunctions,
	itemIndex: number,
	problems: string[],
): NodeOperationError {
	return new NodeOperationError(ctx.getNode(), `Item ${itemIndex}: ${problems.join(' | ')}`, {
		itemIndex,
		description: problems.join('\n'),
	});
}

function fail(ctx: IExecuteFunctions, itemIndex: number, problems: string[]): never {
	throw imageError(ctx, itemIndex, problems);
}

function describeFields(binary: Record<string, unknown> | undefined): string {
	const names = Object.keys(binary ?? {});
	return names.length === 0
		? 'the input item holds no binary data: the node before this one must output a file'
		: `the input item's binary fields: ${names.map((n) => `"${n}"`).join(', ')}`;
}

/** The binary data object a field names, or a problem. */
function findBinary(
	ctx: IExecuteFunctions,
	itemIndex: number,
	ref: BinaryImageRef,
): IBinaryData | string {
	const item = ctx.getInputData()[itemIndex];
	try {
		// n8n's own lookup: the item's binary field, or a path in its JSON when the workflow keeps
		// binary data with the JSON (n8n's "combined" binary mode).
		const binary = ctx.helpers.assertBinaryData(itemIndex, ref.property);
		if (typeof binary?.mimeType !== 'string' || typeof binary.data !== 'string') {
			return `${where(ref)} does not hold a file; allowed: a binary field holding a JPEG, PNG or WebP file`;
		}
		return binary;
	} catch {
		return `"${ref.label}" is "${ref.property}", which the input item does not have (${describeFields(item?.binary)}); allowed: the name of a binary field of the input item, such as "data"`;
	}
}

/** Reads the file once: its size (bounded), SHA-256 and first bytes. */
async function readFile(
	ctx: IExecuteFunctions,
	id: string,
	maxBytes: number,
): Promise<{ bytes: number; sha256: string; head: Uint8Array; truncated: boolean }> {
	const stream = await ctx.helpers.getBinaryStream(id);
	const hash = createHash('sha256');
	const head: number[] = [];
	let bytes = 0;
	let truncated = false;
	try {
		for await (const chunk of stream as AsyncIterable<Uint8Array>) {
			bytes += chunk.length;
			if (bytes > maxBytes) {
				truncated = true;
				break;
			}
			hash.update(chunk);
			if (head.length < SNIFF_BYTES) head.push(...chunk.subarray(0, SNIFF_BYTES - head.length));
		}
	} finally {
		(stream as { destroy?: () => void }).destroy?.();
	}
	return { bytes, sha256: hash.digest('hex'), head: Uint8Array.from(head), truncated };
}

async function checkOne(
	ctx: IExecuteFunctions,
	itemIndex: number,
	ref: BinaryImageRef,
	limits: ImageLimits,
): Promise<CheckedImage | string> {
	const binary = findBinary(ctx, itemIndex, ref);
	if (typeof binary === 'string') return binary;
	const file = binary.fileName ? ` (file "${binary.fileName}")` : '';
	const allowed = limits.types.join(', ');
	const declared = binary.mimeType.split(';')[0].trim().toLowerCase();
	if (!limits.types.includes(declared)) {
		return `${where(ref)}${file} is of type ${declared || 'unknown'}; allowed: ${allowed}`;
	}
	if (!binary.id) {
		return `${where(ref)}${file} is held in memory (n8n's binary data mode "default"), so n8n cannot serve it at a link for the service; allowed: binary data n8n stores (set ${BINARY_MODE_VARIABLE}=filesystem, or database in queue mode, and restart n8n), or an image URL`;
	}
	const foreign = foreignFile(ctx, binary.id);
	if (foreign) return `${where(ref)}${file} ${foreign}`;
	// The size n8n stored with the file, when it has one: a large file is refused unread.
	const stored = await ctx.helpers
		.getBinaryMetadata(binary.id)
		.then((m) => m.fileSize)
		.catch(() => undefined);
	const tooLarge = (size: number, more = false) =>
		`${where(ref)}${file} is ${more ? 'more than ' : ''}${megabytes(size)}; allowed: at most ${megabytes(limits.maxBytes).replace('.0 ', ' ')}`;
	if (typeof stored === 'number' && stored > limits.maxBytes) return tooLarge(stored);
	let read: Awaited<ReturnType<typeof readFile>>;
	try {
		read = await readFile(ctx, binary.id, limits.maxBytes);
	} catch (error) {
		return `${where(ref)}${file} could not be read from n8n's binary data (${(error as Error).message}); allowed: a file this execution holds`;
	}
	if (read.truncated) return tooLarge(limits.maxBytes, true);
	const sniffed = sniffImageType(read.head);
	if (sniffed === undefined) {
		return `${where(ref)}${file} is declared ${declared}, but its first bytes are not a JPEG, PNG or WebP image; allowed: ${allowed} files`;
	}
	if (sniffed !== declared) {
		return `${where(ref)}${file} is declared ${declared}, but its bytes are ${sniffed}; allowed: a file whose declared type matches its bytes (${allowed})`;
	}
	return { ...ref, binary, sha256: read.sha256, bytes: read.bytes, type: sniffed };
}

/**
 * Checks every binary reference image of one item: the field exists and holds a file, its
 * declared type and its first bytes are an allowed type and agree, its size is within the
 * limit, and n8n stores it (in-memory binary data has no id to sign). Sends nothing. Throws one
 * NodeOperationError naming the item, the field and the file for every problem.
 */
export async function checkBinaryImages(
	ctx: IExecuteFunctions,
	itemIndex: number,
	refs: BinaryImageRef[],
	limits: ImageLimits,
): Promise<CheckedImage[]> {
	const results = [];
	for (const ref of refs) results.push(await checkOne(ctx, itemIndex, ref, limits));
	const problems = results.filter((r): r is string => typeof r === 'string');
	if (problems.length > 0) fail(ctx, itemIndex, problems);
	return results as CheckedImage[];
}

/** n8n's signed URL of one file, valid for `lifetimeMs`; throws on in-memory binary data. */
function sign(ctx: IExecuteFunctions, image: CheckedImage, lifetimeMs: number): string {
	// jsonwebtoken reads a number as seconds.
	const seconds = Math.max(1, Math.ceil(lifetimeMs / 1000));
	return ctx.helpers.createBinarySignedUrl(image.binary, `${seconds}s`);
}

/**
 * Why the service cannot reach n8n's links, or undefined when it can: their base is n8n's public
 * URL (WEBHOOK_URL), which must not be a local, private or reserved address (the address rule of
 * file hosts, after DNS) unless the credential allows private hosts. Learns the base by signing
 * a link valid for one second, which it hands to no one. The text names WEBHOOK_URL.
 */
export async function linkBaseProblem(
	ctx: IExecuteFunctions,
	image: CheckedImage,
	allowPrivate: boolean,
	allowPrivateField: string,
): Promise<string | undefined> {
	let link: URL;
	try {
		link = new URL(sign(ctx, image, 1000));
	} catch (error) {
		return `n8n could not make a link to ${where(image)}: ${scrubSecret((error as Error).message)}`;
	}
	if (allowPrivate) return undefined;
	const host = link.hostname.replace(/^\[|\]$/g, '');
	const rule = await hostRule(ctx, host);
	let problem: string | undefined;
	if ('refused' in rule) {
		problem = refusedAddress(host, rule.refused);
	} else if ('unresolved' in rule) {
		problem = `its name ${host} could not be resolved, so its address could not be checked`;
	} else if ('blocked' in rule) {
		problem = `n8n's SSRF protection blocks ${host}: its address is in a range n8n is set to block`;
	}
	if (problem === undefined) return undefined;
	return `the service cannot fetch the reference images from this n8n: its public URL ${link.origin}/ is refused (${problem}); allowed: a public URL of this n8n the service can reach. Set ${PUBLIC_URL_VARIABLE} to it and restart n8n, or, if the service runs on your own network, turn on "${allowPrivateField}" in the Media Generation credential`;
}

/** How long the links live: `lifetimeMs` (the Timeout, or the park deadline), at most MAX_LINK_MS. */
export function linkLifetimeMs(lifetimeMs: number): number {
	return Math.min(lifetimeMs, MAX_LINK_MS);
}

/**
 * The links sent as `image_urls`, one per checked file, each valid for `lifetimeMs` up to
 * MAX_LINK_MS.
 */
export function linkImages(
	ctx: IExecuteFunctions,
	images: CheckedImage[],
	lifetimeMs: number,
): string[] {
	return images.map((image) => {
		if (!image.binary.id) throw new UnexpectedError('A binary reference image was not checked');
		return sign(ctx, image, linkLifetimeMs(lifetimeMs));
	});
}
