import { accepted, rejected } from './helpers';

const MODEL = 'vidmodel-1.5-pro';
const base = { prompt: 'A lighthouse at dusk', aspectRatio: '16:9', duration: 8 };
const withOptions = (options: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
	...base,
	vidmodel15ProOptions: options,
	...extra,
});
const RATIOS_TEXT = '1:1, 21:9, 4:3, 3:4, 16:9, 9:16';

describe('vidmodel-1.5-pro', () => {
	it('sends exactly the required fields when no option is chosen', () => {
		const result = accepted(MODEL, {
			...base,
			vidmodel15ProOptions: {},
			additionalInputFields: '{}',
		});
		expect(result.model).toBe('vidmodel-1.5-pro');
		expect(result.input).toEqual({
			prompt: 'A lighthouse at dusk',
			aspect_ratio: '16:9',
			duration: 8,
		});
	});

	it.each(['1:1', '21:9', '4:3', '3:4', '16:9', '9:16'])('accepts aspect ratio %s', (ratio) => {
		expect(accepted(MODEL, { ...base, aspectRatio: ratio }).input.aspect_ratio).toBe(ratio);
	});

	it.each(['2:1', '16x9', '9:21', 'auto', ' 16:9'])(
		'rejects aspect ratio %j naming the allowed values',
		(ratio) => {
			expect(rejected(MODEL, { ...base, aspectRatio: ratio })).toEqual([
				`"aspect_ratio" is ${JSON.stringify(ratio)} for model vidmodel-1.5-pro; allowed: ${RATIOS_TEXT}`,
			]);
		},
	);

	it.each([4, 8, 12])('accepts duration %d', (duration) => {
		expect(accepted(MODEL, { ...base, duration }).input.duration).toBe(duration);
	});

	it('takes a duration that an expression gave as text ("12") as the number 12', () => {
		expect(accepted(MODEL, { ...base, duration: '12' }).input.duration).toBe(12);
	});

	it.each([3, 5, 10, 13, 16, 0, -4, 8.5])('rejects duration %d', (duration) => {
		expect(rejected(MODEL, { ...base, duration })).toEqual([
			`"duration" is ${duration} for model vidmodel-1.5-pro; allowed: 4, 8, 12`,
		]);
	});

	it('rejects a duration text that is no number, quoting it', () => {
		expect(rejected(MODEL, { ...base, duration: 'eight' })).toEqual([
			'"duration" is "eight" for model vidmodel-1.5-pro; allowed: 4, 8, 12',
		]);
	});

	it('reports every missing required field of a fresh panel at once', () => {
		expect(rejected(MODEL, { prompt: '', aspectRatio: '', duration: '' })).toEqual([
			'"prompt" is empty for model vidmodel-1.5-pro; allowed: non-empty text',
			`"aspect_ratio" is empty for model vidmodel-1.5-pro; allowed: ${RATIOS_TEXT}`,
			'"duration" is empty for model vidmodel-1.5-pro; allowed: 4, 8, 12',
		]);
		expect(rejected(MODEL, {})).toEqual([
			'"prompt" is missing for model vidmodel-1.5-pro; allowed: non-empty text',
			`"aspect_ratio" is missing for model vidmodel-1.5-pro; allowed: ${RATIOS_TEXT}`,
			'"duration" is missing for model vidmodel-1.5-pro; allowed: 4, 8, 12',
		]);
	});

	it('rejects a blank prompt', () => {
		expect(rejected(MODEL, { ...base, prompt: '   ' })).toEqual([
			'"prompt" is blank for model vidmodel-1.5-pro; allowed: non-empty text',
		]);
	});

	it.each([
		['480p', '480p'],
		['720p', '720p'],
		['1080p', '1080p'],
	])('sends resolution %s', (resolution, sent) => {
		expect(accepted(MODEL, withOptions({ resolution })).input).toEqual({
			prompt: base.prompt,
			aspect_ratio: '16:9',
			duration: 8,
			resolution: sent,
		});
	});

	it('rejects a resolution the model does not offer', () => {
		expect(rejected(MODEL, withOptions({ resolution: '4k' }))).toEqual([
			'"resolution" is "4k" for model vidmodel-1.5-pro; allowed: 480p, 720p, 1080p',
		]);
	});

	it('sends fixed_lens and generate_audio as chosen, false included', () => {
		expect(
			accepted(MODEL, withOptions({ fixedLens: true, generateAudio: false })).input,
		).toMatchObject({
			fixed_lens: true,
			generate_audio: false,
		});
		expect(accepted(MODEL, withOptions({ fixedLens: 'false' })).input.fixed_lens).toBe(false);
	});

	it('rejects a boolean option that is neither true nor false', () => {
		expect(rejected(MODEL, withOptions({ generateAudio: 'yes' }))).toEqual([
			'"generate_audio" is "yes" for model vidmodel-1.5-pro; allowed: true or false',
		]);
	});

	describe('reference images (image_urls)', () => {
		const a = 'https://files.example.com/a.png';
		const b = 'http://files.example.com/b.webp?sig=1';

		it('sends one or two URLs in order (image-to-video)', () => {
			expect(accepted(MODEL, withOptions({ imageUrls: [a] })).input.image_urls).toEqual([a]);
			expect(accepted(MODEL, withOptions({ imageUrls: [a, b] })).input.image_urls).toEqual([a, b]);
		});

		it('sends no image_urls for an empty list or blank entries (text-to-video)', () => {
			expect(accepted(MODEL, withOptions({ imageUrls: [] })).input).not.toHaveProperty(
				'image_urls',
			);
			expect(accepted(MODEL, withOptions({ imageUrls: ['', '  '] })).input).not.toHaveProperty(
				'image_urls',
			);
		});

		it('reads URLs an expression gave as one text: a JSON array, or split on whitespace; trims entries', () => {
			expect(accepted(MODEL, withOptions({ imageUrls: `${a}\n${b}` })).input.image_urls).toEqual([
				a,
				b,
			]);
			expect(accepted(MODEL, withOptions({ imageUrls: [` ${a} `] })).input.image_urls).toEqual([a]);
			expect(
				accepted(MODEL, withOptions({ imageUrls: JSON.stringify([a, b]) })).input.image_urls,
			).toEqual([a, b]);
			expect(rejected(MODEL, withOptions({ imageUrls: '[not json' }))).toEqual([
				'"image_urls[0]" is "[not" for model vidmodel-1.5-pro; allowed: a public http(s) URL',
				'"image_urls[1]" is "json" for model vidmodel-1.5-pro; allowed: a public http(s) URL',
			]);
		});

		it('rejects 3 URLs', () => {
			expect(rejected(MODEL, withOptions({ imageUrls: [a, b, a] }))).toEqual([
				'"image_urls" is a list of 3 items for model vidmodel-1.5-pro; allowed: a list of 0 to 2 http(s) URLs',
			]);
		});

		it.each([
			'ftp://files.example.com/a.png',
			'files.example.com/a.png',
			'https://',
			'data:image/png;base64,AAAA',
		])('rejects %j naming its position', (url) => {
			expect(rejected(MODEL, withOptions({ imageUrls: [a, url] }))).toEqual([
				`"image_urls[1]" is ${JSON.stringify(url)} for model vidmodel-1.5-pro; allowed: a public http(s) URL`,
			]);
		});
	});

	describe('additional input fields', () => {
		it('adds fields the panel does not show, last', () => {
			const { input } = accepted(MODEL, {
				...base,
				additionalInputFields: '{"seed": 42, "camera": {"pan": "left"}}',
			});
			expect(input).toEqual({
				...{ prompt: base.prompt, aspect_ratio: '16:9', duration: 8 },
				seed: 42,
				camera: { pan: 'left' },
			});
		});

		it('accepts an object an expression produced', () => {
			expect(accepted(MODEL, { ...base, additionalInputFields: { seed: 7 } }).input.seed).toBe(7);
		});

		it('may replace a panel value with a valid one', () => {
			expect(
				accepted(MODEL, { ...base, additionalInputFields: '{"duration": 12}' }).input.duration,
			).toBe(12);
		});

		it('may not replace a panel value with an invalid one', () => {
			expect(
				rejected(MODEL, {
					...base,
					additionalInputFields: '{"duration": 10, "fixed_lens": "yes"}',
				}),
			).toEqual([
				'"duration" is 10 for model vidmodel-1.5-pro; allowed: 4, 8, 12',
				'"fixed_lens" is "yes" for model vidmodel-1.5-pro; allowed: true or false',
			]);
		});

		it('rejects text that is not JSON', () => {
			const [error] = rejected(MODEL, { ...base, additionalInputFields: '{seed: 1}' });
			expect(error).toMatch(
				/^"Additional Input Fields" is not valid JSON \(.+\) for model vidmodel-1\.5-pro; allowed: a JSON object/,
			);
		});

		it.each([
			['[1, 2]', 'a list of 2 items'],
			['"text"', '"text"'],
			['null', 'null'],
			['42', '42'],
		])('rejects %s, which is not an object', (json, shown) => {
			expect(rejected(MODEL, { ...base, additionalInputFields: json })).toEqual([
				`"Additional Input Fields" is ${shown} for model vidmodel-1.5-pro; allowed: a JSON object such as {"field": "value"}`,
			]);
		});

		it('still reports the panel problems when the JSON is invalid', () => {
			expect(rejected(MODEL, { ...base, duration: 10, additionalInputFields: '[' })).toHaveLength(
				2,
			);
		});
	});
});

describe('vidmodel-1.5-pro additional fields spelled like panel names', () => {
	it('rejects "aspectRatio" and "fixed-lens", naming the service’s field names', () => {
		expect(
			rejected('vidmodel-1.5-pro', {
				...base,
				additionalInputFields: '{"aspectRatio": "1:1", "fixed-lens": true, "seed": 1}',
			}),
		).toEqual([
			'"aspectRatio" is not a field of model vidmodel-1.5-pro; the field is named "aspect_ratio" (check Additional Input Fields)',
			'"fixed-lens" is not a field of model vidmodel-1.5-pro; the field is named "fixed_lens" (check Additional Input Fields)',
		]);
	});
});
