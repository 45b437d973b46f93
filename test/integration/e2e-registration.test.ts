import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { servePluginRegistration, type PluginRegistration } from '../support/e2e-registration.js';

// The end-to-end harness's plugin registration stand-in, called as kubelet's plugin
// watcher calls it: what it tells kubelet, and that it keeps kubelet's verdict.

const PROTO = fileURLToPath(new URL('../../../test/e2e/pluginregistration.proto', import.meta.url));

type Call = (req: object, cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void) => void;

describe('e2e plugin registration stand-in (kubelet pluginregistration v1)', () => {
  let dir: string;
  let served: PluginRegistration;
  let client: grpc.Client & Record<string, Call>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-reg-'));
    served = await servePluginRegistration(
      join(dir, 'reg.sock'),
      '/var/lib/kubelet/plugins/secrets-store.csi.k8s.io/csi.sock',
    );
    const pkg = grpc.loadPackageDefinition(
      protoLoader.loadSync(PROTO, { keepCase: true, defaults: true }),
    ) as unknown as { pluginregistration: { Registration: grpc.ServiceClientConstructor } };
    client = new pkg.pluginregistration.Registration(
      `unix://${join(dir, 'reg.sock')}`,
      grpc.credentials.createInsecure(),
    ) as unknown as grpc.Client & Record<string, Call>;
  });
  afterEach(async () => {
    client.close();
    await served.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (method: string, req: object) =>
    new Promise<Record<string, unknown>>((resolve, reject) =>
      (client[method] as Call).call(client, req, (err, res) => (err ? reject(err) : resolve(res))),
    );

  it("GetInfo: a CSI plugin named secrets-store.csi.k8s.io at the driver's socket, CSI 1.0.0", async () => {
    expect(await call('GetInfo', {})).to.deep.equal({
      type: 'CSIPlugin',
      name: 'secrets-store.csi.k8s.io',
      endpoint: '/var/lib/kubelet/plugins/secrets-store.csi.k8s.io/csi.sock',
      supported_versions: ['1.0.0'],
    });
  });

  it("keeps kubelet's refusal, with its error, so the harness fails the test", async () => {
    await call('NotifyRegistrationStatus', { plugin_registered: false, error: 'no such CSI version' });
    expect(await served.verdict).to.deep.equal({ registered: false, error: 'no such CSI version' });
  });

  it("keeps kubelet's acceptance", async () => {
    await call('NotifyRegistrationStatus', { plugin_registered: true });
    expect(await served.verdict).to.deep.equal({ registered: true, error: '' });
  });
});
