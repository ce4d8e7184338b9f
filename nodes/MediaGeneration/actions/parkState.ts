import { createHmac, timingSafeEqual } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

/*
 * The park state: what a node that parks the execution ("Wait Mode: Park Until Callbacks")
 * leaves in each item for the Task → Wait for Completion node after it. It crosses a boundary:
 * the finisher reads it from its input, and its input can be anything (a webhook body split
 * into items, say). So it is written and checked here, and nowhere else: the parking node seals
 * it with an HMAC under a key derived from the credential's API key, binding this execution,
 * the parking node, the item, the task and every field the finisher obeys (the final task, an
 * error, the file options, the item's model and reference). The finisher uses a state only when
 * the seal holds for its own execution and the task it waits for, and the sealed item index,
 * parking node and parking time fit where it reads it; any other state is dropped with a
 * notice, and the task is read from the service like any task_id.
 */

/** Key of the park state in an item's json. */
export const PARK_KEY = 'media_generation_wait';

/** What a parked item carries under PARK_KEY. */
export interface ParkState extends IDataObject {
	parked: true;
	/** Index of the input item (and of the output item the finisher makes). */
	index: number;
	/** Name of the node that parked. */
	node: string;
	/** The item's task (absent when the item failed before it had one). */
	taskId?: string;
	/** The final task as the status endpoint gave it, once confirmed. */
	task?: IDataObject;
	/** Epoch ms the final state was first seen. */
	finishedAt?: number;
	/** Epoch ms the task was submitted (Generate) or picked up. */
	submittedAt?: number;
	/** Epoch ms the execution parked, and its deadline. */
	parkedAt?: number;
	deadline?: number;
	/** The item failed before anything could be awaited (invalid, not submitted). */
	error?: IDataObject;
	/** The parking node's file options, which the finishing node applies unless it sets its own. */
	downloadFiles?: boolean;
	binaryPropertyName?: string;
	/**
	 * The parked item's own facts the finisher shows (file names, labels), sealed with the state.
	 * Absent in 0.1.0's states, which the finisher still accepts (it then reads them from the
	 * item, as 0.1.0 did).
	 */
	item?: { model: string | null; reference: string | null };
	/** HMAC of all the above with the execution id (see sealParkState). */
	seal?: string;
}

/** Names the purpose of the derived key: the API key itself signs nothing. */
const DERIVATION_CONTEXT = 'n8n-nodes-media-generation/park-state/v1';

/** The key park states are sealed with: HMAC(apiKey, own label). None without an API key. */
export function parkStateKey(apiKey: string): Buffer | undefined {
	if (!apiKey) return undefined;
	return createHmac('sha256', apiKey).update(DERIVATION_CONTEXT, 'utf8').digest();
}

/** JSON with object keys sorted at every level: the same state gives the same text. */
function canonical(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
	if (typeof value === 'object' && value !== null) {
		const entries = Object.keys(value as IDataObject)
			.filter((k) => (value as IDataObject)[k] !== undefined)
			.sort()
			.map((k) => `${JSON.stringify(k)}:${canonical((value as IDataObject)[k])}`);
		return `{${entries.join(',')}}`;
	}
	return JSON.stringify(value ?? null);
}

function mac(key: Buffer, executionId: string, state: ParkState): Buffer {
	const fields: IDataObject = { ...state };
	delete fields.seal;
	return createHmac('sha256', key)
		.update(canonical([executionId, fields]), 'utf8')
		.digest();
}

/**
 * The state with its seal for this execution (a copy; the given one is not changed). `itemJson`:
 * the parked item, whose model and reference are sealed along.
 */
export function sealParkState(
	state: ParkState,
	key: Buffer,
	executionId: string,
	itemJson?: IDataObject,
): ParkState {
	const sealed: ParkState = { ...state };
	delete sealed.seal;
	if (itemJson) {
		const text = (value: unknown) => (typeof value === 'string' ? value : null);
		sealed.item = { model: text(itemJson.model), reference: text(itemJson.reference) };
	}
	sealed.seal = mac(key, executionId, sealed).toString('base64url');
	return sealed;
}

/**
 * The state an item carries, unchecked: only for the parked node's own webhook(), which reads
 * it from the execution's saved input (n8n's own data, which no caller can write).
 */
export function storedParkState(json: IDataObject | undefined): ParkState | undefined {
	const state = json?.[PARK_KEY];
	if (typeof state !== 'object' || state === null || Array.isArray(state)) return undefined;
	return (state as IDataObject).parked === true ? (state as ParkState) : undefined;
}

export interface ParkStateCheck {
	/** The state, when its seal holds for this execution and this task. */
	state?: ParkState;
	/** Why an item's state was dropped (shown in the output item as `notice`). */
	notice?: string;
}

/** Where the finisher reads a state: what the sealed index, node and parkedAt must match. */
export interface FinisherPlace {
	/** The finisher's input item index: the parked item's index (the items keep their order). */
	index: number;
	/** The nodes upstream of the finisher: the parking node is one of them. */
	upstream: string[];
	/** Now, epoch ms: a state is not parked in the future, nor after its deadline. */
	now: number;
}

/** Clocks of n8n's processes may differ this much (a main and a worker). */
const CLOCK_SKEW_MS = 5 * 60_000;

function placeMismatch(state: ParkState, place: FinisherPlace | undefined): boolean {
	if (!place) return false;
	if (state.index !== place.index || !place.upstream.includes(state.node)) return true;
	const { parkedAt, deadline } = state;
	if (parkedAt === undefined) return false;
	if (typeof parkedAt !== 'number' || !Number.isFinite(parkedAt)) return true;
	if (parkedAt > place.now + CLOCK_SKEW_MS) return true;
	return typeof deadline === 'number' && parkedAt > deadline;
}

/**
 * Checks the state of a finisher's input item. `taskId`: the task the finisher waits for (the
 * item's own task_id unless the node's Task ID says otherwise). `place`: where the finisher
 * reads it; the sealed index, node and parkedAt must fit it.
 */
export function verifyParkState(
	json: IDataObject | undefined,
	key: Buffer | undefined,
	executionId: string,
	taskId: string | undefined,
	place?: FinisherPlace,
): ParkStateCheck {
	if (json?.[PARK_KEY] === undefined) return {};
	const state = storedParkState(json);
	const dropped = {
		notice: `The "${PARK_KEY}" field of this item was ignored: it was not written by a Media Generation node that parked this execution (or it was changed since), so the task was read from the service like any task_id.`,
	};
	if (!state || !key || typeof state.seal !== 'string' || typeof state.node !== 'string')
		return dropped;
	const given = Buffer.from(state.seal, 'utf8');
	const expected = Buffer.from(mac(key, executionId, state).toString('base64url'), 'utf8');
	if (given.length !== expected.length || !timingSafeEqual(given, expected)) return dropped;
	// A genuine state of another item's task (the item's task_id changed) says nothing of this one.
	if (state.error === undefined && (state.taskId === undefined || state.taskId !== taskId))
		return dropped;
	// A genuine state on another item, or from a node that is not upstream, is not this item's.
	if (placeMismatch(state, place)) return dropped;
	return { state };
}
