import { createLogger } from '../../lib/logging/logger.js';
import { packageVersion } from '../../lib/version.js';
import { providerLogLevel } from './log-level.js';
import { booleanFlag, parseFlags, stringFlag, type FlagSpec, type ParsedFlags } from '../../lib/flags.js';
import { startHealthServer } from '../../lib/http-server.js';
import { onTerminationSignal } from '../../lib/signals.js';
import { warnMissingNodeFlags } from '../../lib/node-flags.js';
import { bindUnixSocket, shutdownServer, socketPathFromEndpoint } from '../../lib/grpc/unix-socket.js';
import { routeGrpcLogs } from '../../lib/grpc/service.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { Registry } from 'prom-client';
import { createProcessRegistry } from '../../lib/process-registry.js';
import { ProviderMetrics } from './provider-metrics.js';
import { createProviderServer } from './provider-server.js';
import type { SecretsProvider } from './provider.js';

/** Flags every provider accepts; a provider adds its own. */
export function commonProviderFlags(name: string): Record<string, FlagSpec> {
  return {
    endpoint: {
      type: 'string',
      default: `unix:///var/run/secrets-store-csi-providers/${name}.sock`,
      help: 'provider socket the driver connects to',
    },
    'health-addr': {
      type: 'string',
      default: '',
      help: 'address for HTTP /healthz and /metrics, e.g. :8989 ("" disables it)',
    },
    'log-level': {
      type: 'string',
      default: 'info',
      help: "error, warn, info or debug (hclog's trace logs as debug, off as error)",
    },
    help: { type: 'boolean', default: false, help: 'print the flags and exit' },
    version: { type: 'boolean', default: false, help: 'print {"name","version"} as JSON and exit' },
  };
}

/** What the framework hands a provider as it is built, beyond its flags and logger. */
export interface ProviderContext {
  /** The registry served on --health-addr /metrics: a provider registers its own metrics here (names prefixed with its own). */
  readonly metricsRegistry: Registry;
}

/** How a provider's main builds its provider from flags. */
export interface ProviderDefinition {
  readonly name: string;
  readonly flags: Readonly<Record<string, FlagSpec>>;
  create(flags: ParsedFlags, logger: Logger, context: ProviderContext): Promise<SecretsProvider>;
  /** The health address from the flags and the flag that set it, when the provider has its own upstream flags for it; default --health-addr. */
  healthAddress?(flags: ParsedFlags): { readonly address: string; readonly flag: string };
}

/** A provider process that is serving. */
export interface RunningProvider {
  readonly socketPath: string;
  readonly healthPort: number | undefined;
  stop(): Promise<void>;
}

/** --help and --version: printed, and true (nothing to run). */
async function answeredHelpOrVersion(
  name: string,
  flags: ParsedFlags,
  specs: Readonly<Record<string, FlagSpec>>,
): Promise<boolean> {
  if (booleanFlag(flags, 'help')) {
    const { flagsHelp } = await import('../../lib/flags.js');
    process.stdout.write(`secrets-store-csi provider ${name} [flags]\n${flagsHelp(specs)}\n`);
    return true;
  }
  if (!booleanFlag(flags, 'version')) return false;
  process.stdout.write(
    `${JSON.stringify({ name: `secrets-store-csi-provider-${name}`, version: packageVersion() })}\n`,
  );
  return true;
}

/**
 * Runs a provider process: parse flags, build the provider, serve v1alpha1 on the
 * socket (stale socket removed), serve /healthz and /metrics, stop gracefully on SIGTERM.
 */
export async function runProvider(
  definition: ProviderDefinition,
  argv: readonly string[],
): Promise<RunningProvider | undefined> {
  const specs = { ...commonProviderFlags(definition.name), ...definition.flags };
  const flags = parseFlags(argv, specs);
  if (await answeredHelpOrVersion(definition.name, flags, specs)) return undefined;
  const logLevel = providerLogLevel(flags);
  const logger = createLogger({ level: logLevel, component: `provider-${definition.name}` });
  for (const name of flags.ignoredGiven)
    logger.warn('ignoring a flag kept for compatibility', { flag: `--${name}`, help: specs[name]?.help ?? '' });
  // The process's one registry: the framework's metrics, the provider's own and the defaults.
  const registry = createProcessRegistry();
  const metrics = new ProviderMetrics(definition.name, registry);
  const provider = await definition.create(flags, logger, { metricsRegistry: registry });
  routeGrpcLogs(logger);
  const server = createProviderServer(provider, logger, metrics);
  const socketPath = socketPathFromEndpoint(stringFlag(flags, 'endpoint'));
  let serving = false;
  const healthAddr = definition.healthAddress?.(flags) ?? {
    address: stringFlag(flags, 'health-addr'),
    flag: '--health-addr',
  };
  // The health endpoint first: a provider that cannot serve it fails before it owns the socket.
  const health =
    healthAddr.address === ''
      ? undefined
      : await startHealthServer(healthAddr.address, registry, () => serving, healthAddr.flag);
  await bindUnixSocket(server, socketPath).catch(async (err: unknown) => {
    await health?.close();
    throw err;
  });
  serving = true;
  const running: RunningProvider = {
    socketPath,
    healthPort: health?.port,
    async stop() {
      serving = false;
      await shutdownServer(server, 5000);
      await health?.close();
      logger.info('provider stopped');
    },
  };
  // Before the "started" line: a supervisor may send SIGTERM the moment it reads it, and
  // a signal that arrives before the handler exists kills the process outright.
  onTerminationSignal(async (signal) => {
    logger.info('shutting down', { signal });
    await running.stop();
  });
  logger.info('provider started', {
    provider: definition.name,
    endpoint: socketPath,
    healthPort: health?.port,
    logLevel,
  });
  warnMissingNodeFlags(logger);
  return running;
}
