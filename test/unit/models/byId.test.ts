import { accepted, rejected } from './helpers';

const BAD_RATIOS = [
	'16x9',
	'0:1',
	'16:0',
	'16:',
	':9',
	'16:9:1',
	'a:b',
	'-1:2',
	'1.5:1',
	'square',
	'',
];

describe('Other Video Model (by ID)', () => {
	const MODEL = 'video-by-id';
	const base = { modelId: 'acme-video-3', prompt: 'Waves on a beach' };

	it('sends the typed identifier as model and only the prompt when no option is chosen', () => {
		expect(accepted(MODEL, { ...base, videoByIdOptions: {} })).toEqual({
			ok: true,
			model: 'acme-video-3',
			input: { prompt: 'Waves on a beach' },
		});
	});

	it('trims the identifier', () => {
		expect(accepted(MODEL, { ...base, modelId: '  acme-video-3 ' }).model).toBe('acme-video-3');
	});

	it.each(['', '   ', 'acme video'])('rejects the identifier %j', (modelId) => {
		const errors = rejected(MODEL, { ...base, modelId });
		expect(errors).toHaveLength(1);
		expect(errors[0]).toMatch(
			/^"modelId" \(Model ID\) is (empty|blank|"acme video") for Other Video Model \(by ID\); allowed: the identifier of a model of the service, without spaces$/,
		);
	});

	it('rejects a missing identifier and a bad field together', () => {
		expect(rejected(MODEL, { prompt: 'x', videoByIdOptions: { duration: 0 } })).toEqual([
			'"modelId" (Model ID) is missing for Other Video Model (by ID); allowed: the identifier of a model of the service, without spaces',
			'"duration" is 0 for model Other Video Model (by ID); allowed: an integer of at least 1',
		]);
	});

	it('sends duration and aspect ratio as chosen', () => {
		expect(
			accepted(MODEL, { ...base, videoByIdOptions: { duration: '6', aspectRatio: '21:9' } }).input,
		).toEqual({
			prompt: 'Waves on a beach',
			duration: 6,
			aspect_ratio: '21:9',
		});
	});

	it.each([1, 5, 60])('accepts duration %d', (duration) => {
		expect(accepted(MODEL, { ...base, videoByIdOptions: { duration } }).input.duration).toBe(
			duration,
		);
	});

	it.each([0, -1, 2.5])('rejects duration %d', (duration) => {
		expect(rejected(MODEL, { ...base, videoByIdOptions: { duration } })).toEqual([
			`"duration" is ${duration} for model acme-video-3; allowed: an integer of at least 1`,
		]);
	});

	it.each(['16:9', '1:1', '21:9', '9:16'])('accepts aspect ratio %s', (aspectRatio) => {
		expect(accepted(MODEL, { ...base, videoByIdOptions: { aspectRatio } }).input.aspect_ratio).toBe(
			aspectRatio,
		);
	});

	it.each(BAD_RATIOS.filter((r) => r !== ''))('rejects aspect ratio %j', (aspectRatio) => {
		expect(rejected(MODEL, { ...base, videoByIdOptions: { aspectRatio } })).toEqual([
			`"aspect_ratio" is ${JSON.stringify(aspectRatio)} for model acme-video-3; allowed: a ratio W:H of two positive integers, such as 16:9`,
		]);
	});

	it('does not send an aspect ratio left blank', () => {
		expect(accepted(MODEL, { ...base, videoByIdOptions: { aspectRatio: '' } }).input).toEqual({
			prompt: 'Waves on a beach',
		});
	});
});

describe('Image Model (by ID)', () => {
	const MODEL = 'image-by-id';
	const base = { modelId: 'acme-image-1', prompt: 'A red bicycle' };

	it('sends the typed identifier and only the prompt when no option is chosen', () => {
		expect(accepted(MODEL, { ...base, imageByIdOptions: {} })).toEqual({
			ok: true,
			model: 'acme-image-1',
			input: { prompt: 'A red bicycle' },
		});
	});

	it('sends size and n as chosen', () => {
		expect(accepted(MODEL, { ...base, imageByIdOptions: { size: '3:2', n: 4 } }).input).toEqual({
			prompt: 'A red bicycle',
			size: '3:2',
			n: 4,
		});
	});

	it.each([1, 2, 10])('accepts n = %d', (n) => {
		expect(accepted(MODEL, { ...base, imageByIdOptions: { n } }).input.n).toBe(n);
	});

	it('takes n = "2" from an expression as 2', () => {
		expect(accepted(MODEL, { ...base, imageByIdOptions: { n: '2' } }).input.n).toBe(2);
	});

	it.each([0, -1, 1.5])('rejects n = %d', (n) => {
		expect(rejected(MODEL, { ...base, imageByIdOptions: { n } })).toEqual([
			`"n" is ${n} for model acme-image-1; allowed: an integer of at least 1`,
		]);
	});

	it('rejects n given as words', () => {
		expect(rejected(MODEL, { ...base, imageByIdOptions: { n: 'two' } })).toEqual([
			'"n" is "two" for model acme-image-1; allowed: an integer of at least 1',
		]);
	});

	it.each(BAD_RATIOS.filter((r) => r !== ''))('rejects size %j', (size) => {
		expect(rejected(MODEL, { ...base, imageByIdOptions: { size } })).toEqual([
			`"size" is ${JSON.stringify(size)} for model acme-image-1; allowed: a ratio W:H of two positive integers, such as 16:9`,
		]);
	});

	it('validates a size given through additional fields', () => {
		expect(rejected(MODEL, { ...base, additionalInputFields: '{"size": "1024x1024"}' })).toEqual([
			'"size" is "1024x1024" for model acme-image-1; allowed: a ratio W:H of two positive integers, such as 16:9',
		]);
	});

	it('lets additional fields add what the spec does not list', () => {
		expect(
			accepted(MODEL, { ...base, additionalInputFields: '{"negative_prompt": "blur"}' }).input,
		).toEqual({
			prompt: 'A red bicycle',
			negative_prompt: 'blur',
		});
	});
});
