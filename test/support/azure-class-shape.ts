// The shape of an azure SecretProviderClass's parameters as Azure's provider documents
// them, read for the static checks of deploy/examples/azure (test/unit/deploy-azure.test.ts):
// the identity mode, keyvaultName and tenant, and `objects` as yaml.v3 reads it upstream
// (an `array:` of YAML strings, each a map of known fields). A check of the examples'
// shape, not the provider's parser (providers/azure/parameters.ts), which the provider's
// own tests cover.
import { expect } from 'chai';
import { parse } from 'yaml';

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

const FIELDS = ['objectName', 'objectType', 'objectAlias', 'objectVersion', 'objectVersionHistory', 'objectFormat', 'objectEncoding', 'filePermission'];

function readObject(text: unknown, i: number): AzureClassObject {
  expect(text, `objects.array[${i}] is a YAML string ("- |")`).to.be.a('string');
  const o = parse(text as string) as Record<string, unknown>;
  expect(o, `objects.array[${i}] is a map`).to.be.an('object');
  for (const k of Object.keys(o)) expect(FIELDS, `objects.array[${i}].${k} is a field of Azure's provider`).to.include(k);
  const name = String(o['objectName'] ?? '');
  expect(name, `objects.array[${i}].objectName is a Key Vault name`).to.match(/^[0-9A-Za-z-]{1,127}$/);
  const type = String(o['objectType'] ?? '');
  expect(['secret', 'key', 'cert'], `objects.array[${i}].objectType`).to.include(type);
  const format = String(o['objectFormat'] ?? '');
  expect(['', 'pem', 'pfx'], `objects.array[${i}].objectFormat`).to.include(format);
  if (format === 'pfx') expect(type, 'objectFormat pfx is for secrets').to.equal('secret');
  const encoding = String(o['objectEncoding'] ?? '');
  expect(['', 'utf-8', 'base64', 'hex'], `objects.array[${i}].objectEncoding`).to.include(encoding);
  if (encoding !== '') expect(type, 'objectEncoding is for secrets').to.equal('secret');
  if (o['filePermission'] !== undefined) expect(String(o['filePermission']), 'filePermission is octal').to.match(/^0?[0-7]{3}$/);
  const history = Number(o['objectVersionHistory'] ?? 0);
  expect(Number.isInteger(history) && history >= 0, `objects.array[${i}].objectVersionHistory`).to.equal(true);
  const alias = String(o['objectAlias'] ?? '');
  return { objectName: name, objectType: type as AzureClassObject['objectType'], fileName: alias === '' ? name : alias, objectFormat: format === '' ? 'pem' : format, objectEncoding: encoding === '' ? 'utf-8' : encoding, history };
}

/** The class's identity, vault, tenant and objects; fails the test where Azure's provider would refuse. */
export function azureClassShape(parameters: Readonly<Record<string, string>>): AzureClassShape {
  expect(parameters['keyvaultName'], 'keyvaultName').to.match(/^[-A-Za-z0-9]{3,24}$/);
  expect(parameters['tenantID'] ?? parameters['tenantId'], 'tenantID (or tenantId)').to.match(/^[0-9A-Za-z.-]+$/);
  expect(parameters['usePodIdentity'] ?? 'false', 'usePodIdentity is refused').to.equal('false');
  expect(parameters['useAzureTokenProxy'] ?? 'false', 'useAzureTokenProxy is refused').to.equal('false');
  const clientID = parameters['clientID'];
  const vm = parameters['useVMManagedIdentity'] === 'true';
  expect(clientID !== undefined && vm, 'clientID and useVMManagedIdentity together').to.equal(false);
  if (parameters['userAssignedIdentityID'] !== undefined) expect(vm, 'userAssignedIdentityID needs useVMManagedIdentity').to.equal(true);
  const auth: AzureClassAuth = vm ? 'managed-identity' : clientID !== undefined ? 'workload-identity' : 'service-principal';

  const objects = parse(parameters['objects'] ?? '') as { array?: unknown[] } | null;
  expect(objects?.array, 'objects.array').to.be.an('array').that.is.not.empty;
  const list = (objects?.array ?? []).map(readObject);
  const files = list.flatMap((o) => (o.history > 1 ? Array.from({ length: o.history }, (_, i) => `${o.fileName}/${i}`) : [o.fileName]));
  expect(new Set(list.map((o) => o.fileName)).size, 'every object writes its own file').to.equal(list.length);
  return { auth, clientID, objects: list, files };
}
