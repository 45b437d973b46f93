import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** This package's version (package.json), reported as CSI vendor_version and provider runtime_version. */
export function packageVersion(): string {
  if (cached === undefined) {
    const here = fileURLToPath(import.meta.url);
    const pkg = here.includes('/dist/')
      ? new URL('../../package.json', import.meta.url)
      : new URL('../package.json', import.meta.url);
    cached = (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
  }
  return cached;
}
