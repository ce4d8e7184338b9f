// Test-only credentials helper. n8n's CLI decrypts credentials from its database; here the
// test hands over the plain values. What matters is the rest, which follows n8n's CLI
// (packages/cli/src/credentials-helper.ts): a credential type's generic `authenticate` block is
// applied by resolving its `={{$credentials…}}` expressions with the workflow's expression
// engine and setting the result on the request, so requests go out exactly as in n8n.
import type {
	ICredentialDataDecryptedObject,
	ICredentials,
	ICredentialType,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeProperties,
	IRequestOptionsSimplified,
	IWorkflowExecuteAdditionalData,
	Workflow,
} from 'n8n-workflow';
import { ICredentialsHelper, NodeHelpers, isExpression } from 'n8n-workflow';

export type CredentialValues = Record<string, ICredentialDataDecryptedObject>;

/**
 * How many times a credential was resolved (getDecrypted) in this process, by type. In n8n each
 * resolution is a database read and a decryption, and in a webhook call of n8n 2.x a fresh
 * expression isolate as well.
 */
export const credentialResolutions = new Map<string, number>();

export class HarnessCredentialsHelper extends ICredentialsHelper {
	constructor(
		private readonly types: Map<string, ICredentialType>,
		/** Plain credential values by credential type name, e.g. { mediaGenerationApi: {...} }. */
		private readonly values: CredentialValues,
	) {
		super();
	}

	private getType(name: string): ICredentialType {
		const type = this.types.get(name);
		if (!type) throw new Error(`Harness: unknown credential type "${name}"`);
		return type;
	}

	getParentTypes(name: string): string[] {
		const type = this.types.get(name);
		return (type?.extends ?? []).flatMap((parent) => [parent, ...this.getParentTypes(parent)]);
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		incoming: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const requestOptions = incoming as IHttpRequestOptions & Record<string, unknown>;
		const { authenticate } = this.getType(typeName);
		if (typeof authenticate === 'function') {
			return await authenticate(credentials, requestOptions);
		}
		if (authenticate?.type === 'generic') {
			if (!workflow || !node)
				throw new Error('Harness: generic authenticate needs workflow and node');
			requestOptions.headers ??= {};
			const resolve = (value: string): string => {
				if (!isExpression(value)) return value;
				const resolved = workflow.expression.getSimpleParameterValue(
					node,
					value,
					'internal',
					{ $credentials: credentials },
					undefined,
					'',
				);
				return resolved ? String(resolved) : '';
			};
			for (const [outerKey, entries] of Object.entries(authenticate.properties)) {
				const target = (requestOptions[outerKey] ??= {}) as Record<string, unknown>;
				for (const [key, value] of Object.entries(entries as Record<string, string>)) {
					target[resolve(key)] = resolve(value);
				}
			}
		}
		return requestOptions;
	}

	async preAuthentication(): Promise<ICredentialDataDecryptedObject | undefined> {
		return undefined;
	}

	async runPreAuthentication(): Promise<ICredentialDataDecryptedObject | undefined> {
		return undefined;
	}

	async getCredentials(_details: INodeCredentialsDetails, type: string): Promise<ICredentials> {
		throw new Error(`Harness: getCredentials(${type}) is not supported (no credential store)`);
	}

	async getDecrypted(
		_additionalData: IWorkflowExecuteAdditionalData,
		_details: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		credentialResolutions.set(type, (credentialResolutions.get(type) ?? 0) + 1);
		const given = this.values[type];
		if (!given) {
			throw new Error(`Harness: no credential values given for type "${type}"`);
		}
		// n8n fills in the type's defaults for properties the stored credential lacks.
		const withDefaults = NodeHelpers.getNodeParameters(
			this.getCredentialsProperties(type),
			given as never,
			true,
			false,
			null,
			null,
		) as ICredentialDataDecryptedObject | null;
		return { ...(withDefaults ?? {}), ...given };
	}

	async updateCredentials(): Promise<void> {}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	getCredentialsProperties(type: string): INodeProperties[] {
		return this.getType(type).properties;
	}
}
