// kube-controller-manager for integration tests: the real garbage collector (owner
// references) and the clusterrole-aggregation controller (aggregated admin/edit/view
// roles), built by test/peers/install.sh at the kube-apiserver's version. The test
// cluster runs no controllers otherwise (see kube-cluster.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { controllerManagerArgs, type LocalController } from '../../bin/local-control-plane.js';
import type { KubeCluster } from './kube-cluster.js';
import { requirePeer } from './peers.js';
import { statusOf, until } from './until.js';

/** A running kube-controller-manager. */
export interface ControllerManager {
  /** Its log file (stderr and stdout), for failure messages. */
  readonly logFile: string;
  /** The last lines of its log. */
  logTail(lines?: number): Promise<string>;
  /** Stops it (SIGTERM, then SIGKILL after 10 s) and waits for the exit. */
  stop(): Promise<void>;
}

/** The controllers the tests use (bin/local-control-plane.ts says which run without nodes). */
export type TestController = LocalController;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/**
 * Starts kube-controller-manager against `cluster` as system:masters with only
 * `controllers`, no leader election and no serving port. Resolves once the process
 * runs; use untilGarbageCollectorWorks (or wait for the effect under test) before
 * relying on a controller.
 */
export async function startControllerManager(
  cluster: KubeCluster,
  controllers: readonly TestController[],
): Promise<ControllerManager> {
  const binary = requirePeer('KUBE_CONTROLLER_MANAGER');
  const logFile = join(cluster.dir, `kube-controller-manager-${randomBytes(3).toString('hex')}.log`);
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, controllerManagerArgs(cluster, controllers), { stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const killOnExit = () => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
  const logTail = async (lines = 30) =>
    (await readFile(logFile, 'utf8').catch(() => '')).split('\n').slice(-lines).join('\n');
  return {
    logFile,
    logTail,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
    },
  };
}

/**
 * Waits until the garbage collector acts: creates an owner ConfigMap and a dependent
 * in `namespace`, deletes the owner and waits for the dependent to go. The collector
 * needs a moment after start to build its graph from discovery; this awaits that
 * (polling the API, bounded by `timeoutMs`) instead of sleeping.
 */
export async function untilGarbageCollectorWorks(
  cluster: KubeCluster,
  namespace: string,
  manager: ControllerManager,
  timeoutMs = 60_000,
): Promise<void> {
  const core = cluster.admin.core;
  const suffix = randomBytes(3).toString('hex');
  const owner = await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: `gc-probe-owner-${suffix}` } },
  });
  await core.createNamespacedConfigMap({
    namespace,
    body: {
      metadata: {
        name: `gc-probe-dependent-${suffix}`,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '' },
        ],
      },
    },
  });
  await core.deleteNamespacedConfigMap({ namespace, name: `gc-probe-owner-${suffix}` });
  const collected = async () =>
    core.readNamespacedConfigMap({ namespace, name: `gc-probe-dependent-${suffix}` }).then(
      () => false,
      (err: unknown) => {
        if (statusOf(err) === 404) return true;
        throw err;
      },
    );
  try {
    await until('the garbage collector to collect a probe dependent', collected, timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}; kube-controller-manager log:\n${await manager.logTail()}`, {
      cause: err,
    });
  }
}
