// An azure SecretProviderClass's parameters read by the provider's own parser
// (providers/azure/parameters.ts), for the static checks of deploy/examples/azure
// (test/repo/deploy-azure.test.ts): the identity mode and the objects with the files they
// become. A class the provider would refuse fails the test with the provider's message.
import { parseAzureMount } from '../../providers/azure/parameters.js';
import { hasVersionHistory, historyFileName } from '../../providers/azure/objects.js';

/** Which identity a class reads Key Vault as (a service principal needs the pod's nodePublishSecretRef). */
export type AzureClassAuth = 'workload-identity' | 'managed-identity' | 'service-principal';

/** One entry of `objects.array`, with the file it becomes. */
export interface AzureClassObject {
  readonly objectName: string;
  readonly objectType: 'secret' | 'key' | 'cert';
  readonly fileName: string;
  readonly objectFormat: string;
  readonly objectEncoding: string;
  /** objectVersionHistory, 0 when not set. */
  readonly history: number;
}

/** A class's parameters read for the checks. */
export interface AzureClassShape {
  readonly auth: AzureClassAuth;
  readonly clientID: string | undefined;
  readonly objects: readonly AzureClassObject[];
  /** Every file the volume gets (history entries as `<file>/<i>`). */
  readonly files: readonly string[];
}

/** An unsigned JWT for `default/azure-demo` (the parser reads only its `sub`). */
const TOKEN = ['{"alg":"none"}', '{"sub":"system:serviceaccount:default:azure-demo"}', 'x']
  .map((p) => Buffer.from(p).toString('base64url'))
  .join('.');

/** What kubelet and the driver add to a Mount for a pod of `default/azure-demo`. */
const MOUNT_ATTRIBUTES = {
  'csi.storage.k8s.io/pod.name': 'demo-0',
  'csi.storage.k8s.io/pod.namespace': 'default',
  'csi.storage.k8s.io/serviceAccount.name': 'azure-demo',
  'csi.storage.k8s.io/serviceAccount.tokens': JSON.stringify({
    'api://AzureADTokenExchange': { token: TOKEN, expirationTimestamp: '2030-01-01T00:00:00Z' },
  }),
};

/** The class's identity and objects as the provider reads them; throws the provider's error where it would refuse. */
export function azureClassShape(parameters: Readonly<Record<string, string>>): AzureClassShape {
  const spSecret: Record<string, string> =
    parameters['useVMManagedIdentity'] === 'true' || parameters['clientID'] !== undefined
      ? {}
      : { clientid: 'placeholder', clientsecret: 'placeholder' };
  const config = parseAzureMount({ ...parameters, ...MOUNT_ATTRIBUTES }, spSecret, { cloudName: 'AzurePublicCloud' });
  if (config.warnings.length > 0) throw new Error(`the provider warns: ${config.warnings.join('; ')}`);
  const objects = config.objects.map((o) => ({
    objectName: o.objectName,
    objectType: o.objectType,
    fileName: o.fileName,
    objectFormat: o.objectFormat,
    objectEncoding: o.objectEncoding,
    history: o.objectVersionHistory,
  }));
  const files = config.objects.flatMap((o) =>
    hasVersionHistory(o)
      ? Array.from({ length: o.objectVersionHistory }, (_, i) => historyFileName(o, i))
      : [o.fileName],
  );
  return { auth: config.auth.kind, clientID: parameters['clientID'], objects, files };
}
