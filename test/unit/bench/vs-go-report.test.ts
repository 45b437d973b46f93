import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { batches, turnOrder } from '../../../bench/vs-go-cases.js';
import {
  beforeAfter,
  checkTargets,
  compare,
  formatVsReport,
  LIBRARY_BUDGET,
  VS_TARGETS,
  type VsGoResults,
} from '../../../bench/vs-go-report.js';

describe('the side-by-side benchmark against the Go driver (ratios, targets, turns)', () => {
  it('gives ours/theirs as the ratio, and none without the Go half', () => {
    expect(compare('x', 'x', 'ms', 8, 10).ratio).to.equal(0.8);
    expect(compare('x', 'x', 'ms', 8, null).ratio).to.equal(null);
    expect(compare('x', 'x', 'ms', 8, 0).ratio).to.equal(null);
  });

  const cases: [string, ReturnType<typeof compare>, string, 'met' | 'MISSED' | 'n/a'][] = [
    ['a ratio at the limit is met', compare('publish-10-p50', '', 'ms', 8, 10), 'publish-10-p50', 'met'],
    ['a ratio above the limit is missed', compare('publish-10-p50', '', 'ms', 9, 10), 'publish-10-p50', 'MISSED'],
    [
      'a ratio target without the Go half is n/a',
      compare('publish-10-p50', '', 'ms', 1, null),
      'publish-10-p50',
      'n/a',
    ],
    ['a memory target is on our own MiB, Go half or not', compare('rss-idle', '', 'MiB', 54, null), 'rss-idle', 'met'],
    ['a memory target above its MiB is missed', compare('rss-500', '', 'MiB', 71, 50), 'rss-500', 'MISSED'],
    ['the provider CPU target allows 2×', compare('provider-cpu-10', '', 'ms', 0.8, 0.4), 'provider-cpu-10', 'met'],
  ];
  for (const [what, row, id, status] of cases) {
    it(what, () => {
      expect(checkTargets([row]).find((t) => t.rowId === id)?.status).to.equal(status);
    });
  }

  it('marks a target whose row was not measured n/a', () => {
    expect(checkTargets([]).map((t) => t.status)).to.deep.equal(VS_TARGETS.map(() => 'n/a'));
  });

  const results = (rows: ReturnType<typeof compare>[]): VsGoResults => ({
    schema: 1,
    benchmark: 'vs-go-driver',
    startedAt: '2026-11-24T00:00:00Z',
    finishedAt: '2026-11-24T00:01:00Z',
    durationSeconds: 60,
    machine: {
      cpuModel: 'cpu',
      cpuCount: 2,
      totalMemMiB: 1024,
      nodeVersion: 'v24',
      platform: 'linux',
      kernel: '6',
      arch: 'x64',
      uid: 0,
      gitCommit: 'abcdef0',
      gitDirty: false,
    },
    loadAverage1m: { before: 0, after: 0 },
    goDriver: { ran: true },
    mountMode: 'tmpfs',
    config: {},
    rows,
    cleanupUnpublishRetries: 0,
    targets: checkTargets(rows),
  });

  it('points each missed target at its evidence in bench/README.md, once per section, and says nothing when all are met', () => {
    const missed = formatVsReport(
      results([
        compare('publish-10-p50', 'p', 'ms', 9, 10),
        compare('publish-10-p99', 'p', 'ms', 11, 10),
        compare('rss-idle', 'r', 'MiB', 75, 38),
      ]),
    );
    const where = missed.slice(missed.indexOf('where the remaining cost'));
    const sections = where.split('\n').filter((line) => /^ {2}"/.test(line));
    expect(sections).to.deep.equal([
      '  "What is left of the first-publish targets":',
      '  "Where the driver\'s memory is":',
    ]);
    expect(where).to.include('kube-apiserver').and.include('node binary');
    const met = formatVsReport(
      results([compare('publish-10-p50', 'p', 'ms', 7, 10), compare('rss-idle', 'r', 'MiB', 50, 38)]),
    );
    expect(met).to.not.include('where the remaining cost');
  });

  it('names evidence sections that exist in bench/README.md', () => {
    const readme = readFileSync(new URL('../../../../bench/README.md', import.meta.url), 'utf8');
    for (const t of [...VS_TARGETS, ...LIBRARY_BUDGET]) {
      const heading = t.evidence.section;
      expect(
        readme.split('\n').some((line) => line.startsWith('#') && line.includes(heading)),
        heading,
      ).to.equal(true);
    }
  });

  it('prints only numbers that its evidence section of bench/README.md gives', () => {
    const readme = readFileSync(new URL('../../../../bench/README.md', import.meta.url), 'utf8');
    for (const evidence of new Set([...VS_TARGETS, ...LIBRARY_BUDGET].map((t) => t.evidence))) {
      const lines = readme.split('\n');
      const start = lines.findIndex((line) => line.startsWith('#') && line.includes(evidence.section));
      const level = /^#+/.exec(lines[start] as string)?.[0].length as number;
      const end = lines.findIndex(
        (line, i) => i > start && /^#+ /.test(line) && (/^#+/.exec(line)?.[0].length as number) <= level,
      );
      const body = lines
        .slice(start, end < 0 ? undefined : end)
        .join(' ')
        .replace(/\s+/g, ' ');
      for (const number of evidence.finding.join(' ').match(/\d+(?:\.\d+)?(?: ?[–/] ?\d+(?:\.\d+)?)?/g) ?? []) {
        expect(body, `${evidence.section}: ${number}`).to.include(number);
      }
    }
  });

  it('checks the library budget: RSS in MiB of ours, latency and burst as ratios to the Go driver', () => {
    const rows = [
      compare('rss-idle', 'r', 'MiB', 89.9, 38),
      compare('rss-500', 'r', 'MiB', 110.1, 52),
      compare('publish-10-p50', 'p', 'ms', 9.5, 10),
      compare('burst-100', 'b', 'ms', 700, 3000),
      compare('republish-10-p50', 'r', 'ms', 5, 10),
    ];
    expect(checkTargets(rows, LIBRARY_BUDGET).map((t) => [t.rowId, t.status])).to.deep.equal([
      ['rss-idle', 'met'],
      ['rss-500', 'MISSED'],
      ['publish-10-p50', 'met'],
      ['burst-100', 'MISSED'],
      ['republish-10-p50', 'met'],
    ]);
  });

  it('puts this run next to the baseline run, row by row, for the rows both measured', () => {
    const baseline = {
      commit: 'c601c5f',
      startedAt: '2026-11-28T00:00:00Z',
      rows: [compare('rss-idle', 'RSS', 'MiB', 75, 38), compare('publish-10-p50', 'p', 'ms', 8, 10)],
    };
    const rows = beforeAfter(baseline, [
      compare('rss-idle', 'RSS idle', 'MiB', 84, 38),
      compare('burst-100', 'b', 'ms', 1, 2),
    ]);
    expect(rows).to.deep.equal([
      {
        id: 'rss-idle',
        label: 'RSS idle',
        unit: 'MiB',
        before: 75,
        after: 84,
        change: 1.12,
        beforeRatio: 1.974,
        afterRatio: 2.211,
      },
    ]);
    const text = formatVsReport({
      ...results([compare('rss-idle', 'RSS idle', 'MiB', 84, 38)]),
      budget: checkTargets([compare('rss-idle', 'RSS idle', 'MiB', 84, 38)], LIBRARY_BUDGET),
      beforeAfter: { baseline, rows },
    });
    expect(text)
      .to.include('before: c601c5f, 2026-11-28')
      .and.include('1.12×')
      .and.include('met    driver RSS idle ≤ 90 MiB: 84.0 MiB');
  });

  it('splits iterations into batches and alternates which driver goes first (ABBA)', () => {
    expect(batches(25, 10)).to.deep.equal([10, 10, 5]);
    expect(batches(0, 10)).to.deep.equal([]);
    expect([0, 1, 2].map((i) => turnOrder(['ours', 'theirs'], i))).to.deep.equal([
      ['ours', 'theirs'],
      ['theirs', 'ours'],
      ['ours', 'theirs'],
    ]);
  });
});
