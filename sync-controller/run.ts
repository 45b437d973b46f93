import { createLogger } from '../lib/logging/logger.js';
import { exitAfterOutput } from '../lib/exit.js';
import { onTerminationSignal } from '../lib/signals.js';
import { parseSyncControllerConfig } from './config.js';
import { startSyncController } from './main.js';

/** `secrets-store-csi sync-controller …`: parses the flags, starts, stops on SIGTERM/SIGINT. */
export async function runSyncController(argv: readonly string[]): Promise<void> {
  const config = parseSyncControllerConfig(argv, process.env);
  const logger = createLogger({ level: config.logLevel, component: 'sync-controller' });
  // The handler before "started" is logged: a supervisor may signal the moment it reads it.
  const running = startSyncController(config, logger, () => {
    // Another replica may lead already: stop syncing now, as controller-runtime does.
    logger.error('leader election lost: exiting');
    void exitAfterOutput(1);
  });
  onTerminationSignal(async (signal) => {
    logger.info('shutting down', { signal });
    await (await running).stop();
  });
  await running;
}
