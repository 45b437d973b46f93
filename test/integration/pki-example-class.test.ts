import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseSecretProviderClass } from '../../driver/spc/secret-provider-class.js';
import { stringFlag } from '../../lib/flags.js';
import { DEPLOY, find, PKI_PROVIDER_DS, type Obj } from '../support/deploy-manifests.js';
import { pkiProviderArgs } from '../support/pki-provider-daemonset.js';
import { startProviderProcess, type ProviderProcess } from '../support/provider-process.js';

// deploy/examples/pki end to end under the real pki provider with the DaemonSet's flags:
// the CA made by the README's own openssl command, the Secret's two keys as the Mount's
// nodePublishSecretRef data, the example pod's identity as the driver passes it. The
// files the class's secretObjects sync into the kubernetes.io/tls Secret must be a
// matching pair, and the chain must verify with the README's `openssl verify`.

const run = promisify(execFile);

describe('deploy/examples/pki under the real pki provider', function () {
  this.timeout(60_000);
  let provider: ProviderProcess | undefined;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-pki-example-'));
  });
  after(async () => {
    await provider?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("issues the pod a certificate from the README's CA that openssl verifies, with the names, usages and key mode the class asks for", async () => {
    const readme = readFileSync(join(DEPLOY, 'examples/pki/README.md'), 'utf8');
    const command = /^(openssl req -x509 [^\n]*\\\n(?:[^\n]*\\\n)*[^\n]*)$/m.exec(readme)?.[1];
    expect(command, "the README's CA command").to.be.a('string');
    await run('sh', ['-c', command as string], { cwd: dir });

    provider = await startProviderProcess('pki', [
      `--min-duration=${stringFlag(pkiProviderArgs(PKI_PROVIDER_DS()), 'min-duration')}`,
    ]);
    const pod = find('Pod', 'pki-demo').obj;
    const spc = parseSecretProviderClass(find('SecretProviderClass', 'pki-demo').obj);
    const csi = (pod['spec'].volumes as Obj[]).find((v) => v['csi'])?.['csi'] as Obj;
    expect(csi['nodePublishSecretRef'].name).to.equal('pki-demo-ca');
    const response = await provider.mount(
      {
        ...spc.parameters,
        'csi.storage.k8s.io/pod.name': pod['metadata'].name,
        'csi.storage.k8s.io/pod.namespace': pod['metadata'].namespace,
        'csi.storage.k8s.io/serviceAccount.name': pod['spec'].serviceAccountName,
        'csi.storage.k8s.io/pod.uid': '5d0c3e1a-8a55-4c55-9b1e-2f1d6a2f7c11',
      },
      {
        secrets: {
          'ca.crt': await readFile(join(dir, 'ca.crt'), 'utf8'),
          'ca.key': await readFile(join(dir, 'ca.key'), 'utf8'),
        },
      },
    );

    const files = new Map(response.files.map((f) => [f.path, f]));
    expect([...files.keys()].sort()).to.deep.equal(['ca.crt', 'tls.crt', 'tls.key']);
    for (const name of ['tls.crt', 'tls.key', 'ca.crt'])
      await writeFile(join(dir, `mounted-${name}`), files.get(name)?.contents ?? '');
    // The README's check.
    await run('openssl', [
      'verify',
      '-CAfile',
      join(dir, 'mounted-ca.crt'),
      '-untrusted',
      join(dir, 'mounted-tls.crt'),
      join(dir, 'mounted-tls.crt'),
    ]);
    const leaf = new X509Certificate(files.get('tls.crt')?.contents as Buffer);
    expect(leaf.subject).to.equal('CN=pki-demo.default');
    expect(leaf.subjectAltName)
      .to.include('DNS:pki-demo.default.svc')
      .and.include('URI:spiffe://cluster.local/ns/default/sa/pki-demo');
    const text = (
      await run('openssl', ['x509', '-in', join(dir, 'mounted-tls.crt'), '-noout', '-ext', 'extendedKeyUsage'])
    ).stdout;
    expect(text).to.include('TLS Web Server Authentication').and.include('TLS Web Client Authentication');
    // secretObjects pair tls.crt with tls.key in the kubernetes.io/tls Secret: they must match.
    const key = createPrivateKey(files.get('tls.key')?.contents as Buffer);
    expect(
      createPublicKey(key)
        .export({ type: 'spki', format: 'der' })
        .equals(leaf.publicKey.export({ type: 'spki', format: 'der' })),
    ).to.equal(true);
    expect(key.asymmetricKeyType).to.equal('ec');
    expect(files.get('tls.key')?.mode, 'keyFilePermission 0640').to.equal(0o640);
    const hours = (Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)) / 3_600_000;
    expect(hours, 'duration 72h').to.equal(72);
  });
});
