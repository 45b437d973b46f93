import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { isGrpcCallError } from '../../proto/runtime/errors.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';

/** A loopback port with nothing listening (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('Kubernetes mode with the API server unreachable', function () {
  let stack: DriverStack;

  before(async () => {
    const port = await closedPort();
    const dir = join(process.env['TMPDIR'] ?? '/tmp', `ssc-unreachable-${port}.kubeconfig`);
    await writeFile(dir, `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`);
    stack = await startDriverStack({ kubeconfig: dir });
  });
  after(async () => { await stack?.stop(); });

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
});
