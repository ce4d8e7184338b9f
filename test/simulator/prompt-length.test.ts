// Contract: the simulator judges the 2.0 fast model's "up to 20,000 characters" on its own
// reading of the spec, Unicode code points, independently of the node's grapheme count, so
// engine tests can show where the two readings part.
import { client, type Client } from './client';
import { startSimulator, type Simulator } from './index';

const FAST = 'vidmodel-2.0-fast/image-to-video';
const IMG = 'https://cdn.example.com/frame.png';

let sim: Simulator;
let api: Client;
beforeAll(async () => {
	// Only what submit answers is checked here: the made-up image URLs are never fetched.
	sim = await startSimulator({ defaultDurationMs: 50, fetchImages: false });
	api = client(sim);
});
afterAll(() => sim.close());

const submit = (prompt: string) =>
	api.submit({ model: FAST, input: { prompt, image_urls: [IMG] } });

describe('prompt length in code points', () => {
	it('20,000 emoji (40,000 UTF-16 units) are accepted; 20,001 are refused', async () => {
		expect((await submit('😀'.repeat(20_000))).status).toBe(200);
		const refused = await submit('😀'.repeat(20_001));
		expect(refused.status).toBe(400);
		expect(refused.data.msg).toMatch(
			/input\.prompt: 20001 characters is too long; allowed at most 20000/,
		);
	});

	it('a joined emoji counts as its code points: 4,001 families (20,005) are refused', async () => {
		const refused = await submit('👨‍👩‍👧'.repeat(4001));
		expect(refused.status).toBe(400);
		expect(refused.data.msg).toMatch(/20005 characters/);
		expect((await submit('👨‍👩‍👧'.repeat(4000))).status).toBe(200);
	});
});
