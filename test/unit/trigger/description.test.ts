import { MediaGenerationTrigger } from '../../../nodes/MediaGenerationTrigger/MediaGenerationTrigger.node';

describe('Media Generation Trigger description', () => {
	const node = new MediaGenerationTrigger();
	const d = node.description;
	const prop = (name: string) => d.properties.find((p) => p.name === name);

	it('is a POST webhook trigger with the service credential, not a tool', () => {
		expect(d.name).toBe('mediaGenerationTrigger');
		expect(d.group).toEqual(['trigger']);
		expect(d.inputs).toEqual([]);
		expect(d.usableAsTool).toBeUndefined();
		expect(d.credentials).toEqual([{ name: 'mediaGenerationApi', required: true }]);
		expect(d.webhooks).toEqual([
			expect.objectContaining({ name: 'default', httpMethod: 'POST', path: 'media-generation' }),
		]);
	});

	it('tells the user where the Production URL goes and that nothing is registered', () => {
		const notice = prop('notice');
		expect(notice?.type).toBe('notice');
		expect(notice?.displayName).toContain('Callback URL');
		expect(notice?.displayName).toContain('no webhook registration');
	});

	it('defaults: both events, verification on, files downloaded into "data"', () => {
		expect(prop('event')?.default).toBe('any');
		expect(prop('event')?.options?.map((o) => ('value' in o ? o.value : undefined))).toEqual([
			'any',
			'finished',
			'failed',
		]);
		expect(prop('verify')?.default).toBe(true);
		expect(prop('download')?.default).toBe(true);
		expect(prop('binaryPropertyName')?.default).toBe('data');
	});

	it('safe defaults: an unconfirmed callback is refused (503), unsigned ones too', () => {
		const options = prop('options')?.options as Array<{
			name: string;
			default?: unknown;
			typeOptions?: unknown;
		}>;
		expect(options.find((o) => o.name === 'onVerifyError')?.default).toBe('reject');
		expect(options.find((o) => o.name === 'acceptUnsigned')?.default).toBe(false);
	});

	it('the Secret is a masked field', () => {
		const options = prop('options')?.options as Array<{
			name: string;
			type?: string;
			typeOptions?: unknown;
		}>;
		expect(options.find((o) => o.name === 'secret')).toMatchObject({
			type: 'string',
			typeOptions: { password: true },
		});
	});

	it('turning verification off shows a warning notice, and only then', () => {
		const warning = prop('verifyOffNotice');
		expect(warning?.type).toBe('notice');
		expect(warning?.displayOptions).toEqual({ show: { verify: [false] } });
		expect(warning?.displayName).toMatch(/Verification is off: anyone/);
	});

	it('has nothing to register or remove at the service', async () => {
		const methods = node.webhookMethods.default;
		const ctx = {} as never;
		await expect(methods.checkExists.call(ctx)).resolves.toBe(true);
		await expect(methods.create.call(ctx)).resolves.toBe(true);
		await expect(methods.delete.call(ctx)).resolves.toBe(true);
	});
});
