import { accepted, rejected } from './helpers';

const MODEL = 'vidmodel-2.0-fast/image-to-video';
const start = 'https://files.example.com/start.png';
const end = 'https://files.example.com/end.jpg';
const base = { prompt: 'The flower opens', startFrameUrl: start };
const withOptions = (options: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
	...base,
	vidmodel20FastOptions: options,
	...extra,
});
const RATIOS = ['auto', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'];

describe('vidmodel-2.0-fast/image-to-video', () => {
	it('sends only prompt and the start frame when no option is chosen', () => {
		const result = accepted(MODEL, {
			...base,
			vidmodel20FastOptions: {},
			additionalInputFields: '{}',
		});
		expect(result.model).toBe(MODEL);
		expect(result.input).toEqual({ prompt: 'The flower opens', image_urls: [start] });
	});

	it('maps start and end frame onto image_urls in that order', () => {
		expect(accepted(MODEL, withOptions({ endFrameUrl: end })).input.image_urls).toEqual([
			start,
			end,
		]);
	});

	it('does not send a blank end frame', () => {
		expect(accepted(MODEL, withOptions({ endFrameUrl: ' ' })).input.image_urls).toEqual([start]);
	});

	it('never turns a lone end frame into the start frame', () => {
		expect(rejected(MODEL, withOptions({ endFrameUrl: end }, { startFrameUrl: '' }))).toEqual([
			'"image_urls[0]" (Start Frame URL) is empty for model vidmodel-2.0-fast/image-to-video; allowed: a public http(s) URL',
		]);
	});

	it('names the frame field of a bad URL', () => {
		expect(
			rejected(
				MODEL,
				withOptions({ endFrameUrl: 'end.jpg' }, { startFrameUrl: 'ftp://x/start.png' }),
			),
		).toEqual([
			'"image_urls[0]" (Start Frame URL) is "ftp://x/start.png" for model vidmodel-2.0-fast/image-to-video; allowed: a public http(s) URL',
			'"image_urls[1]" (End Frame URL) is "end.jpg" for model vidmodel-2.0-fast/image-to-video; allowed: a public http(s) URL',
		]);
	});

	it('rejects 0 or 3 frames given through additional fields', () => {
		const three = JSON.stringify({ image_urls: [start, end, start] });
		expect(rejected(MODEL, { ...base, additionalInputFields: three })).toEqual([
			'"image_urls" (Start Frame URL and End Frame URL) is a list of 3 items for model vidmodel-2.0-fast/image-to-video; allowed: a list of 1 to 2 http(s) URLs',
		]);
		expect(rejected(MODEL, { ...base, additionalInputFields: '{"image_urls": []}' })).toEqual([
			'"image_urls" (Start Frame URL and End Frame URL) is a list of 0 items for model vidmodel-2.0-fast/image-to-video; allowed: a list of 1 to 2 http(s) URLs',
		]);
	});

	it('accepts a prompt of 20,000 characters and rejects 20,001', () => {
		expect(accepted(MODEL, { ...base, prompt: 'a'.repeat(20000) }).input.prompt).toHaveLength(
			20000,
		);
		expect(rejected(MODEL, { ...base, prompt: 'a'.repeat(20001) })).toEqual([
			'"prompt" is a text of 20,001 characters for model vidmodel-2.0-fast/image-to-video; allowed: non-empty text of up to 20,000 characters',
		]);
	});

	it.each(Array.from({ length: 12 }, (_, i) => i + 4))('accepts duration %d', (duration) => {
		expect(accepted(MODEL, withOptions({ duration })).input).toEqual({
			...{ prompt: base.prompt, image_urls: [start] },
			duration,
		});
	});

	it('takes "15" from an expression as 15', () => {
		expect(accepted(MODEL, withOptions({ duration: '15' })).input.duration).toBe(15);
	});

	it.each([3, 16, 0, 4.5, -5])('rejects duration %d', (duration) => {
		expect(rejected(MODEL, withOptions({ duration }))).toEqual([
			`"duration" is ${duration} for model vidmodel-2.0-fast/image-to-video; allowed: an integer from 4 to 15`,
		]);
	});

	it.each(['480p', '720p'])('accepts resolution %s', (resolution) => {
		expect(accepted(MODEL, withOptions({ resolution })).input.resolution).toBe(resolution);
	});

	it('rejects 1080p, which only the 1.5 pro model offers', () => {
		expect(rejected(MODEL, withOptions({ resolution: '1080p' }))).toEqual([
			'"resolution" is "1080p" for model vidmodel-2.0-fast/image-to-video; allowed: 480p, 720p',
		]);
	});

	it.each(RATIOS)('accepts aspect ratio %s', (aspectRatio) => {
		expect(accepted(MODEL, withOptions({ aspectRatio })).input.aspect_ratio).toBe(aspectRatio);
	});

	it.each(['Auto', '2:1', '16/9'])('rejects aspect ratio %s', (aspectRatio) => {
		expect(rejected(MODEL, withOptions({ aspectRatio }))).toEqual([
			`"aspect_ratio" is ${JSON.stringify(aspectRatio)} for model vidmodel-2.0-fast/image-to-video; allowed: ${RATIOS.join(', ')}`,
		]);
	});

	it('sends every chosen option and nothing else', () => {
		expect(
			accepted(
				MODEL,
				withOptions({ endFrameUrl: end, duration: 6, resolution: '720p', aspectRatio: 'auto' }),
			).input,
		).toEqual({
			prompt: base.prompt,
			image_urls: [start, end],
			duration: 6,
			resolution: '720p',
			aspect_ratio: 'auto',
		});
	});

	describe('additional input fields', () => {
		it('passes an audio option through under the name the user gives', () => {
			expect(
				accepted(MODEL, { ...base, additionalInputFields: '{"generate_audio": true}' }).input,
			).toEqual({
				prompt: base.prompt,
				image_urls: [start],
				generate_audio: true,
			});
		});

		it.each([
			'reference_image_urls',
			'reference_video_urls',
			'reference_audio_url',
			'referenceImages',
		])('rejects %s, which must not be combined with the frames', (field) => {
			expect(
				rejected(MODEL, { ...base, additionalInputFields: JSON.stringify({ [field]: [end] }) }),
			).toEqual([
				`"${field}" cannot be combined with image_urls (start and end frames) for model vidmodel-2.0-fast/image-to-video; remove it from Additional Input Fields`,
			]);
		});

		it('reports a reference field together with the other problems of the item', () => {
			const errors = rejected(MODEL, {
				...base,
				prompt: '',
				vidmodel20FastOptions: { duration: 20 },
				additionalInputFields: '{"reference_image_urls": []}',
			});
			expect(errors).toHaveLength(3);
			expect(errors[0]).toMatch(/^"prompt" is empty/);
			expect(errors[1]).toMatch(/^"duration" is 20/);
			expect(errors[2]).toMatch(/^"reference_image_urls" cannot be combined/);
		});
	});
});
