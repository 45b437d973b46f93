import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../proto/runtime/logger.js';
import type { DriverConfig } from '../config.js';
import type { DriverMetrics } from '../metrics/driver-metrics.js';
import { realSleep } from '../provider-client/retry.js';
import type { PublishFailureHook, PublishHook } from '../volume/publisher.js';
import type { VolumeSource } from '../rotation/reconciler.js';
import type { RequestRebuilder } from '../rotation/refresher.js';
import type { Mounter } from '../volume/mounter.js';
import { ApiVolumes } from './api-volumes.js';
import { USED_SECRET_LABEL } from './constants.js';
import { ApiEventRecorder, type EventRecorder } from './event-recorder.js';
import { ServiceAccountTokens } from './service-account-tokens.js';
import { WatchedCache } from './watched-cache.js';
import { WorkloadRestarter } from './workload-restart.js';
import { createKubeClients } from './kube-clients.js';
import { PodStatusWriter } from './pod-status.js';
import { kubernetesFailureHook, kubernetesPublishHook } from './publish-hooks.js';
import { SecretSyncer } from './secret-sync.js';
import { ApiSecretProviderClassSource } from './spc-api-source.js';

/** What Kubernetes mode adds to the driver: the class source and the publish hooks. */
export interface KubernetesMode {
  readonly classes: ApiSecretProviderClassSource;
  /** This node's pods, watched when rotation is on. */
  readonly pods: WatchedCache<V1Pod> | undefined;
  readonly usedSecrets: WatchedCache<V1Secret> | undefined;
  readonly hook: PublishHook;
  readonly failureHook: PublishFailureHook;
  readonly events: EventRecorder;
  /** Rotation's view of this node's volumes: pod status objects, pods, tokens. */
  readonly volumes: VolumeSource & RequestRebuilder;
}

/** Kubernetes mode: API clients, the SecretProviderClass cache and the publish hook. */
export function startKubernetesMode(config: DriverConfig, metrics: DriverMetrics, logger: Logger, mounter: Mounter): KubernetesMode {
  const clients = createKubeClients(config.kubeconfig, process.env);
  const k8sLogger = logger.child({ component: 'kubernetes' });
  const classes = new ApiSecretProviderClassSource(clients, k8sLogger, realSleep);
  classes.start();
  const now = () => new Date();
  const events = new ApiEventRecorder(clients, config.nodeId, k8sLogger, now);
  const errored = new Set<string>();
  const hook = kubernetesPublishHook({
    clients, nodeId: config.nodeId, events, metrics, now, logger: k8sLogger, errored,
    podStatus: new PodStatusWriter(clients, k8sLogger),
    secrets: config.enableSecretSync ? new SecretSyncer(clients, events, k8sLogger, realSleep) : undefined,
    restarter: config.enableSecretRotation ? new WorkloadRestarter(clients, events, k8sLogger, now, config.rotationPollIntervalMs) : undefined,
  });
  // Rotation reads this node's pods from a watch (annotations, volumes) instead of a GET per refresh.
  const pods = config.enableSecretRotation ? new WatchedCache<V1Pod>(clients, {
    what: 'Pod', path: '/api/v1/pods', fieldSelector: `spec.nodeName=${config.nodeId}`,
    list: () => clients.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${config.nodeId}` }),
  }, k8sLogger, realSleep) : undefined;
  pods?.start();
  // nodePublishSecretRef Secrets, as upstream reads them: only those labelled used=true.
  const usedSecrets = config.enableSecretRotation ? new WatchedCache<V1Secret>(clients, {
    what: 'nodePublishSecretRef Secret', path: '/api/v1/secrets', labelSelector: `${USED_SECRET_LABEL}=true`,
    list: () => clients.core.listSecretForAllNamespaces({ labelSelector: `${USED_SECRET_LABEL}=true` }),
  }, k8sLogger, realSleep) : undefined;
  usedSecrets?.start();
  const volumes = new ApiVolumes(clients, classes, new ServiceAccountTokens(clients, config.driverName, Date.now), mounter,
    { nodeId: config.nodeId, driverName: config.driverName, defaultIntervalMs: config.rotationPollIntervalMs }, k8sLogger.child({ component: 'rotation' }), pods, usedSecrets);
  return { classes, pods, usedSecrets, hook, events, volumes, failureHook: kubernetesFailureHook({ clients, events, logger: k8sLogger, errored }) };
}

