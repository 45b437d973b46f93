import { expect } from 'chai';
import { Counter, Gauge, Registry } from 'prom-client';
import { parseListenAddress, startHealthServer } from '../../../lib/http-server.js';

describe('parseListenAddress', () => {
  const valid: [string, string | undefined, number][] = [
    [':8095', undefined, 8095],
    ['127.0.0.1:8095', '127.0.0.1', 8095],
    ['0.0.0.0:80', '0.0.0.0', 80],
    ['localhost:0', 'localhost', 0],
    ['[::1]:9090', '::1', 9090],
    ['[::]:65535', '::', 65535],
    [' :8095 ', undefined, 8095],
  ];
  for (const [addr, host, port] of valid) {
    it(`${JSON.stringify(addr)} → host ${String(host)}, port ${port}`, () => {
      expect(parseListenAddress(addr)).to.deep.equal({ host, port });
    });
  }
  const shape: string[] = ['8095', 'localhost', '', ':', ':abc', '::1:8095', 'a:b:80', ':-1', '[::1]', 'host:80/x'];
  for (const addr of shape) {
    it(`rejects ${JSON.stringify(addr)}`, () => {
      expect(() => parseListenAddress(addr)).to.throw(`address "${addr}" must look like :8095 or 127.0.0.1:8095`);
    });
  }
  for (const addr of [':65536', '127.0.0.1:99999']) {
    it(`rejects the port of ${addr}`, () =>
      expect(() => parseListenAddress(addr)).to.throw(`address "${addr}" has an invalid port`));
  }
});

describe('startHealthServer', () => {
  /** GETs `path` on a server started for `registry` with `healthy`, then closes it. */
  async function get(
    registry: Registry,
    path: string,
    healthy = true,
  ): Promise<{ status: number; type: string | null; body: string }> {
    const server = await startHealthServer('127.0.0.1:0', registry, () => healthy, '--metrics-addr');
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}${path}`);
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    } finally {
      await server.close();
    }
  }

  it('an address in use fails naming the flag that set it', async () => {
    const first = await startHealthServer('127.0.0.1:0', new Registry(), () => true, '--metrics-addr');
    try {
      const refused = await startHealthServer(
        `127.0.0.1:${first.port}`,
        new Registry(),
        () => true,
        '--healthz-port',
      ).then(
        async (second) => {
          await second.close();
          return 'listened';
        },
        (err: Error) => err.message,
      );
      expect(refused).to.equal(`--healthz-port 127.0.0.1:${first.port}: cannot listen: the address is in use`);
    } finally {
      await first.close();
    }
  });

  it("/metrics: the registry's text with Prometheus' text content type (a query string ignored)", async () => {
    const registry = new Registry();
    const help = 'Successful NodePublishVolume calls';
    const counter = new Counter({ name: 'node_publish_total', help, labelNames: ['os_type'], registers: [registry] });
    counter.inc({ os_type: 'linux' });
    const res = await get(registry, '/metrics?x=1');
    expect(res.status).to.equal(200);
    expect(res.type).to.equal('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).to.equal(await registry.metrics());
    expect(res.body).to.match(/^node_publish_total\{os_type="linux"\} 1$/m);
  });

  it('/metrics: 500 "metrics unavailable" when a metric cannot be read, and serves on', async () => {
    const registry = new Registry();
    let fail = true;
    new Gauge({
      name: 'g',
      help: 'G',
      registers: [registry],
      collect() {
        if (fail) throw new Error('no /proc');
        this.set(1);
      },
    });
    const server = await startHealthServer('127.0.0.1:0', registry, () => true, '--metrics-addr');
    try {
      const bad = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect([bad.status, await bad.text()]).to.deep.equal([500, 'metrics unavailable\n']);
      fail = false;
      const good = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect([good.status, await good.text()]).to.deep.equal([200, '# HELP g G\n# TYPE g gauge\ng 1\n']);
    } finally {
      await server.close();
    }
  });

  it('/healthz: 200 ok when healthy, 503 not ready otherwise; other paths 404', async () => {
    const registry = new Registry();
    expect(await get(registry, '/healthz')).to.deep.include({ status: 200, body: 'ok\n' });
    expect(await get(registry, '/healthz', false)).to.deep.include({ status: 503, body: 'not ready\n' });
    expect(await get(registry, '/metricsx')).to.deep.include({ status: 404, body: 'not found\n' });
  });
});
