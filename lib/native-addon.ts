// Loads one of the optional N-API addons scripts/build-native.mjs builds (binding.gyp):
// build/Release/<name>.node, from src or dist. Optional: the caller gets why it is not
// there instead of an exception, and falls back.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Where scripts/build-native.mjs leaves addon `name`, whether this file runs from lib/ or dist/lib/. */
export function nativeAddonPath(name: string): string {
  const here = fileURLToPath(import.meta.url);
  const root = here.includes('/dist/')
    ? new URL('../../build/', import.meta.url)
    : new URL('../build/', import.meta.url);
  return fileURLToPath(new URL(`Release/${name}.node`, root));
}

/** The addon, or why it cannot be used (not built, or built for another Node.js or architecture). */
export type NativeAddon<T> =
  | { readonly addon: T; readonly path: string }
  | { readonly addon: undefined; readonly path: string; readonly why: string };

/** Loads addon `name` when it was built and loads. */
export function loadNativeAddon<T>(name: string): NativeAddon<T> {
  const path = nativeAddonPath(name);
  if (!existsSync(path))
    return {
      addon: undefined,
      path,
      why: 'not built (npm run build builds it when make and a C compiler are installed)',
    };
  try {
    return { addon: createRequire(import.meta.url)(path) as T, path };
  } catch (err) {
    return { addon: undefined, path, why: `cannot be loaded: ${(err as Error).message.split('\n')[0]}` };
  }
}
