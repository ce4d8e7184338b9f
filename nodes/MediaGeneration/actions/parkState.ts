import { createHmac, timingSafeEqual } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

/*
 * The park state: what a node that parks the execution ("Wait Mode: Park Until Callbacks")
 * leaves in each item for the Task → Wait for Completion node after it. It crosses a boundary:
 * the finisher reads it from its input, and its input can be anything (a webhook body split
 * into items, say). So it is written and checked here, and nowhere else: the parking node seals
 * it with an HMAC under a key derived from the credential's API key, binding this execution,
 * the parking node, the item, the task and every field the finisher obeys (the final task, an
 * error, the file options). The finisher uses a state only when the seal holds for its own
 * execution and the task it waits for; any other state is dropped with a notice, and the task
 * is read from the service like any task_id.
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
	return createHmac('sha256', key).update(canonical([executionId, fields]), 'utf8').digest();
}

/** The state with its seal for this execution (a copy; the given one is not changed). */
export function sealParkState(state: ParkState, key: Buffer, executionId: string): ParkState {
	const sealed: ParkState = { ...state };
	delete sealed.seal;
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

/**
 * Checks the state of a finisher's input item. `taskId`: the task the finisher waits for (the
 * item's own task_id unless the node's Task ID says otherwise).
 */
export function verifyParkState(
	json: IDataObject | undefined,
	key: Buffer | undefined,
	executionId: string,
	taskId: string | undefined,
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
	return { state };
}
