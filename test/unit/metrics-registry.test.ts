import { expect } from 'chai';
import * as prom from 'prom-client';
import { Counter, Gauge, Histogram, Registry, PROMETHEUS_CONTENT_TYPE } from '../../proto/runtime/metrics/index.js';

// /metrics must read exactly as it did with prom-client 15 (dashboards, alerts, tests
// parse it). prom-client stays a devDependency as the oracle: each case runs the same
// calls on both registries and compares the text byte for byte.

/** The calls a case makes, on either implementation (both take prom-client's options). */
interface Impl {
  registry(): { metrics(): string | Promise<string> };
  counter(o: object): { inc(...a: unknown[]): void };
  gauge(o: object): { set(...a: unknown[]): void; inc(...a: unknown[]): void; dec(...a: unknown[]): void };
  histogram(o: object): { observe(...a: unknown[]): void; zero(l: object): void };
  reset(r: unknown): void;
}

const ours: Impl = {
  registry: () => new Registry(),
  counter: (o) => new Counter(o as ConstructorParameters<typeof Counter>[0]) as unknown as ReturnType<Impl['counter']>,
  gauge: (o) => new Gauge(o as ConstructorParameters<typeof Gauge>[0]) as unknown as ReturnType<Impl['gauge']>,
  histogram: (o) => new Histogram(o as ConstructorParameters<typeof Histogram>[0]) as unknown as ReturnType<Impl['histogram']>,
  reset: (r) => (r as Registry).resetMetrics(),
};

const oracle: Impl = {
  registry: () => new prom.Registry(),
  counter: (o) => new prom.Counter(o as prom.CounterConfiguration<string>) as unknown as ReturnType<Impl['counter']>,
  gauge: (o) => new prom.Gauge(o as prom.GaugeConfiguration<string>) as unknown as ReturnType<Impl['gauge']>,
  histogram: (o) => new prom.Histogram(o as prom.HistogramConfiguration<string>) as unknown as ReturnType<Impl['histogram']>,
  reset: (r) => (r as prom.Registry).resetMetrics(),
};

type Case = (impl: Impl, registers: unknown[]) => void;

const cases: [string, Case][] = [
  ['a counter without labels: 0 before any call', (i, registers) => { i.counter({ name: 'a_total', help: 'A', registers }); }],
  ['a counter without labels, incremented', (i, registers) => { const c = i.counter({ name: 'a_total', help: 'A', registers }); c.inc(); c.inc(2.5); c.inc(0); }],
  ['a labelled counter: series in first-seen order, each in its first call\'s key order', (i, registers) => {
    const c = i.counter({ name: 'node_publish_error_total', help: 'Failed NodePublishVolume calls', labelNames: ['provider', 'error_type', 'os_type'], registers });
    c.inc({ provider: 'file', error_type: 'ProviderTimeout', os_type: 'linux' });
    c.inc({ os_type: 'linux', provider: '', error_type: 'InvalidRequest' });
    c.inc({ error_type: 'ProviderTimeout', provider: 'file', os_type: 'linux' }, 3);
    c.inc({ provider: 'vault', error_type: 'X', os_type: 'linux' }, 0);
  }],
  ['a labelled counter never incremented: HELP and TYPE only', (i, registers) => { i.counter({ name: 'b_total', help: 'B', labelNames: ['x'], registers }); }],
  ['label values with quotes, backslashes, newlines and numbers; a label left out', (i, registers) => {
    const c = i.counter({ name: 'esc_total', help: 'Escaping', labelNames: ['v', 'n'], registers });
    c.inc({ v: 'say "hi"\\path\nnext', n: 7 });
    c.inc({ v: 'é ✓ {}=,' });
    c.inc({ n: 1.5 });
  }],
  ['HELP with a backslash and a newline', (i, registers) => { i.counter({ name: 'h_total', help: 'C:\\dir\nsecond line "quoted"', registers }); }],
  ['a histogram with labels and its own buckets', (i, registers) => {
    const h = i.histogram({ name: 'rotation_reconcile_duration_sec', help: 'Time to refresh one volume', labelNames: ['os_type'], buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10], registers });
    for (const v of [0.001, 0.005, 0.0051, 0.3, 1, 7.25, 10, 11, 0.1 + 0.2]) h.observe({ os_type: 'linux' }, v);
    h.observe({ os_type: 'windows' }, 0);
  }],
  ['a histogram without labels: default buckets, zeros before any observation', (i, registers) => { i.histogram({ name: 'h_seconds', help: 'H', registers }); }],
  ['a histogram without labels, observed', (i, registers) => { const h = i.histogram({ name: 'h_seconds', help: 'H', registers }); h.observe(0.02); h.observe(100); }],
  ['a labelled histogram with no observation, then zero()', (i, registers) => {
    i.histogram({ name: 'e_seconds', help: 'E', labelNames: ['k'], registers });
    i.histogram({ name: 'z_seconds', help: 'Z', labelNames: ['k', 'j'], buckets: [1], registers }).zero({ k: 'a', j: 'b' });
  }],
  ['gauges: set, inc, dec, NaN and infinities, the latest label order', (i, registers) => {
    const g = i.gauge({ name: 'g', help: 'G', registers });
    g.set(3); g.inc(); g.dec(0.5);
    const l = i.gauge({ name: 'gl', help: 'GL', labelNames: ['a', 'b'], registers });
    l.set({ a: 'x', b: 'y' }, NaN);
    l.set({ a: '1', b: '2' }, Infinity);
    l.set({ b: '2', a: '1' }, -Infinity);
    l.inc({ a: 'n' }, 5);
    l.dec({ a: 'n' });
  }],
  ['metrics in registration order; numbers as JavaScript prints them', (i, registers) => {
    i.gauge({ name: 'z', help: 'Z', registers }).set(1e21);
    i.gauge({ name: 'a', help: 'A', registers }).set(1e-7);
    i.counter({ name: 'm_total', help: 'M', registers }).inc(0.1 + 0.2);
  }],
  ['resetMetrics: a counter or gauge without labels back to 0, labelled ones and every histogram empty', (i, registers) => {
    const c = i.counter({ name: 'c_total', help: 'C', registers }); c.inc(4);
    const l = i.counter({ name: 'l_total', help: 'L', labelNames: ['x'], registers }); l.inc({ x: 'a' });
    const g = i.gauge({ name: 'g', help: 'G', registers }); g.set(2);
    const h = i.histogram({ name: 'h', help: 'H', buckets: [1], registers }); h.observe(0.5);
    i.reset(registers[0]);
    l.inc({ x: 'b' });
  }],
];

describe('metrics registry: /metrics text byte-equal to prom-client 15', () => {
  for (const [name, run] of cases) {
    it(name, async () => {
      const [mine, theirs] = [ours.registry(), oracle.registry()];
      run(ours, [mine]);
      run(oracle, [theirs]);
      expect(await mine.metrics()).to.equal(await theirs.metrics());
    });
  }

  it('the same Content-Type', () => {
    expect(new Registry().contentType).to.equal(new prom.Registry().contentType);
    expect(PROMETHEUS_CONTENT_TYPE).to.equal(prom.Registry.PROMETHEUS_CONTENT_TYPE);
  });
});

describe('metrics registry: refused calls', () => {
  const registers = () => [new Registry()];
  const cases: [string, () => void, string][] = [
    ['a counter going down', () => new Counter({ name: 'a_total', help: 'A', registers: registers() }).inc(-1), 'not possible to decrease'],
    ['a non-finite counter step', () => new Counter({ name: 'a_total', help: 'A' }).inc(Infinity), 'not a valid number'],
    ['a label not declared', () => new Counter<'a'>({ name: 'a_total', help: 'A', labelNames: ['a'] }).inc({ b: 'x' } as never), 'Added label "b"'],
    ['a non-finite observation', () => new Histogram({ name: 'h', help: 'H' }).observe(NaN), 'not a valid number'],
    ['a histogram label named le', () => new Histogram({ name: 'h', help: 'H', labelNames: ['le'] }), 'le is a reserved'],
    ['buckets out of order', () => new Histogram({ name: 'h', help: 'H', buckets: [1, 0.5] }), 'ascending'],
    ['an invalid metric name', () => new Counter({ name: 'bad-name', help: 'A' }), 'Invalid metric name'],
    ['an invalid label name', () => new Counter({ name: 'a', help: 'A', labelNames: ['bad-label'] }), 'Invalid label name'],
    ['a missing help', () => new Counter({ name: 'a', help: '' }), 'help'],
    ['a gauge set to a non-number', () => new Gauge({ name: 'g', help: 'G' }).set('1' as never), 'not a valid number'],
  ];
  for (const [name, call, message] of cases) it(`refuses ${name}`, () => expect(call).to.throw(message));

  it('refuses a second metric of the same name on one registry', () => {
    const registry = new Registry();
    new Counter({ name: 'dup_total', help: 'A', registers: [registry] });
    expect(() => new Counter({ name: 'dup_total', help: 'B', registers: [registry] })).to.throw('already been registered');
  });
});
