// Where a Mount's CA comes from: the nodePublishSecretRef (the driver, per pod), or, for a
// Mount that carries none (the SecretSync controller never sends one), the per-namespace
// directory of --ca-dir: `<ca-dir>/<namespace>/ca.crt` and `ca.key`, read at every Mount so
// an updated Secret volume takes effect at once. A namespace without its directory gets no CA.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CA_CERT_KEY, CA_KEY_KEY } from './ca.js';
import { caMissing } from './pki-errors.js';

/** The CA's PEM texts of one Mount and where they came from (named in error messages). */
export interface CaSource {
  /** `ca.crt` and `ca.key`, each when present. */
  readonly data: Readonly<Record<string, string>>;
  /** `nodePublishSecretRef`, or `--ca-dir <namespace>/`. */
  readonly source: string;
}

const POD_NAMESPACE = 'csi.storage.k8s.io/pod.namespace';
/** A Kubernetes namespace name (RFC 1123 label): never a path of its own. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** Most bytes read from one file of the directory. */
const MAX_FILE_BYTES = 1 << 20;

/** Whether the Mount's nodePublishSecretRef holds a CA key: then it is the source, as before --ca-dir. */
export function hasSecretCa(secrets: Readonly<Record<string, string>>): boolean {
  return secrets[CA_CERT_KEY] !== undefined || secrets[CA_KEY_KEY] !== undefined;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    const bytes = await readFile(path);
    return bytes.length > MAX_FILE_BYTES ? undefined : bytes.toString('latin1');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw caMissing(`--ca-dir: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/**
 * The CA of a Mount: the nodePublishSecretRef's when it holds `ca.crt` or `ca.key` (or no
 * --ca-dir is set), else the files of the pod namespace's directory. CaMissing when the
 * Mount names no valid namespace.
 */
export async function caSource(
  secrets: Readonly<Record<string, string>>,
  attributes: Readonly<Record<string, string>>,
  caDir: string | undefined,
): Promise<CaSource> {
  if (caDir === undefined || hasSecretCa(secrets)) return { data: secrets, source: 'nodePublishSecretRef' };
  const namespace = attributes[POD_NAMESPACE] ?? '';
  if (!NAMESPACE.test(namespace))
    throw caMissing(
      `no nodePublishSecretRef CA, and the Mount's ${POD_NAMESPACE} ${JSON.stringify(namespace.slice(0, 80))} names no --ca-dir directory`,
    );
  const data: Record<string, string> = {};
  for (const key of [CA_CERT_KEY, CA_KEY_KEY]) {
    const text = await readOptional(join(caDir, namespace, key));
    if (text !== undefined) data[key] = text;
  }
  return { data, source: `--ca-dir ${namespace}/` };
}
