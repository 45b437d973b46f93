import { expect } from 'chai';
import type { ApiRight } from '../../../../driver/k8s/api-rights.js';
import type { CsiDriver } from '../../../../driver/k8s/client/types.js';
import {
  chooseRotationMode,
  reconcilerRights,
  type RotationModeFacts,
} from '../../../../driver/rotation/mode-choice.js';

const TOKEN: ApiRight = { verb: 'create', group: '', resource: 'serviceaccounts/token' };
const LIST_SECRETS: ApiRight = { verb: 'list', group: '', resource: 'secrets' };
const REPUBLISH_TOKENS: CsiDriver = { spec: { requiresRepublish: true, tokenRequests: [{ audience: 'vault' }] } };
const TOKENS_ONLY: CsiDriver = { spec: { requiresRepublish: false, tokenRequests: [{ audience: 'vault' }] } };
const PLAIN: CsiDriver = { spec: { requiresRepublish: false } };

function facts(over: Partial<RotationModeFacts>): RotationModeFacts {
  return { requested: 'auto', driverName: 'secrets-store.csi.k8s.io', csiDriver: PLAIN, missing: [], ...over };
}

describe('rotation mode choice (--rotation-mode)', () => {
  const cases: [string, Partial<RotationModeFacts>, 'reconciler' | 'republish', 'warn' | 'error' | undefined][] = [
    ['auto, every right granted', { csiDriver: REPUBLISH_TOKENS }, 'reconciler', undefined],
    ['auto, no token right, requiresRepublish', { csiDriver: REPUBLISH_TOKENS, missing: [TOKEN] }, 'republish', 'warn'],
    [
      'auto, no token right, tokenRequests without republish',
      { csiDriver: TOKENS_ONLY, missing: [TOKEN] },
      'republish',
      'warn',
    ],
    [
      'auto, no Secret reads, requiresRepublish',
      { csiDriver: REPUBLISH_TOKENS, missing: [LIST_SECRETS] },
      'republish',
      'warn',
    ],
    ['auto, no Secret reads, no republish', { missing: [LIST_SECRETS] }, 'reconciler', 'warn'],
    ['auto, rights unknown', { missing: 'unknown' }, 'reconciler', 'warn'],
    [
      'reconciler asked, no token right',
      { requested: 'reconciler', csiDriver: REPUBLISH_TOKENS, missing: [TOKEN] },
      'reconciler',
      'error',
    ],
    ['reconciler asked, every right granted', { requested: 'reconciler' }, 'reconciler', undefined],
    ['republish asked', { requested: 'republish', missing: [TOKEN] }, 'republish', undefined],
  ];
  for (const [name, over, mode, level] of cases)
    it(`${name}: ${mode}${level ? `, one ${level} line` : ''}`, () => {
      const choice = chooseRotationMode(facts(over));
      expect(choice.mode).to.equal(mode);
      expect(choice.log?.level).to.equal(level);
    });

  it('names the missing right, the role and file that grant it, and the mode taken', () => {
    const choice = chooseRotationMode(facts({ csiDriver: REPUBLISH_TOKENS, missing: [TOKEN] }));
    expect(choice.log?.message).to.equal(
      "rotation: the driver's RBAC lacks: create serviceaccounts/token (ClusterRole secretproviderrotation-role in deploy/rbac-rotation.yaml); rotating on kubelet's republish instead of the rotation reconciler (--rotation-mode=auto chose republish): CSIDriver secrets-store.csi.k8s.io has requiresRepublish: true",
    );
  });

  it('checks the token right only when the CSIDriver asks for tokens (or could not be read)', () => {
    const has = (d: RotationModeFacts['csiDriver']) =>
      reconcilerRights(d, 'secrets-store.csi.k8s.io').some((r) => r.resource === 'serviceaccounts/token');
    expect([has(PLAIN), has(undefined), has(TOKENS_ONLY), has('unreadable')]).to.deep.equal([false, false, true, true]);
    expect(reconcilerRights(PLAIN, 'd').some((r) => r.resource === 'selfsubjectaccessreviews')).to.equal(false);
    expect(reconcilerRights(PLAIN, 'other.csi.example.com').find((r) => r.resource === 'csidrivers')?.name).to.equal(
      'other.csi.example.com',
    );
  });
});
