import { expect } from 'chai';
import type { Secret } from '../../../../driver/k8s/client/types.js';
import { MANAGED_LABEL, USED_SECRET_LABEL } from '../../../../driver/k8s/constants.js';
import { usedSecretWatch } from '../../../../driver/kubernetes-mode/node-watches.js';

const secret = (labels: Record<string, string>): Secret => ({
  metadata: { name: 's', namespace: 'ns', labels, managedFields: [{ manager: 'kubectl' }] },
  type: 'Opaque',
  data: { password: 'aHVudGVyMg==' },
});

describe('usedSecretWatch: one watch per namespace for nodePublishSecretRef and synced Secrets', () => {
  it('selects used=true Secrets of the one namespace', () => {
    const spec = usedSecretWatch('ns');
    expect([spec.path, spec.labelSelector]).to.deep.equal([
      '/api/v1/namespaces/ns/secrets',
      `${USED_SECRET_LABEL}=true`,
    ]);
  });

  const cases: { readers: string; nodePublishSecretRefs: boolean; managed: boolean; keepsData: boolean }[] = [
    { readers: 'rotation and sync', nodePublishSecretRefs: true, managed: false, keepsData: true },
    { readers: 'rotation and sync', nodePublishSecretRefs: true, managed: true, keepsData: true },
    { readers: 'sync only', nodePublishSecretRefs: false, managed: false, keepsData: false },
    { readers: 'sync only', nodePublishSecretRefs: false, managed: true, keepsData: true },
  ];
  for (const c of cases) {
    it(`read by ${c.readers}: a ${c.managed ? 'synced' : 'nodePublishSecretRef'} Secret is held ${c.keepsData ? 'with' : 'without'} its data`, () => {
      const labels = { [USED_SECRET_LABEL]: 'true', ...(c.managed ? { [MANAGED_LABEL]: 'true' } : {}) };
      const spec = usedSecretWatch('ns', c.nodePublishSecretRefs);
      const held = (spec.slim ?? ((s: Secret) => s))(secret(labels));
      expect(held.data !== undefined, 'data').to.equal(c.keepsData);
      expect(held.metadata?.labels).to.deep.equal(labels);
    });
  }
});
