#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=20
import type { ProviderDefinition } from '../providers/framework/run-provider.js';
import { exitAfterOutput } from '../lib/exit.js';

// Each command loads only its own modules (dynamic imports): a provider process never
// loads the driver, and the driver's idle memory stays small.

/** Providers this build can run with `secrets-store-csi provider <name>`. */
const PROVIDERS: Readonly<Record<string, () => Promise<ProviderDefinition>>> = {
  file: async () => (await import('../providers/file/main.js')).fileProviderDefinition,
  vault: async () => (await import('../providers/vault/main.js')).vaultProviderDefinition,
  azure: async () => (await import('../providers/azure/main.js')).azureProviderDefinition,
  exec: async () => (await import('../providers/exec/main.js')).execProviderDefinition,
  pki: async () => (await import('../providers/pki/main.js')).pkiProviderDefinition,
};

const USAGE = `usage: secrets-store-csi <command> [flags]

commands:
  driver              run the CSI node driver (see docs/configuration.md)
  provider <name>     run a provider plugin: ${Object.keys(PROVIDERS).join(', ')}
  sync-controller     run the SecretSync controller (see docs/secret-sync-controller.md)
  publish             call NodePublishVolume like kubelet (debugging)
  unpublish           call NodeUnpublishVolume like kubelet (debugging)
  demo                driver + file provider + publish/unpublish, end to end
  demo-sync           the SecretSync controller against a local kube-apiserver, end to end

Run a command with --help (or -h) for its flags.
`;

const PROVIDER_USAGE = `usage: secrets-store-csi provider <name> [flags]

providers: ${Object.keys(PROVIDERS).join(', ')}
Run \`secrets-store-csi provider <name> --help\` for a provider's flags.
`;

/**
 * Whether the arguments ask for help: --help, -help, -h or --h, as Go's flag package
 * accepts them (before a \`--\`). Each command then gets the one spelling it knows: --help.
 */
function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => /^--?h(elp)?$/.test(a));
}

/** `secrets-store-csi driver …`: help, upstream's version line, or the driver. */
async function driverCommand(rest: readonly string[]): Promise<void> {
  const { DRIVER_FLAGS, versionRequested } = await import('../driver/config.js');
  if (rest.includes('--help')) {
    const { flagsHelp } = await import('../lib/flags.js');
    process.stdout.write(`secrets-store-csi driver [flags]\n${flagsHelp(DRIVER_FLAGS)}\n`);
    return;
  }
  // -version / --version[=true] as upstream's binary: its JSON line, exit 0.
  if (versionRequested(rest)) {
    const [{ upstreamVersionLine }, { packageVersion }] = await Promise.all([
      import('../driver/upstream-flags.js'),
      import('../lib/version.js'),
    ]);
    process.stdout.write(upstreamVersionLine(packageVersion()));
    return;
  }
  return (await import('../driver/main.js')).runDriver(rest);
}

/** `secrets-store-csi sync-controller …`: help, or the SecretSync controller. */
async function syncControllerCommand(rest: readonly string[]): Promise<void> {
  if (rest.includes('--help')) {
    const [{ SYNC_CONTROLLER_FLAGS }, { flagsHelp }] = await Promise.all([
      import('../sync-controller/config.js'),
      import('../lib/flags.js'),
    ]);
    process.stdout.write(`secrets-store-csi sync-controller [flags]\n${flagsHelp(SYNC_CONTROLLER_FLAGS)}\n`);
    return;
  }
  return (await import('../sync-controller/run.js')).runSyncController(rest);
}

/** `secrets-store-csi provider <name> …`: help, or the named provider. */
async function providerCommand(given: readonly string[]): Promise<void> {
  if (wantsHelp(given.slice(0, 1))) {
    process.stdout.write(PROVIDER_USAGE);
    return;
  }
  const [name, ...provided] = given;
  const flags = wantsHelp(provided) ? ['--help'] : provided;
  const load = name === undefined ? undefined : PROVIDERS[name];
  if (!load) {
    const what = name === undefined ? 'missing provider name' : `unknown provider ${JSON.stringify(name)}`;
    throw Object.assign(new Error(`${what}\n\n${PROVIDER_USAGE}`), { exitCode: 2 });
  }
  const { runProvider } = await import('../providers/framework/run-provider.js');
  await runProvider(await load(), flags);
}

async function main(argv: readonly string[]): Promise<void> {
  const [command, ...given] = argv;
  const rest = wantsHelp(given) ? ['--help'] : given;
  switch (command) {
    case 'driver':
      return driverCommand(rest);
    case 'provider':
      return providerCommand(given);
    case 'sync-controller':
      return syncControllerCommand(rest);
    case 'publish':
      return (await import('./kubelet-commands.js')).publishCommand(rest);
    case 'unpublish':
      return (await import('./kubelet-commands.js')).unpublishCommand(rest);
    case 'demo':
      return (await import('./demo.js')).runDemo(rest);
    case 'demo-sync':
      return (await import('./demo-sync.js')).runDemoSync(rest);
    case '--version':
    case 'version': {
      const { packageVersion } = await import('../lib/version.js');
      process.stdout.write(`secrets-store-csi ${packageVersion()}\n`);
      return;
    }
    case undefined:
    case '--help':
    case '-help':
    case '-h':
    case '--h':
    case 'help':
      process.stdout.write(USAGE);
      return;
    default:
      throw Object.assign(new Error(`unknown command ${JSON.stringify(command)}\n\n${USAGE}`), { exitCode: 2 });
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const e = err as Error & { exitCode?: number };
  process.stderr.write(`secrets-store-csi: ${e.message}\n`);
  void exitAfterOutput(e.exitCode ?? 1);
});
