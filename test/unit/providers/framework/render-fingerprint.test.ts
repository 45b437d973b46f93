import { expect } from 'chai';
import type { ProviderMountRequest } from '../../../../providers/framework/provider.js';
import {
  REMEMBERED_TARGETS,
  renderFingerprint,
  TargetRenderings,
} from '../../../../providers/framework/render-fingerprint.js';
import { TOKENS_ATTRIBUTE } from '../../../../providers/framework/sa-token.js';

const BASE = { objects: '- objectName: a', 'csi.storage.k8s.io/pod.name': 'p' };

function request(
  targetPath: string,
  attributes: Record<string, string> = BASE,
  permission = 0o644,
): ProviderMountRequest {
  return { attributes, secrets: {}, targetPath, permission, currentObjectVersions: new Map() };
}

describe('renderFingerprint', () => {
  const same: [name: string, attributes: Record<string, string>][] = [
    ['the attributes in another order', { 'csi.storage.k8s.io/pod.name': 'p', objects: '- objectName: a' }],
    ['other service-account tokens (new on every Mount)', { ...BASE, [TOKENS_ATTRIBUTE]: '{"vault":{"token":"t2"}}' }],
  ];
  for (const [name, attributes] of same) {
    it(`is the same for ${name}`, () =>
      expect(renderFingerprint(attributes, 0o644)).to.equal(renderFingerprint(BASE, 0o644)));
  }
  const other: [name: string, attributes: Record<string, string>, permission: number][] = [
    ['an edited parameter', { ...BASE, objects: '- objectName: b' }, 0o644],
    ['an added parameter', { ...BASE, extra: '' }, 0o644],
    ['another default mode', BASE, 0o600],
    [
      'a key and value moved across the boundary',
      { objects: '- objectName: a', 'csi.storage.k8s.io/pod.nam': 'ep' },
      0o644,
    ],
  ];
  for (const [name, attributes, permission] of other) {
    it(`differs for ${name}`, () =>
      expect(renderFingerprint(attributes, permission)).to.not.equal(renderFingerprint(BASE, 0o644)));
  }
});

describe('TargetRenderings', () => {
  it('a target never answered is not the same rendering', () => {
    expect(new TargetRenderings().check(request('/t')).sameRendering).to.equal(false);
  });

  it('is the same rendering once answered with it, per target, until the class changes', () => {
    const renderings = new TargetRenderings();
    const { fingerprint } = renderings.check(request('/t'));
    renderings.answered('/t', fingerprint);
    expect(renderings.check(request('/t'))).to.deep.equal({ fingerprint, sameRendering: true });
    expect(renderings.check(request('/other')).sameRendering).to.equal(false);
    expect(renderings.check(request('/t', { ...BASE, objects: '- objectName: b' })).sameRendering).to.equal(false);
    expect(renderings.check(request('/t', BASE, 0o600)).sameRendering).to.equal(false);
  });

  it(`forgets the least recently used target beyond ${REMEMBERED_TARGETS}`, () => {
    const renderings = new TargetRenderings();
    const { fingerprint } = renderings.check(request('/t0'));
    for (let i = 0; i <= REMEMBERED_TARGETS; i++) renderings.answered(`/t${i}`, fingerprint);
    expect(renderings.check(request('/t0')).sameRendering).to.equal(false);
    expect(renderings.check(request('/t1')).sameRendering).to.equal(true);
    expect(renderings.check(request(`/t${REMEMBERED_TARGETS}`)).sameRendering).to.equal(true);
  });
});
