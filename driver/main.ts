import type { Server } from '@grpc/grpc-js';
import { csiProto } from '../lib/grpc/grpc-proto.js';
import { createGrpcServer, routeGrpcLogs } from '../lib/grpc/service.js';
import { createLogger, type Logger } from '../lib/logging/logger.js';
import { bindUnixSocket, shutdownServer } from '../lib/grpc/unix-socket.js';
import { InFlightCalls } from '../lib/grpc/in-flight.js';
import { startHealthServer } from '../lib/http-server.js';
import { onTerminationSignal } from '../lib/signals.js';
import { packageVersion } from '../lib/version.js';
import { warnMissingNodeFlags } from '../lib/node-flags.js';
import { createProcessRegistry } from '../lib/process-registry.js';
import { parseDriverConfig, type DriverConfig } from './config.js';
import { controllerHandlers, identityHandlers } from './csi/identity-service.js';
import { nodeHandlers, type NodeServiceDeps } from './csi/node-service.js';
import { DriverMetrics } from './metrics/driver-metrics.js';
import { ProviderClient } from './provider-client/client.js';
import { realSleep } from '../lib/sleep.js';
import { LocalSecretProviderClassSource } from './spc/local-source.js';
import { DirMounter, TmpfsMounter, volumeMountSource, type Mounter } from './mount/mounter.js';
import { TargetLifecycle } from './mount/target-lifecycle.js';
import { loadMountSyscalls } from './mount/mount-syscalls.js';
import { assertMountRights } from './mount/mount-rights.js';
import { VolumePublisher, type PublisherDeps } from './publish/publisher.js';
import { repairMountedVolumes } from './mount/startup-repair.js';
import { TargetLocks } from './mount/target-locks.js';
import { REFRESH_REQUESTED_ANNOTATION } from './k8s/constants.js';
import type { KubernetesMode } from './kubernetes-mode/kubernetes-mode.js';
import type { Rotation } from './rotation/rotation-mode.js';

/** A running driver. */
export interface RunningDriver {
  readonly config: DriverConfig;
  readonly metricsPort: number | undefined;
  stop(): Promise<void>;
}

/** Logs the configuration (debug) and warns about flags that do nothing or weaken the driver. */
function logConfiguration(config: DriverConfig, logger: Logger): void {
  logger.debug('driver configuration', { ...config });
  for (const flag of config.ignoredFlags) logger.warn('ignoring upstream flag', { flag });
  if (config.rotationMode === 'republish' && !config.enableSecretRotation)
    logger.warn(
      '--rotation-mode=republish has no effect without --enable-secret-rotation: kubelet republishes fetch again as ordinary publishes',
    );
  if (config.mountMode === 'dir')
    logger.warn('--mount-mode=dir: secrets are written to a plain directory on disk, not a tmpfs');
}

/** A refresh-requested-at annotation on a class (or a pod of this node) wakes the reconciler at once. */
function wakeOnRefreshRequests(rotation: Pick<Rotation, 'wake'>, kube: Pick<KubernetesMode, 'classes' | 'pods'>): void {
  const wakeOnRequest = (obj: { metadata?: { annotations?: Record<string, string> } }) => {
    if (obj.metadata?.annotations?.[REFRESH_REQUESTED_ANNOTATION]) rotation.wake();
  };
  kube.classes.onChange(wakeOnRequest);
  kube.pods?.onChange(wakeOnRequest);
}

/** The parts a publish goes through: target locks and lifecycle, the mounter, the provider client. */
function volumeParts(config: DriverConfig, logger: Logger) {
  const mountFallback = (reason: string, addon: string) =>
    logger.warn('mounting tmpfs with the mount program: the mount addon is not available', { addon, reason });
  const mounter =
    config.mountMode === 'tmpfs'
      ? new TmpfsMounter(loadMountSyscalls(mountFallback), undefined, undefined, volumeMountSource(config.socketPath))
      : new DirMounter();
  const providers = new ProviderClient({
    providerDirs: config.providerDirs,
    maxCallRecvMsgSize: config.maxCallRecvMsgSize,
    maxObjectsPerVolume: config.maxObjectsPerVolume,
    timeoutMs: config.providerTimeoutMs,
    logger,
    sleep: realSleep,
  });
  return { locks: new TargetLocks(), targets: new TargetLifecycle(), mounter, providers };
}

/** Kubernetes mode and rotation, each loaded only when configured: local mode never pays for the API client. */
async function optionalParts(
  config: DriverConfig,
  metrics: DriverMetrics,
  logger: Logger,
  { mounter, targets }: { mounter: Mounter; targets: TargetLifecycle },
) {
  const kube =
    config.spcDir === ''
      ? await (
          await import('./kubernetes-mode/kubernetes-mode.js')
        ).startKubernetesMode(config, metrics, logger, mounter, packageVersion(), targets)
      : undefined;
  // Kubernetes mode decided the rotation mode (auto: by the driver's rights); local mode's auto is the reconciler.
  const rotation = config.enableSecretRotation
    ? (await import('./rotation/rotation-mode.js')).createRotation(
        kube ? Object.freeze({ ...config, rotationMode: kube.rotationMode }) : config,
        mounter,
        metrics,
        logger,
        targets,
        kube?.volumes,
        kube?.readCsiDriver,
      )
    : undefined;
  return { kube, rotation };
}

/**
 * The publisher, with Kubernetes mode's hooks (pod status, Secret sync) and rotation's,
 * each present only when configured; `parts.targets` tells it of unpublished targets.
 */
export function wirePublisher(
  parts: Omit<PublisherDeps, 'now' | 'hooks' | 'failureHooks' | 'republish'>,
  kube: Pick<KubernetesMode, 'hook' | 'failureHook'> | undefined,
  rotation: Pick<Rotation, 'hooks' | 'failureHooks' | 'republish'> | undefined,
): VolumePublisher {
  return new VolumePublisher({
    ...parts,
    now: () => new Date(),
    hooks: [...(kube ? [kube.hook] : []), ...(rotation?.hooks ?? [])],
    failureHooks: [...(kube ? [kube.failureHook] : []), ...(rotation?.failureHooks ?? [])],
    ...(rotation ? { republish: rotation.republish } : {}),
  });
}

/** A gRPC server with the CSI Identity, Controller (capabilities only) and Node services. */
function csiServer(config: DriverConfig, logger: Logger, ready: () => boolean, node: NodeServiceDeps): Server {
  routeGrpcLogs(logger);
  const server = createGrpcServer();
  const csi = csiProto();
  const vendorVersion = packageVersion();
  server.addService(
    csi.Identity.service,
    identityHandlers({ driverName: config.driverName, vendorVersion, ready }, logger),
  );
  server.addService(csi.Controller.service, controllerHandlers(logger));
  server.addService(csi.Node.service, nodeHandlers(node));
  return server;
}

/** Wires the driver's parts from its config and starts serving CSI on the socket. */
export async function startDriver(config: DriverConfig, logger: Logger): Promise<RunningDriver> {
  logConfiguration(config, logger);
  // The process's one registry: the driver's metrics and the default process and Node.js ones.
  const registry = createProcessRegistry();
  const metrics = new DriverMetrics(registry);
  const { locks, targets, mounter, providers } = volumeParts(config, logger);
  const { kube, rotation } = await optionalParts(config, metrics, logger, { mounter, targets });
  const classes =
    kube?.classes ?? (await LocalSecretProviderClassSource.open(config.spcDir, logger.child({ component: 'spc' })));
  const publisher = wirePublisher({ locks, mounter, providers, logger, classes, targets }, kube, rotation);
  // Before kubelet's first call: mend volumes a crash left mid-write (tmpfs mode only;
  // a --mount-mode=dir target is repaired by its next write).
  if (config.mountMode === 'tmpfs')
    await repairMountedVolumes(volumeMountSource(config.socketPath), logger.child({ component: 'volume' }));

  let serving = false;
  const ready = () => serving && (kube?.classes.ready ?? true);
  const calls = new InFlightCalls('driver');
  const kubeletCaller = config.spcDir === '';
  const node = { nodeId: config.nodeId, publisher, mounter, locks, targets, metrics, logger, calls, kubeletCaller };
  const server = csiServer(config, logger, ready, node);
  // The health endpoint first: a driver that cannot serve it fails before it owns the socket.
  const health =
    config.metricsAddr === ''
      ? undefined
      : await startHealthServer(config.metricsAddr, registry, ready, '--metrics-addr');
  await bindUnixSocket(server, config.socketPath).catch(async (err: unknown) => {
    await health?.close();
    throw err;
  });
  serving = true;

  rotation?.start(publisher, kube?.events);
  if (rotation && kube) wakeOnRefreshRequests(rotation, kube);
  logger.info('driver started', {
    endpoint: config.socketPath,
    nodeId: config.nodeId,
    driverName: config.driverName,
    metricsPort: health?.port,
    mode: kube ? 'kubernetes' : 'local',
    mountMode: config.mountMode,
    mounts: mounter instanceof TmpfsMounter ? mounter.implementation : 'none',
    providerDirs: config.providerDirs,
  });
  warnMissingNodeFlags(logger);

  return {
    config,
    metricsPort: health?.port,
    async stop() {
      serving = false;
      await rotation?.stop();
      // Publishes in flight are cancelled and rolled back before the process exits: a
      // first mount no kubelet knows about must not outlive it.
      await shutdownServer(server, 5000, calls);
      await kube?.stop();
      providers.close();
      await health?.close();
      logger.info('driver stopped');
    },
  };
}

/** Entry point of `secrets-store-csi driver`: parse flags, start, stop on SIGTERM. */
export async function runDriver(argv: readonly string[]): Promise<void> {
  const config = parseDriverConfig(argv, process.env);
  // Before anything connects or binds: a driver that may not mount must not look ready.
  assertMountRights(config);
  const logger = createLogger({ level: config.logLevel, component: 'driver' });
  // Installed before startDriver logs "driver started": a supervisor may send SIGTERM the
  // moment it reads that line, and a signal that arrives before any handler exists kills
  // the process outright (mounts of in-flight publishes left behind).
  const driver = startDriver(config, logger);
  onTerminationSignal(async (signal) => {
    logger.info('shutting down', { signal });
    await (await driver).stop();
  });
  await driver;
}
