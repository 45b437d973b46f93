import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';

export const SPC_NAMESPACE = 'default';

/** The SecretProviderClass name of the volume with `count` objects. */
export const spcName = (count: number): string => `bench-${count}-objects`;

/**
 * Writes `count` files of `size` bytes (random printable text) under
 * `<providerRoot>/objects-<count>/` and returns their paths relative to the provider root.
 */
export async function writeObjects(providerRoot: string, count: number, size: number): Promise<string[]> {
  const dir = `objects-${count}`;
  await mkdir(join(providerRoot, dir), { recursive: true });
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const rel = `${dir}/secret-${String(i).padStart(3, '0')}`;
    await writeFile(join(providerRoot, rel), randomBytes(size).toString('base64').slice(0, size), { mode: 0o600 });
    paths.push(rel);
  }
  return paths;
}

/**
 * Writes a SecretProviderClass for the file provider listing `sourcePaths` (same format
 * as examples/local/secretproviderclass.yaml) into `spcDir` and returns its name.
 */
export async function writeSecretProviderClass(
  spcDir: string,
  count: number,
  sourcePaths: readonly string[],
): Promise<string> {
  const name = spcName(count);
  const doc = {
    apiVersion: 'secrets-store.csi.x-k8s.io/v1',
    kind: 'SecretProviderClass',
    metadata: { name, namespace: SPC_NAMESPACE },
    spec: { provider: 'file', parameters: { objects: objectsParameter(sourcePaths) } },
  };
  await mkdir(spcDir, { recursive: true });
  await writeFile(join(spcDir, `${name}.yaml`), stringify(doc));
  return name;
}

/** The object names the class lists for `sourcePaths` (secret-000, secret-001, …). */
export function objectNames(sourcePaths: readonly string[]): string[] {
  return sourcePaths.map((_, i) => `secret-${String(i).padStart(3, '0')}`);
}

/** The file provider's `objects` parameter listing `sourcePaths` under objectNames(). */
export function objectsParameter(sourcePaths: readonly string[]): string {
  const names = objectNames(sourcePaths);
  return stringify(sourcePaths.map((sourcePath, i) => ({ objectName: names[i], sourcePath })));
}
