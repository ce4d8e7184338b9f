import { accepted, rejected } from './helpers';

const MODEL = 'generate-music';
const base = { prompt: 'A calm piano piece' };

describe('generate-music', () => {
	it('sends only the prompt when no option is chosen', () => {
		expect(accepted(MODEL, { ...base, musicOptions: {} })).toEqual({
			ok: true,
			model: 'generate-music',
			input: { prompt: 'A calm piano piece' },
		});
	});

	it('maps every option onto its input field', () => {
		const options = {
			style: 'ambient',
			title: 'Dawn',
			customMode: true,
			instrumental: false,
			mv: 'v3.5',
		};
		expect(accepted(MODEL, { ...base, musicOptions: options }).input).toEqual({
			prompt: 'A calm piano piece',
			style: 'ambient',
			title: 'Dawn',
			custom_mode: true,
			instrumental: false,
			mv: 'v3.5',
		});
	});

	it('does not send text options left blank', () => {
		expect(
			accepted(MODEL, { ...base, musicOptions: { style: '', title: ' ', mv: '' } }).input,
		).toEqual({
			prompt: 'A calm piano piece',
		});
	});

	it('takes "true"/"false" from expressions as booleans', () => {
		expect(
			accepted(MODEL, { ...base, musicOptions: { customMode: 'true', instrumental: 'FALSE' } })
				.input,
		).toMatchObject({
			custom_mode: true,
			instrumental: false,
		});
	});

	it('rejects values of the wrong kind, all at once', () => {
		expect(
			rejected(MODEL, { prompt: 42, musicOptions: { instrumental: 'maybe', title: 7 } }),
		).toEqual([
			'"prompt" is 42 for model generate-music; allowed: non-empty text',
			'"title" is 7 for model generate-music; allowed: non-empty text',
			'"instrumental" is "maybe" for model generate-music; allowed: true or false',
		]);
	});

	it('rejects an empty mv given through additional fields', () => {
		expect(rejected(MODEL, { ...base, additionalInputFields: '{"mv": ""}' })).toEqual([
			'"mv" is empty for model generate-music; allowed: non-empty text',
		]);
	});
});
