import { expect } from 'chai';
import {
  decideRestart,
  formatRestartedAt,
  restartPatch,
  type RestartDecision,
} from '../../../../driver/rotation/restart-decision.js';

const NOW = new Date('2026-05-04T12:00:00.700Z');
const TEN_MINUTES = 600_000;
const at = (iso: string) => new Date(iso);

describe('decideRestart', () => {
  const cases: [string, string | undefined, Date | undefined, RestartDecision][] = [
    ['never restarted', undefined, at('2026-05-04T11:00:00Z'), { action: 'restart' }],
    ['an unparsable restartedAt (overwritten)', 'yesterday', at('2026-05-04T11:00:00Z'), { action: 'restart' }],
    [
      'restarted after this pod was created (its replacement mounts fresh content)',
      '2026-05-04T11:59:00Z',
      at('2026-05-04T11:58:59Z'),
      { action: 'skip' },
    ],
    [
      'restarted by kubectl with a zone offset, after the pod was created',
      '2026-05-04T13:59:00+02:00',
      at('2026-05-04T11:58:00Z'),
      { action: 'skip' },
    ],
    [
      'restarted 11 minutes ago, pod created since',
      '2026-05-04T11:49:00Z',
      at('2026-05-04T11:50:00Z'),
      { action: 'restart' },
    ],
    [
      'restarted exactly the spacing ago',
      '2026-05-04T11:50:00.700Z',
      at('2026-05-04T11:51:00Z'),
      { action: 'restart' },
    ],
    [
      'restarted 2 minutes ago, pod created since (content that changes on every read)',
      '2026-05-04T11:58:00Z',
      at('2026-05-04T11:58:30Z'),
      { action: 'defer', last: at('2026-05-04T11:58:00Z'), until: at('2026-05-04T12:08:00Z') },
    ],
    [
      'pod created in the second of the restart: a new pod, deferred',
      '2026-05-04T11:58:00Z',
      at('2026-05-04T11:58:00Z'),
      { action: 'defer', last: at('2026-05-04T11:58:00Z'), until: at('2026-05-04T12:08:00Z') },
    ],
    [
      'pod creation unknown, restarted 1 minute ago',
      '2026-05-04T11:59:00Z',
      undefined,
      { action: 'defer', last: at('2026-05-04T11:59:00Z'), until: at('2026-05-04T12:09:00Z') },
    ],
    [
      'restartedAt ahead of this clock: counted as now',
      '2026-05-04T15:00:00Z',
      undefined,
      { action: 'defer', last: NOW, until: at('2026-05-04T12:10:00.700Z') },
    ],
  ];
  for (const [name, restartedAt, podCreated, expected] of cases) {
    it(name, () => {
      expect(decideRestart({ now: NOW, restartedAt, podCreated, minIntervalMs: TEN_MINUTES })).to.deep.equal(expected);
    });
  }

  it('uses the configured spacing', () => {
    const facts = { now: NOW, restartedAt: '2026-05-04T11:59:00Z', podCreated: at('2026-05-04T11:59:30Z') };
    expect(decideRestart({ ...facts, minIntervalMs: 30_000 })).to.deep.equal({ action: 'restart' });
    expect(decideRestart({ ...facts, minIntervalMs: 3_600_000 })).to.deep.include({
      action: 'defer',
      until: at('2026-05-04T12:59:00Z'),
    });
  });
});

describe('formatRestartedAt', () => {
  it('writes RFC 3339 with whole seconds, as kubectl rollout restart does', () => {
    expect(formatRestartedAt(NOW)).to.equal('2026-05-04T12:00:00Z');
    expect(formatRestartedAt(at('2026-05-04T12:00:59.999Z'))).to.equal('2026-05-04T12:00:59Z');
  });
});

describe('restartPatch', () => {
  const STAMP = '2026-05-04T12:00:00Z';
  it('tests the annotations it read, then sets restartedAt', () => {
    const annotations = { team: 'a', 'kubectl.kubernetes.io/restartedAt': '2026-05-01T00:00:00Z' };
    expect(restartPatch({ labels: { app: 'web' }, annotations }, NOW)).to.deep.equal([
      { op: 'test', path: '/spec/template/metadata/annotations', value: annotations },
      { op: 'add', path: '/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt', value: STAMP },
    ]);
  });

  it('without annotations, tests the whole template metadata (so none appeared since) and adds the map', () => {
    const metadata = { labels: { app: 'web' }, creationTimestamp: null };
    expect(restartPatch(metadata, NOW)).to.deep.equal([
      { op: 'test', path: '/spec/template/metadata', value: metadata },
      { op: 'add', path: '/spec/template/metadata/annotations', value: { 'kubectl.kubernetes.io/restartedAt': STAMP } },
    ]);
  });

  it('without template metadata, adds it', () => {
    expect(restartPatch(undefined, NOW)).to.deep.equal([
      {
        op: 'add',
        path: '/spec/template/metadata',
        value: { annotations: { 'kubectl.kubernetes.io/restartedAt': STAMP } },
      },
    ]);
  });
});
