// The numbers docs/form-photos-to-videos.md gives for examples/form-photo-to-video.json.
import { readExample } from '../docs/guideControls';

/** Wait for Video's Timeout (Minutes) in the form example (the guide binds it). */
const WAIT_TIMEOUT_MINUTES = 15;

it(`Wait for Video waits at most ${WAIT_TIMEOUT_MINUTES} minutes, the Timeout (Minutes) the guide names`, () => {
	const wait = readExample('form-photo-to-video.json').nodes.find(
		(n) => n.name === 'Wait for Video',
	);
	expect((wait?.parameters as { options?: { timeoutMinutes?: number } }).options?.timeoutMinutes).toBe(
		WAIT_TIMEOUT_MINUTES,
	);
});
