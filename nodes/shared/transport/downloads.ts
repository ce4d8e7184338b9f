import type { IBinaryKeyData, IDataObject } from 'n8n-workflow';

import { getApiCredentials, type ApiContext } from './api';
import { classifyError, scrubSecret, TransportError } from './faults';
import { checkFileHost, checkFileUrl } from './fileHosts';
import {
	binaryPropertyFor,
	describeFile,
	fileNameFor,
	resolveExtension,
	resolveMimeType,
} from './fileNames';
import { MB } from './fileSizeLimit';
import {
	commitOrThrow,
	receiveFile,
	TASK_LIMIT_CODE,
	type HeldFile,
	type TaskLimits,
	type TransferOptions,
} from './fileTransfer';
import type { Task } from '../task';

// Result files, streamed into n8n's binary store, never with the API key: every file of a task,
// all or nothing. The rules for addresses are in fileHosts.ts, the transfer of one file in
// fileTransfer.ts, names and MIME types in fileNames.ts, the size limit in fileSizeLimit.ts.

export interface DownloadOptions extends TransferOptions {
	binaryProperty?: string;
	modelLabel?: string;
	/** Epoch ms by which every file of the task must have arrived (the node's Timeout). */
	deadlineAt?: number;
	/** How that deadline reads in a message ("the node's Timeout (1 minute)"). */
	deadlineName?: string;
	/** Bytes the task's files may take together (default: taskByteLimit). */
	maxTaskBytes?: number;
}

/** Files downloaded per task, at most (the Trigger takes at most 20 files in a body, too). */
export const MAX_FILES_PER_TASK = 20;
/**
 * Bytes the files of one task may take together while Max File Size is automatic (each file
 * also has its own limit): with filesystem mode's 2048 MB per file, 20 files could take 40 GB.
 */
export const MAX_TASK_BYTES = 4 * 1024 ** 3;

/**
 * What one task's files may take together. A user who sets Max File Size allowed each file that
 * size, so the task may take it for each of its files (never less than the default); only where
 * the option is automatic does the fixed MAX_TASK_BYTES apply.
 */
export function taskByteLimit(
	maxFileSizeMb: number | undefined,
	fileCount: number,
): { bytes: number; maxFileSizeMb?: number } {
	if (maxFileSizeMb === undefined || !(maxFileSizeMb > 0)) return { bytes: MAX_TASK_BYTES };
	const perFile = Math.floor(maxFileSizeMb * MB);
	return { bytes: Math.max(MAX_TASK_BYTES, perFile * Math.max(1, fileCount)), maxFileSizeMb };
}
/** What a task's files share (deadline, byte budget), before the first byte. */
export function taskLimitsFor(opts: DownloadOptions, fileCount: number): TaskLimits {
	const byteLimit = taskByteLimit(opts.maxFileSizeMb, fileCount);
	return {
		deadlineAt: opts.deadlineAt,
		deadlineName: opts.deadlineName,
		maxBytes: opts.maxTaskBytes ?? byteLimit.bytes,
		maxBytesSetBy:
			opts.maxTaskBytes !== undefined ? undefined : (byteLimit.maxFileSizeMb ?? 'automatic'),
		received: 0,
	};
}

/**
 * Downloads every file of a finished task, one after the other (a task has few files; items run
 * concurrently already). Binary properties: `data`, `data_1`, `data_2`… (base name settable).
 * All or nothing: each file stays uncommitted in n8n's binary store until every file arrived (the
 * last one is checked as it arrives and stored as it ends), so a failure (of any file, or a
 * cancellation) leaves no file behind. The files share the task's
 * limits: at most MAX_FILES_PER_TASK, taskByteLimit together, and the caller's deadline.
 * (The Trigger's callbacks take turns per trigger first: MediaGenerationTrigger/downloadLine.ts.)
 */
export async function downloadTaskFiles(
	ctx: ApiContext,
	task: Task,
	opts: DownloadOptions = {},
): Promise<{ binary: IBinaryKeyData; files: IDataObject[] }> {
	const base = opts.binaryProperty || 'data';
	const binary: IBinaryKeyData = {};
	const files: IDataObject[] = [];
	const list = task.files ?? [];
	const held: HeldFile[] = [];
	let failure: unknown;
	// The credential's choice, unless the caller made it (the credential is read once per run).
	const allowPrivateFileHosts =
		opts.allowPrivateFileHosts ??
		(await getApiCredentials(ctx).then(
			(c) => c.allowPrivateFileHosts,
			() => false,
		));
	const limits = taskLimitsFor(opts, list.length);
	try {
		if (list.length > MAX_FILES_PER_TASK) {
			throw new TransportError({
				kind: 'config',
				code: TASK_LIMIT_CODE,
				message: `the task lists ${list.length} files; at most ${MAX_FILES_PER_TASK} are downloaded for one task: fetch them from their URLs (in the task's files, valid 24 hours after generation) yourself. Not retried`,
			});
		}
		// Refuse a task with any unusable or refused address before fetching the others.
		for (const file of list) {
			const checked =
				checkFileUrl(file.file_url) ??
				(await checkFileHost(ctx, new URL(file.file_url.trim()), allowPrivateFileHosts));
			const refused =
				'kind' in checked ? checked : 'refused' in checked ? checked.refused : undefined;
			if (refused) {
				throw new TransportError({
					...refused,
					message: `Downloading ${String(file.file_url)} failed: ${refused.message}`,
				});
			}
		}
		for (let index = 0; index < list.length; index++) {
			const file = list[index];
			const guessedMime = resolveMimeType(undefined, file);
			const name = fileNameFor(
				opts.modelLabel,
				task.task_id,
				index,
				resolveExtension(guessedMime, file),
			);
			const lastOfTask = index === list.length - 1;
			held.push(
				await receiveFile(ctx, file, name, { ...opts, allowPrivateFileHosts, lastOfTask }, limits),
			);
		}
		for (let index = 0; index < list.length; index++) {
			const file = list[index];
			const downloaded = await commitOrThrow(held[index], file);
			held[index] = COMMITTED;
			const property = binaryPropertyFor(base, index);
			// Rename with the real mime type's extension when the guess was wrong.
			const ext = resolveExtension(downloaded.mimeType, file);
			const fileName = fileNameFor(opts.modelLabel, task.task_id, index, ext);
			downloaded.binary.fileName = fileName;
			downloaded.binary.fileExtension = ext;
			binary[property] = downloaded.binary;
			files.push(
				describeFile(file, {
					mime_type: downloaded.mimeType,
					file_name: fileName,
					size: downloaded.size,
					binary_property: property,
				}),
			);
		}
		return { binary, files };
	} catch (error) {
		failure = error;
	}
	await Promise.all(held.map(async (h) => await h.discard()));
	// Scrub just in case a file URL was built with the key (it must never be sent, see above).
	const { apiKey } = await getApiCredentials(ctx).catch(() => ({ apiKey: '' }));
	const fault = classifyError(failure);
	throw new TransportError({ ...fault, message: scrubSecret(fault.message, [apiKey]) });
}

/** Stands in for a file already committed: nothing left to discard. */
const COMMITTED: HeldFile = {
	mimeType: '',
	commit: async () => {
		throw new Error('already committed');
	},
	discard: async () => {},
};
