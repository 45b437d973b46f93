// Pods on the end-to-end node: the source files of the file provider, the containers' logs
// as kubelet wrote them, and a pod created and awaited until Running (kubelet's log in the
// failure message, where the reason usually is).
import type { V1EnvVar, V1Pod } from '@kubernetes/client-node';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { E2eNode } from './e2e-node.js';
import { until } from './until.js';

/** A container script printing `file=<content of the volume's password file>` twice a second (rotation seen from inside). */
export const READ_LOOP = 'while true; do echo "file=$(cat /mnt/secrets-store/password)"; sleep 0.5; done';

/** Writes a file under the file provider's root (the source of the secret). */
export async function writeProviderFile(node: E2eNode, rel: string, contents: string): Promise<void> {
  await mkdir(dirname(join(node.stack.providerRoot, rel)), { recursive: true });
  await writeFile(join(node.stack.providerRoot, rel), contents);
}

/** The container's log lines (CRI log format: `<time> <stream> <tag> <line>`), read from kubelet's pod logs dir. */
export async function containerLog(
  node: E2eNode,
  ns: string,
  pod: string,
  uid: string,
  container: string,
): Promise<string> {
  const dir = join(node.podLogsDir, `${ns}_${pod}_${uid}`, container);
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.log')).sort();
  let out = '';
  for (const f of files)
    out += (await readFile(join(dir, f), 'utf8'))
      .split('\n')
      .map((l) => l.split(' ').slice(3).join(' '))
      .join('\n');
  return out;
}

/** The host path of a pod's CSI volume (kubelet's target path). */
export function volumeTarget(node: E2eNode, uid: string, volume: string): string {
  return join(node.rootDir, 'pods', uid, 'volumes', 'kubernetes.io~csi', volume, 'mount');
}

/** Creates `pod` in `ns` and waits until it runs with every container ready; resolves with its uid. */
export async function runPod(node: E2eNode, ns: string, pod: V1Pod, timeoutMs = 120_000): Promise<string> {
  const { cluster } = node;
  const name = pod.metadata?.name ?? '';
  const created = await cluster.admin.core.createNamespacedPod({ namespace: ns, body: pod });
  await until(
    `pod ${name} to run`,
    async () => {
      const p = await cluster.admin.core.readNamespacedPod({ namespace: ns, name });
      return p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready) ? p : undefined;
    },
    timeoutMs,
  ).catch(async (err: Error) => {
    const p = await cluster.admin.core.readNamespacedPod({ namespace: ns, name }).catch(() => undefined);
    throw new Error(
      `${err.message}; pod status ${JSON.stringify(p?.status)}\nkubelet log:\n${await node.logTail('kubelet')}`,
    );
  });
  return created.metadata?.uid ?? '';
}

/** A hostNetwork pod on the node with one busybox container and the CSI inline volume `secrets` of class `spc`. */
export function csiPod(
  node: E2eNode,
  name: string,
  spc: string,
  script: string,
  image: string,
  extra: { securityContext?: Record<string, unknown>; env?: V1EnvVar[] } = {},
): V1Pod {
  return {
    metadata: { name },
    spec: {
      nodeName: node.nodeName,
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      ...(extra.securityContext ? { securityContext: extra.securityContext } : {}),
      containers: [
        {
          name: 'app',
          image,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', script],
          ...(extra.env ? { env: extra.env } : {}),
          volumeMounts: [{ name: 'secrets', mountPath: '/mnt/secrets-store', readOnly: true }],
        },
      ],
      volumes: [
        {
          name: 'secrets',
          csi: { driver: 'secrets-store.csi.k8s.io', readOnly: true, volumeAttributes: { secretProviderClass: spc } },
        },
      ],
    },
  };
}
