import { expect } from 'chai';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSecretProviderClassSource } from '../../../../driver/spc/local-source.js';
import { SscError } from '../../../../lib/errors.js';
import { createLogger } from '../../../../lib/logging/logger.js';

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
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

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

  it('names a file that does not parse, and its YAML error, when a class is not found', async () => {
    // The class may be in the broken document: "not found" alone sends users to the wrong place.
    await writeFile(join(dir, 'c.yaml'), `${spc('fine', 'file')}---\nmetadata:\n  name: lost\n  bad: [unclosed\n`);
    const err = await source.get('team-a', 'lost').catch((e: SscError) => e);
    expect((err as SscError).kind).to.equal('not-found');
    expect((err as SscError).message).to.match(
      new RegExp(
        `^SecretProviderClass team-a/lost not found in ${dir}; c\\.yaml does not parse: Flow sequence .+ at line \\d+, column \\d+$`,
      ),
    );
  });

  it('reports an alias that does not resolve as a parse error of its file, not an internal error', async () => {
    await writeFile(join(dir, 'c.yaml'), 'kind: SecretProviderClass\nmetadata: *nowhere\n');
    const err = await source.get('team-a', 'other').catch((e: SscError) => e);
    expect((err as SscError).kind).to.equal('not-found');
    expect((err as SscError).message).to.match(/; c\.yaml does not parse: Unresolved alias/);
  });

  it('forgets a parse error once the file is fixed or removed', async () => {
    await rm(join(dir, 'c.yaml'));
    const err = await source.get('team-a', 'other').catch((e: SscError) => e);
    expect((err as SscError).message).to.equal(`SecretProviderClass team-a/other not found in ${dir}`);
  });
});

describe('LocalSecretProviderClassSource.open: checks --spc-dir at startup', () => {
  const logger = createLogger({ component: 'test', silent: true });
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-spc-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a directory that does not exist, naming the flag and the path', async () => {
    const err = await LocalSecretProviderClassSource.open(join(dir, 'absent'), logger).catch((e: Error) => e);
    expect((err as Error).message).to.equal(`--spc-dir ${join(dir, 'absent')} does not exist`);
  });

  it('refuses a path that is not a directory', async () => {
    await writeFile(join(dir, 'file.yaml'), '');
    const err = await LocalSecretProviderClassSource.open(join(dir, 'file.yaml'), logger).catch((e: Error) => e);
    expect((err as Error).message).to.equal(`--spc-dir ${join(dir, 'file.yaml')} is not a directory`);
  });

  it('opens an existing directory, empty or not', async () => {
    expect(await LocalSecretProviderClassSource.open(dir, logger)).to.be.instanceOf(LocalSecretProviderClassSource);
  });
});
