import type {
	IAuthenticateGeneric,
	ICredentialTestRequest,
	ICredentialType,
	Icon,
	INodeProperties,
} from 'n8n-workflow';

export class MediaGenerationApi implements ICredentialType {
	name = 'mediaGenerationApi';

	displayName = 'Media Generation API';

	icon: Icon = {
		light: 'file:../nodes/MediaGeneration/mediaGeneration.svg',
		dark: 'file:../nodes/MediaGeneration/mediaGeneration.dark.svg',
	};

	documentationUrl =
		'https://github.com/n8n-nodes-media-generation/n8n-nodes-media-generation#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			description: 'The key created in the service console. It is shown only once there.',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'https://api.example.com',
			description:
				'Root address of the service, without /api/…. Trailing slashes and spaces are ignored.',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiKey.trim()}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.trim().replace(/\\/+$/, "")}}',
			url: '/api/generate/status/n8n-credential-test',
		},
	};
}
