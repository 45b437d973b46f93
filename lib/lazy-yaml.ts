import { createRequire } from 'node:module';

/** The `yaml` package's API. */
export type YamlModule = typeof import('yaml');

let loaded: YamlModule | undefined;

/**
 * The `yaml` package, loaded on first use (it adds ~70 modules and a few MiB of
 * RSS). The driver needs it only to read a --kubeconfig file or --spc-dir classes: in a
 * pod (in-cluster credentials, classes from the API) it never loads. Its `node` export is
 * CommonJS, so this is the same module instance a static `import 'yaml'` gets.
 */
export function yamlModule(): YamlModule {
  loaded ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return loaded;
}
