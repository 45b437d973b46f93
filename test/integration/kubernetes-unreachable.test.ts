import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { isGrpcCallError } from '../../proto/runtime/errors.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { fileClass, startDriverStack, type DriverStack } from '../support/driver-stack.js';

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
    const close = () => { socket.destroy(); upstream.destroy(); };
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
    const kubeconfig = (await readFile(cluster.driverKubeconfig, 'utf8')).replace(cluster.url, `https://127.0.0.1:${port}`);
    const path = join(cluster.dir, `driver-unreachable-${port}.kubeconfig`);
    await writeFile(path, kubeconfig, { mode: 0o600 });
    stack = await startDriverStack({ kubeconfig: path, providerFiles: { a: 'back' } });
  });
  after(async () => {
    await stack?.stop();
    proxy?.close();
  });

  it('keeps running and answers NodePublishVolume with UNAVAILABLE naming the class', async () => {
    const err = await stack.client.publish(stack.request(stack.targetPath('p'), 'web', 'p')).then(() => undefined, (e: unknown) => e);
    expect(isGrpcCallError(err) && err.code).to.equal(14);
    expect(isGrpcCallError(err) && err.details).to.match(/Kubernetes API unreachable while trying to get SecretProviderClass default\/web/);
    expect(isGrpcCallError(err) && err.details).to.include('pod default/p');
  });

  it('reports not ready on Probe and /healthz until the API answers', async () => {
    expect(await stack.client.probe()).to.equal(false);
    expect((await fetch(`http://127.0.0.1:${stack.metricsPort}/healthz`)).status).to.equal(503);
    expect(stack.driver.process.exitCode).to.equal(null);
  });

  it('recovers by itself when the API server becomes reachable', async () => {
    const ns = await createNamespace(cluster, 'recover');
    const spc = (await import('yaml')).parse(fileClass('web', [{ objectName: 'a' }])) as { metadata: Record<string, unknown> };
    await cluster.admin.custom.createNamespacedCustomObject({ group: 'secrets-store.csi.x-k8s.io', version: 'v1', namespace: ns, plural: 'secretproviderclasses', body: { ...spc, metadata: { name: 'web' } } });
    const uid = (await cluster.admin.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } })).metadata?.uid ?? '';
    proxy = await relay(port, new URL(cluster.url));
    while (!/SecretProviderClass cache synced/.test(stack.driver.stderr())) await new Promise<void>((resolve) => stack.driver.process.stderr?.once('data', () => resolve()));
    expect(await stack.client.probe()).to.equal(true);
    const target = stack.targetPath('p');
    await stack.client.publish(stack.request(target, 'web', 'p', ns, uid));
    expect(await readFile(join(target, 'a'), 'utf8')).to.equal('back');
    await stack.client.unpublish('vol-p', target);
  });
});
