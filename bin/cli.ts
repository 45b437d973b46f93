#!/usr/bin/env node
import { runDriver } from '../driver/main.js';
import { fileProviderDefinition } from '../providers/file/main.js';
import type { ProviderDefinition } from '../providers/framework/run-provider.js';
import { runProvider } from '../providers/framework/run-provider.js';
import { runDemo } from './demo.js';
import { publishCommand, unpublishCommand } from './kubelet-commands.js';

/** Providers this build can run with `secrets-store-csi provider <name>`. */
const PROVIDERS: Readonly<Record<string, ProviderDefinition>> = { file: fileProviderDefinition };

const USAGE = `usage: secrets-store-csi <command> [flags]

commands:
  driver              run the CSI node driver (see docs/configuration.md)
  provider <name>     run a provider plugin: ${Object.keys(PROVIDERS).join(', ')}
  publish             call NodePublishVolume like kubelet (debugging)
  unpublish           call NodeUnpublishVolume like kubelet (debugging)
  demo                driver + file provider + publish/unpublish, end to end

Run a command with --help for its flags.
`;

async function main(argv: readonly string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'driver':
      if (rest.includes('--help')) {
        const { DRIVER_FLAGS } = await import('../driver/config.js');
        const { flagsHelp } = await import('../proto/runtime/flags.js');
        process.stdout.write(`secrets-store-csi driver [flags]\n${flagsHelp(DRIVER_FLAGS)}\n`);
        return;
      }
      return runDriver(rest);
    case 'provider': {
      const [name, ...flags] = rest;
      const definition = name === undefined ? undefined : PROVIDERS[name];
      if (!definition) throw Object.assign(new Error(`unknown provider ${JSON.stringify(name ?? '')}; available: ${Object.keys(PROVIDERS).join(', ')}`), { exitCode: 2 });
      await runProvider(definition, flags);
      return;
    }
    case 'publish': return publishCommand(rest);
    case 'unpublish': return unpublishCommand(rest);
    case 'demo': return runDemo(rest);
    case undefined: case '--help': case 'help':
      process.stdout.write(USAGE);
      return;
    default:
      throw Object.assign(new Error(`unknown command ${JSON.stringify(command)}\n\n${USAGE}`), { exitCode: 2 });
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const e = err as Error & { exitCode?: number };
  process.stderr.write(`secrets-store-csi: ${e.message}\n`);
  process.exit(e.exitCode ?? 1);
});
