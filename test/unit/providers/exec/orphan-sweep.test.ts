import { expect } from 'chai';
import { parseStat } from '../../../../providers/exec/orphan-reaper.js';
import { planSweep, subtree, type ProcessEntry, type RunningHelper } from '../../../../providers/exec/orphan-sweep.js';

const SELF = 100;
const proc = (pid: number, ppid: number, startTicks: number, state = 'S'): ProcessEntry => ({
  pid,
  ppid,
  startTicks,
  state,
});

describe('planSweep: which adopted processes the exec provider kills or reaps', () => {
  const table: readonly [
    what: string,
    processes: ProcessEntry[],
    running: RunningHelper[],
    expected: { kill: number[]; reap: number[] },
  ][] = [
    ['nothing adopted', [proc(1, 0, 0), proc(SELF, 1, 10)], [], { kill: [], reap: [] }],
    [
      'a running helper is never touched',
      [proc(200, SELF, 50)],
      [{ pid: 200, startTicks: 50 }],
      { kill: [], reap: [] },
    ],
    ['an orphan with no helper running: killed', [proc(300, SELF, 60)], [], { kill: [300], reap: [] }],
    [
      'an orphan with everything below it',
      [proc(300, SELF, 60), proc(301, 300, 61), proc(302, 301, 62), proc(400, 1, 61)],
      [],
      { kill: [300, 301, 302], reap: [] },
    ],
    [
      'an orphan a running helper started before may own: kept until that helper ends',
      [proc(200, SELF, 50), proc(300, SELF, 60)],
      [{ pid: 200, startTicks: 50 }],
      { kill: [], reap: [] },
    ],
    [
      'an orphan older than every running helper: its helper ended, killed',
      [proc(200, SELF, 70), proc(300, SELF, 60)],
      [{ pid: 200, startTicks: 70 }],
      { kill: [300], reap: [] },
    ],
    ['a zombie orphan: reaped', [proc(300, SELF, 60, 'Z')], [], { kill: [], reap: [300] }],
    [
      "a running helper's own zombie (Node.js reaps it): left alone",
      [proc(200, SELF, 50, 'Z')],
      [{ pid: 200, startTicks: 50 }],
      { kill: [], reap: [] },
    ],
    ['a process of someone else', [proc(500, 42, 60)], [], { kill: [], reap: [] }],
  ];
  for (const [what, processes, running, expected] of table) {
    it(what, () => {
      expect(planSweep(SELF, processes, running)).to.deep.equal(expected);
    });
  }

  it('subtree survives a cycle in stale data', () => {
    expect(subtree(1, [proc(2, 1, 0), proc(1, 2, 0)]).sort()).to.deep.equal([1, 2]);
  });
});

describe('parseStat (/proc/<pid>/stat)', () => {
  const fields = (comm: string, state: string, ppid: number, start: number) =>
    `4242 (${comm}) ${state} ${ppid} 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 ${start} 2400000 100 18446744073709551615`;
  it('reads state, ppid and start time', () => {
    expect(parseStat(4242, fields('sleep', 'S', 7, 12345))).to.deep.equal({
      pid: 4242,
      ppid: 7,
      startTicks: 12345,
      state: 'S',
    });
  });
  it('copes with spaces and parentheses in the command name', () => {
    expect(parseStat(4242, fields('a) b (c', 'Z', 9, 5))).to.deep.include({ ppid: 9, startTicks: 5, state: 'Z' });
  });
  it('refuses a line it cannot read', () => {
    expect(parseStat(1, 'garbage')).to.equal(undefined);
  });
});
