import { expect } from 'chai';
import { createVerify, generateKeyPairSync } from 'node:crypto';
import { baoFromPeersEnv, findBao, type BaoFiles } from '../../../bin/demo-bao.js';
import { signPodToken } from '../../../bin/demo-vault.js';

/** A file system of `texts` (path → content) and `executables`. */
function files(texts: Record<string, string>, executables: readonly string[]): BaoFiles {
  return { readText: (path) => texts[path], isExecutable: (path) => executables.includes(path) };
}

const PEERS_ENV = 'ETCD=/c/etcd\nBAO=/c/openbao-2.7.2/bao\nHELM=/c/helm\n';

describe('demo: which bao runs the vault part', () => {
  const cases: { name: string; env: NodeJS.ProcessEnv; fs: BaoFiles; want: ReturnType<typeof findBao> }[] = [
    {
      name: "the test peers' BAO in the default cache",
      env: { PATH: '/usr/bin' },
      fs: files({ '/home/u/.cache/secrets-store-csi/peers/peers.env': PEERS_ENV }, [
        '/c/openbao-2.7.2/bao',
        '/usr/bin/bao',
      ]),
      want: { path: '/c/openbao-2.7.2/bao', from: 'the test peers' },
    },
    {
      name: 'SSC_PEERS_CACHE moves the cache, as in install.sh',
      env: { SSC_PEERS_CACHE: '/x/peers', PATH: '' },
      fs: files({ '/x/peers/peers.env': PEERS_ENV }, ['/c/openbao-2.7.2/bao']),
      want: { path: '/c/openbao-2.7.2/bao', from: 'the test peers' },
    },
    {
      name: 'a BAO entry whose file is gone: PATH',
      env: { PATH: '/opt/bin:/usr/bin' },
      fs: files({ '/home/u/.cache/secrets-store-csi/peers/peers.env': PEERS_ENV }, ['/usr/bin/bao']),
      want: { path: '/usr/bin/bao', from: 'PATH' },
    },
    {
      name: 'no peers.env: the first bao on PATH',
      env: { PATH: ':/opt/bin:/usr/local/bin:/usr/bin' },
      fs: files({}, ['/usr/local/bin/bao', '/usr/bin/bao']),
      want: { path: '/usr/local/bin/bao', from: 'PATH' },
    },
    {
      name: 'peers.env without BAO and no bao on PATH: none',
      env: { PATH: '/usr/bin' },
      fs: files({ '/home/u/.cache/secrets-store-csi/peers/peers.env': 'ETCD=/c/etcd\n' }, ['/c/etcd']),
      want: undefined,
    },
    { name: 'no PATH at all: none', env: {}, fs: files({}, []), want: undefined },
  ];
  for (const c of cases) {
    it(c.name, () => expect(findBao(c.env, '/home/u', c.fs)).to.deep.equal(c.want));
  }

  it('reads BAO from peers.env lines, ignoring other keys and blank values', () => {
    expect(baoFromPeersEnv(PEERS_ENV)).to.equal('/c/openbao-2.7.2/bao');
    expect(baoFromPeersEnv('BAO=\nXBAO=/a\n  BAO=/b  \n')).to.equal('/b');
    expect(baoFromPeersEnv('')).to.equal(undefined);
  });
});

describe("demo: the pod token it signs for OpenBao's JWT auth", () => {
  it('is an RS256 JWT for the default service account, audience vault, valid 10 minutes, verifiable with the public key', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const [header, claims, signature] = signPodToken(privateKey, 1_000).split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).to.deep.equal({ alg: 'RS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).to.deep.include({
      iss: 'https://kubernetes.default.svc',
      sub: 'system:serviceaccount:default:default',
      aud: ['vault'],
      iat: 1_000,
      nbf: 1_000,
      exp: 1_600,
    });
    expect(
      createVerify('RSA-SHA256').update(`${header}.${claims}`).verify(publicKey, Buffer.from(signature, 'base64url')),
    ).to.equal(true);
  });
});
