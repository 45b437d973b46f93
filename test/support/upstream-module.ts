// Upstream's released source (sigs.k8s.io/secrets-store-csi-driver v1.6.1), read from the
// Go module cache: tests compare against upstream's own files (its RBAC manifests) instead
// of copies of them. `go mod download` fetches the module through the Go proxy if the
// cache lacks it (test/peers/install.sh already downloads it for its peers).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The upstream release the driver is a drop-in for. */
export const UPSTREAM_MODULE = 'sigs.k8s.io/secrets-store-csi-driver@v1.6.1';

let dir: string | undefined;

/** The directory of upstream's module source in the Go module cache (downloaded on first use). */
export function upstreamModuleDir(): string {
  if (dir === undefined) {
    const out = execFileSync('go', ['mod', 'download', '-json', UPSTREAM_MODULE], {
      encoding: 'utf8',
      cwd: '/',
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '', GOWORK: 'off' },
      maxBuffer: 1 << 20,
    });
    const parsed = JSON.parse(out) as { Dir?: string; Error?: string };
    if (!parsed.Dir)
      throw new Error(`go mod download ${UPSTREAM_MODULE} gave no directory${parsed.Error ? `: ${parsed.Error}` : ''}`);
    dir = parsed.Dir;
  }
  return dir;
}

/** A file of upstream's release, e.g. `deploy/rbac-secretproviderclass.yaml`. */
export function upstreamFile(relative: string): string {
  return join(upstreamModuleDir(), relative);
}
