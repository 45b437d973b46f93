import { expect } from 'chai';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SscError } from '../../../../lib/errors.js';
import { parseFlags } from '../../../../lib/flags.js';
import { loadCa } from '../../../../providers/pki/ca.js';
import { caSource } from '../../../../providers/pki/ca-dir.js';
import { pkiProviderFlags, pkiSettings } from '../../../../providers/pki/settings.js';
import { caSecret, makeTestCa } from '../../../support/pki-test-ca.js';

// --ca-dir: the per-namespace CA for a Mount without a nodePublishSecretRef CA (what the
// SecretSync controller sends), read from real files in a temp dir.

const NOW = Math.floor(Date.now() / 1000);
const ns = (namespace: string) => ({ 'csi.storage.k8s.io/pod.namespace': namespace });

async function refusal(run: () => Promise<unknown>): Promise<SscError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(SscError);
  expect((err as SscError).reason).to.equal('CaMissing');
  return err as SscError;
}

describe('pki --ca-dir', () => {
  const shopCa = makeTestCa('shop CA', 'EC-P256', NOW - 3600, NOW + 86_400);
  const otherCa = makeTestCa('other CA', 'EC-P256', NOW - 3600, NOW + 86_400);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-pki-ca-dir-'));
    await mkdir(join(dir, 'shop'));
    await writeFile(join(dir, 'shop', 'ca.crt'), shopCa.certPem);
    await writeFile(join(dir, 'shop', 'ca.key'), shopCa.keyPem);
    await mkdir(join(dir, 'half'));
    await writeFile(join(dir, 'half', 'ca.crt'), shopCa.certPem);
    // A namespace's directory may be a symlink, as a Secret volume's files are.
    await symlink(join(dir, 'shop'), join(dir, 'linked'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a Mount without a nodePublishSecretRef CA signs with its namespace's files", async () => {
    const from = await caSource({}, ns('shop'), dir);
    expect(from.source).to.equal('--ca-dir shop/');
    expect(loadCa(from.data, NOW, from.source).signer.x509.subject).to.equal('CN=shop CA');
    expect((await caSource({}, ns('linked'), dir)).data['ca.key']).to.equal(shopCa.keyPem);
  });

  it('a nodePublishSecretRef CA wins, and without --ca-dir nothing is read', async () => {
    const secrets = caSecret([otherCa], otherCa);
    expect(await caSource(secrets, ns('shop'), dir)).to.deep.equal({ data: secrets, source: 'nodePublishSecretRef' });
    expect(await caSource({}, ns('shop'), undefined)).to.deep.equal({ data: {}, source: 'nodePublishSecretRef' });
  });

  it('a namespace without its directory, or a half one, is CaMissing naming the directory', async () => {
    const none = await caSource({}, ns('elsewhere'), dir);
    expect(none.data).to.deep.equal({});
    expect(() => loadCa(none.data, NOW, none.source)).to.throw(
      'pki provider: --ca-dir elsewhere/ has no ca.crt and ca.key',
    );
    const half = await caSource({}, ns('half'), dir);
    expect(() => loadCa(half.data, NOW, half.source)).to.throw('pki provider: --ca-dir half/ has no ca.key');
  });

  for (const bad of ['', '..', '../shop', 'shop/..', 'Shop', 'a/b', '.'])
    it(`the namespace ${JSON.stringify(bad)} never becomes a path: CaMissing`, async () => {
      const e = await refusal(() => caSource({}, ns(bad), dir));
      expect(e.message).to.include('names no --ca-dir directory');
    });

  it('the flag: absolute paths only, empty is off', () => {
    const settings = (args: string[]) => pkiSettings(parseFlags(args, pkiProviderFlags));
    expect(settings(['--ca-dir=/etc/pki-cas']).caDir).to.equal('/etc/pki-cas');
    expect(settings([]).caDir).to.equal(undefined);
    expect(() => settings(['--ca-dir=cas'])).to.throw('--ca-dir "cas" must be an absolute path');
  });
});
