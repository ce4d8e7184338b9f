// Test-only. n8n's deduplication store (`helpers.checkProcessedAndRecord`), in memory, for the
// harness: n8n's CLI backs it with a database row per workflow and node (or workflow), written
// at once (`packages/cli/src/deduplication/deduplication-helper.ts`, n8n 2.41.1). Only the
// `entries` mode is played (values kept as given, at most `maxEntries`, oldest dropped), which is
// what the package uses. Process-wide, as in n8n: n8n-core takes one instance for the process.
import { DataDeduplicationService } from 'n8n-core';
import type {
	DeduplicationItemTypes,
	DeduplicationScope,
	ICheckProcessedContextData,
	ICheckProcessedOptions,
	IDataDeduplicator,
	IDeduplicationOutput,
} from 'n8n-workflow';

const rows = new Map<string, DeduplicationItemTypes[]>();

function rowOf(scope: DeduplicationScope, data: ICheckProcessedContextData): string {
	const context = scope === 'node' ? `n:${data.node?.id ?? ''}` : '';
	return `${data.workflow.id}|${context}`;
}

const memory: IDataDeduplicator = {
	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		data: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		if (options.mode !== 'entries') throw new Error(`Harness: deduplication mode ${options.mode}`);
		const row = rows.get(rowOf(scope, data)) ?? [];
		const out: IDeduplicationOutput = { new: [], processed: [] };
		for (const item of items) {
			if (row.includes(item)) out.processed.push(item);
			else {
				out.new.push(item);
				row.push(item);
			}
		}
		if (options.maxEntries) row.splice(0, Math.max(0, row.length - options.maxEntries));
		rows.set(rowOf(scope, data), row);
		return out;
	},
	async removeProcessed(items, scope, data) {
		const row = rows.get(rowOf(scope, data)) ?? [];
		rows.set(
			rowOf(scope, data),
			row.filter((v) => !items.includes(v)),
		);
	},
	async clearAllProcessedItems(scope, data) {
		rows.delete(rowOf(scope, data));
	},
	async getProcessedDataCount(scope, data) {
		return (rows.get(rowOf(scope, data)) ?? []).length;
	},
};

let ready: Promise<void> | undefined;

/** Makes the in-memory store n8n-core's, once per process. */
export async function ensureDeduplication(): Promise<void> {
	ready ??= DataDeduplicationService.init(memory);
	await ready;
}
