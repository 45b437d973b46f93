// The real azure provider process (`secrets-store-csi provider azure`) wired to the Key
// Vault + Entra stand-in (test/support/azure-keyvault/): the test-only connect-to rules
// send the real host names to the stand-in, NODE_EXTRA_CA_CERTS trusts its CA (nothing
// skips verification), and AZURE_POD_IDENTITY_AUTHORITY_HOST points managed identity
// at its IMDS. Workload identity tokens are signed by a test issuer the stand-in's Entra
// trusts as a federated credential (kubelet would mint them for the CSIDriver's
// tokenRequests audience api://AzureADTokenExchange).
import type { AzureStandIn } from './azure-keyvault/stand-in.js';
import { podAttributes, startProviderProcess, type ProviderProcess } from './provider-process.js';
import { ServiceAccountTokenIssuer, tokensAttribute } from './service-account-tokens.js';

/** The audience Azure workload identity exchanges. */
export const AZURE_AUDIENCE = 'api://AzureADTokenExchange';

/** Starts the azure provider against `standIn` (its vaults must exist: connect-to names them). */
export function startAzureProvider(
  standIn: AzureStandIn,
  args: readonly string[] = [],
  options: { providersDir?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ProviderProcess> {
  return startProviderProcess(
    'azure',
    [`--test-only-connect-to=${standIn.connectTo}`, ...args],
    {
      NODE_EXTRA_CA_CERTS: standIn.caPath,
      AZURE_POD_IDENTITY_AUTHORITY_HOST: standIn.imdsUrl,
      ...options.env,
    },
    options.providersDir === undefined ? {} : { providersDir: options.providersDir },
  );
}

/** A workload identity: a test issuer federated with app `clientId` for service account `namespace/name`. */
export interface WorkloadIdentity {
  readonly clientId: string;
  readonly issuer: ServiceAccountTokenIssuer;
  /** The pod attributes kubelet and the driver pass for pod `pod` of this service account, with its token. */
  attributes(pod?: string, serviceAccount?: string): Record<string, string>;
}

/** Federates `clientId` with a fresh issuer for `serviceAccount` (`ns/name`) on the stand-in. */
export function workloadIdentity(
  standIn: AzureStandIn,
  clientId: string,
  serviceAccount: string,
): WorkloadIdentity & { principal: ReturnType<AzureStandIn['federate']> } {
  const issuer = new ServiceAccountTokenIssuer('https://oidc.cluster.test/issuer');
  const [ns, name] = serviceAccount.split('/') as [string, string];
  const principal = standIn.federate(
    clientId,
    issuer.issuer,
    [issuer.publicKey],
    `system:serviceaccount:${ns}:${name}`,
  );
  return {
    clientId,
    issuer,
    principal,
    attributes(pod = 'web-0', sa = serviceAccount) {
      return {
        ...podAttributes(pod, sa),
        'csi.storage.k8s.io/serviceAccount.tokens': tokensAttribute(issuer.token(sa, AZURE_AUDIENCE), AZURE_AUDIENCE),
      };
    },
  };
}

/** Azure's `objects` parameter for these object YAML mappings (upstream's array of YAML strings). */
export function objectsParameter(objects: readonly Record<string, string | number>[]): string {
  const entry = (o: Record<string, string | number>) =>
    `    - |\n${Object.entries(o)
      .map(([k, v]) => `      ${k}: ${typeof v === 'number' ? v : JSON.stringify(v)}`)
      .join('\n')}`;
  return `array:\n${objects.map(entry).join('\n')}\n`;
}
