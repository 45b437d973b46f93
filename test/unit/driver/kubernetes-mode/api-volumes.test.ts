import { expect } from 'chai';
import { ApiVolumes } from '../../../../driver/kubernetes-mode/api-volumes.js';
import type { Pod } from '../../../../driver/k8s/client/types.js';
import { createLogger } from '../../../../lib/logging/logger.js';

// ApiVolumes.list() against in-memory caches (its ports); against the real kube-apiserver
// it is covered by test/integration/kubernetes-rotation.test.ts.

const DRIVER = 'secrets-store.csi.k8s.io';
const targetOf = (uid: string, volume: string) =>
  `/var/lib/kubelet/pods/${uid}/volumes/kubernetes.io~csi/${volume}/mount`;

function podWith(namespace: string, name: string, uid: string, secretRef: string | undefined): Pod {
  return {
    metadata: { namespace, name, uid },
    spec: {
      volumes: [
        {
          name: 'secrets',
          csi: {
            driver: DRIVER,
            volumeAttributes: { secretProviderClass: 'app' },
            ...(secretRef ? { nodePublishSecretRef: { name: secretRef } } : {}),
          },
        },
      ],
    },
  };
}

describe('ApiVolumes.list: each round keeps the Secret watch of the namespaces whose volumes read a nodePublishSecretRef', () => {
  it('ensures the namespace of a volume with a nodePublishSecretRef, due or not; not one without', async () => {
    const pods = [podWith('with-ref', 'a', 'uid-a', 'creds'), podWith('without-ref', 'b', 'uid-b', undefined)];
    const statuses = pods.map((p) => ({
      metadata: { namespace: p.metadata?.namespace, ownerReferences: [{ kind: 'Pod', uid: p.metadata?.uid }] },
      status: {
        podName: p.metadata?.name,
        secretProviderClassName: 'app',
        targetPath: targetOf(p.metadata?.uid ?? '', 'secrets'),
      },
    }));
    const ensured: string[] = [];
    const volumes = new ApiVolumes(
      {} as never,
      { get: async () => ({ name: 'app', provider: 'file', annotations: {} }) } as never,
      { retain: () => undefined } as never,
      { isMounted: async () => true } as never,
      { nodeId: 'node-1', driverName: DRIVER, defaultIntervalMs: 120_000 },
      createLogger({ component: 'test', silent: true }),
      {
        get: (name: string, ns: string) => pods.find((p) => p.metadata?.name === name && p.metadata.namespace === ns),
      } as never,
      { ensure: (ns: string) => ensured.push(ns) } as never,
      { everSynced: true, values: () => statuses } as never,
    );
    const listed = await volumes.list();
    expect(listed.map((v) => v.pod.namespace)).to.deep.equal(['with-ref', 'without-ref']);
    expect(ensured).to.deep.equal(['with-ref']);
    await volumes.list();
    expect(ensured, 'again next round').to.deep.equal(['with-ref', 'with-ref']);
  });
});
