import { expect } from 'chai';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSecretProviderClassSource } from '../../driver/spc/local-source.js';
import { SscError } from '../../proto/runtime/errors.js';
import { createLogger } from '../../proto/runtime/logger.js';

const spc = (name: string, provider: string, extra = '') => `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: ${name}
  namespace: team-a
spec:
  provider: ${provider}
${extra}`;

describe('LocalSecretProviderClassSource', () => {
  let dir: string;
  let source: LocalSecretProviderClassSource;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-spc-'));
    source = new LocalSecretProviderClassSource(dir, createLogger({ component: 'test', silent: true }));
  });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  it('finds a class by namespace and name among several documents', async () => {
    await writeFile(join(dir, 'a.yaml'), `${spc('one', 'file')}---\n${spc('two', 'vault')}---\nkind: ConfigMap\n`);
    expect((await source.get('team-a', 'two')).provider).to.equal('vault');
  });

  it('answers NOT_FOUND naming namespace/name and the folder', async () => {
    const err = await source.get('team-b', 'one').catch((e: SscError) => e);
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('not-found');
    expect((err as SscError).message).to.equal(`SecretProviderClass team-b/one not found in ${dir}`);
  });

  it('re-reads a file when it changes', async () => {
    await writeFile(join(dir, 'a.yaml'), spc('one', 'azure'));
    const later = new Date(Date.now() + 5000);
    await utimes(join(dir, 'a.yaml'), later, later);
    expect((await source.get('team-a', 'one')).provider).to.equal('azure');
  });

  it('reports why an invalid class is refused instead of NOT_FOUND', async () => {
    await writeFile(join(dir, 'bad.yaml'), spc('broken', '""'));
    const err = await source.get('team-a', 'broken').catch((e: SscError) => e);
    expect((err as SscError).kind).to.equal('invalid-argument');
    expect((err as SscError).message).to.equal('SecretProviderClass team-a/broken: spec.provider is required');
  });

  it('skips a YAML document that does not parse and still serves the others', async () => {
    await writeFile(join(dir, 'c.yaml'), `${spc('fine', 'file')}---\nkind: [unclosed\n`);
    expect((await source.get('team-a', 'fine')).provider).to.equal('file');
  });
});
