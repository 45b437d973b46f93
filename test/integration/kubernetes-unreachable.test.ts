import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { countLogged, untilLogged } from '../../bin/child-process.js';
import { join } from 'node:path';
import { isGrpcCallError } from '../../lib/errors.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createBarePod, createSecretProviderClass } from '../support/kube-objects.js';
import { fileClass, mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { until } from '../support/until.js';

/** A loopback port with nothing listening (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A plain TCP relay from 127.0.0.1:`port` to the API server: the "network comes back". */
async function relay(port: number, target: URL): Promise<Server> {
  const server = createServer((socket) => {
    const upstream = connect(Number(target.port), target.hostname);
    socket.pipe(upstream).pipe(socket);
    const close = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

describe('Kubernetes mode with the API server unreachable, then back (real kube-apiserver)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let port: number;
  let proxy: Server | undefined;

  before(async () => {
    cluster = await sharedKubeCluster();
    port = await closedPort();
    // The driver's real kubeconfig (token bound by deploy/ RBAC), pointed at a port where nothing listens yet.
    const kubeconfig = (await readFile(cluster.driverKubeconfig, 'utf8')).replace(
      cluster.url,
      `https://127.0.0.1:${port}`,
    );
    const path = join(cluster.dir, `driver-unreachable-${port}.kubeconfig`);
    await writeFile(path, kubeconfig, { mode: 0o600 });
    stack = await startDriverStack({ kubeconfig: path, providerFiles: { a: 'back' } });
  });
  after(async () => {
    await stack?.stop();
    proxy?.close();
  });

  it('keeps running and answers NodePublishVolume with UNAVAILABLE naming the class', async () => {
    const err = await stack.client.publish(stack.request(stack.targetPath('p'), 'web', 'p')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGrpcCallError(err) && err.code).to.equal(14);
    expect(isGrpcCallError(err) && err.details).to.match(
      /Kubernetes API unreachable while trying to get SecretProviderClass default\/web/,
    );
    expect(isGrpcCallError(err) && err.details).to.include('pod default/p');
  });

  it('reports not ready on Probe and /healthz until the API answers', async () => {
    expect(await stack.client.probe()).to.equal(false);
    expect((await fetch(`http://127.0.0.1:${stack.metricsPort}/healthz`)).status).to.equal(503);
    expect(stack.driver.process.exitCode).to.equal(null);
  });

  it('recovers by itself when the API server becomes reachable', async () => {
    const ns = await createNamespace(cluster, 'recover');
    const spc = (await import('yaml')).parse(fileClass('web', [{ objectName: 'a' }])) as {
      spec: Record<string, unknown>;
    };
    await createSecretProviderClass(cluster, ns, 'web', spc.spec);
    const uid = await createBarePod(cluster, ns, 'p');
    proxy = await relay(port, new URL(cluster.url));
    // Ready once the API server answers for the class API (it asks every 5 s).
    await until('Probe ready', async () => await stack.client.probe(), 30_000);
    const target = stack.targetPath('p');
    await stack.client.publish(stack.request(target, 'web', 'p', ns, uid));
    expect(await readFile(join(target, 'a'), 'utf8')).to.equal('back');
    await stack.client.unpublish('vol-p', target);
  });
});

/** A relay to the API server that can be cut (listener closed, connections dropped) and put back on its port. */
class CuttableRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly port: number,
    private readonly target: URL,
  ) {}

  async up(): Promise<void> {
    this.server = createServer((socket) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      this.sockets.add(socket).add(upstream);
      socket.pipe(upstream).pipe(socket);
      const close = () => {
        socket.destroy();
        upstream.destroy();
        this.sockets.delete(socket);
        this.sockets.delete(upstream);
      };
      socket.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('Kubernetes mode losing the API server after it listed, then getting it back (real kube-apiserver)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let relay: CuttableRelay;
  let ns: string;
  // The class watch of the test's namespace (one per namespace with volumes on the node).
  const SYNCED = /"message":"SecretProviderClass \([a-z0-9-]+\) cache synced"/;
  const synced = () => countLogged(stack.driver, SYNCED);

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'outage');
    const spc = (await import('yaml')).parse(fileClass('web', [{ objectName: 'a' }])) as {
      spec: Record<string, unknown>;
    };
    await createSecretProviderClass(cluster, ns, 'web', spc.spec);
    relay = new CuttableRelay(await closedPort(), new URL(cluster.url));
    await relay.up();
    const kubeconfig = (await readFile(cluster.driverKubeconfig, 'utf8')).replace(
      cluster.url,
      `https://127.0.0.1:${relay.port}`,
    );
    const path = join(cluster.dir, `driver-outage-${relay.port}.kubeconfig`);
    await writeFile(path, kubeconfig, { mode: 0o600 });
    stack = await startDriverStack({ kubeconfig: path, providerFiles: { a: 'content' } });
    // A first volume of the namespace starts its class watch.
    const uid = await createBarePod(cluster, ns, 'first');
    await stack.client.publish(stack.request(stack.targetPath('first'), 'web', 'first', ns, uid));
    await untilLogged(stack.driver, SYNCED, 1);
    await stack.client.unpublish('vol-first', stack.targetPath('first'));
  });
  after(async () => {
    await stack?.stop();
    await relay?.cut();
  });

  it('stays ready and fails a publish with UNAVAILABLE while the API is gone, rolling the mount back', async () => {
    const uid = await createBarePod(cluster, ns, 'during');
    await relay.cut();
    const target = stack.targetPath('during');
    const err = await stack.client.publish(stack.request(target, 'web', 'during', ns, uid)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGrpcCallError(err) && err.code).to.equal(14);
    // The class comes from the cache; writing the pod status object needs the API.
    expect(isGrpcCallError(err) && err.details).to.match(
      /Kubernetes API unreachable while trying to write SecretProviderClassPodStatus/,
    );
    expect(await mountsUnder(target)).to.deep.equal([]);
    expect(await stack.client.probe()).to.equal(true);
    expect(stack.driver.process.exitCode).to.equal(null);
  });

  it('resumes its watch by itself when the API is back, and the next publish succeeds', async () => {
    const before = synced();
    await relay.up();
    await untilLogged(stack.driver, SYNCED, before + 1);
    const uid = await createBarePod(cluster, ns, 'after');
    const target = stack.targetPath('after');
    await stack.client.publish(stack.request(target, 'web', 'after', ns, uid));
    expect(await readFile(join(target, 'a'), 'utf8')).to.equal('content');
    await stack.client.unpublish('vol-after', target);
  });
});
