import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveEndpoint } from '../../../../../driver/k8s/client/connect.js';
import { endpointFromKubeconfig, inClusterEndpoint } from '../../../../../driver/k8s/client/kubeconfig.js';

/** A read() over an in-memory file system, recording what was read. */
function files(contents: Record<string, string>): { read: (path: string) => Buffer; reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    read: (path: string) => {
      reads.push(path);
      const content = contents[path];
      if (content === undefined)
        throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
      return Buffer.from(content);
    },
  };
}

const config = (cluster: string, user: string, extra = '') => `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
${cluster
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
users:
- name: u
  user:
${user
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
${extra}`;

describe('kubeconfig: the API endpoint of the current context', () => {
  it('takes server, CA file (relative to the kubeconfig) and token', () => {
    const fs = files({ '/etc/kube/pki/ca.crt': 'CA' });
    const endpoint = endpointFromKubeconfig(
      [
        {
          path: '/etc/kube/config',
          content: config('server: https://10.0.0.1:6443\ncertificate-authority: pki/ca.crt', 'token: abc'),
        },
      ],
      fs.read,
    );
    expect(endpoint.server.href).to.equal('https://10.0.0.1:6443/');
    expect(String(endpoint.tls.ca)).to.equal('CA');
    expect(endpoint.tls.rejectUnauthorized).to.equal(true);
    expect(endpoint.credentials).to.deep.equal({ type: 'token', token: 'abc' });
  });

  it('takes inline data, a client certificate, tls-server-name and insecure-skip-tls-verify', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const endpoint = endpointFromKubeconfig(
      [
        {
          path: '/k',
          content: config(
            `server: https://h\ncertificate-authority-data: ${b64('CA')}\ntls-server-name: api.internal\ninsecure-skip-tls-verify: true`,
            `client-certificate-data: ${b64('CERT')}\nclient-key-data: ${b64('KEY')}`,
          ),
        },
      ],
      files({}).read,
    );
    expect(String(endpoint.tls.ca)).to.equal('CA');
    expect(String(endpoint.tls.cert)).to.equal('CERT');
    expect(String(endpoint.tls.key)).to.equal('KEY');
    expect(endpoint.tls.servername).to.equal('api.internal');
    expect(endpoint.tls.rejectUnauthorized).to.equal(false);
    expect(endpoint.credentials).to.deep.equal({ type: 'none' });
  });

  it('reads certificate files and a token file relative to the kubeconfig, basic auth as given', () => {
    const fs = files({ '/cfg/c.crt': 'CERT', '/cfg/c.key': 'KEY' });
    const certs = endpointFromKubeconfig(
      [
        {
          path: '/cfg/kubeconfig',
          content: config('server: https://h', 'client-certificate: c.crt\nclient-key: c.key\ntokenFile: tok'),
        },
      ],
      fs.read,
    );
    expect(String(certs.tls.cert)).to.equal('CERT');
    expect(certs.credentials).to.deep.equal({ type: 'token-file', path: '/cfg/tok' });
    const basic = endpointFromKubeconfig(
      [{ path: '/cfg/kubeconfig', content: config('server: http://h:8080', 'username: admin\npassword: pw') }],
      fs.read,
    );
    expect(basic.credentials).to.deep.equal({ type: 'basic', username: 'admin', password: 'pw' });
  });

  it('parses an exec credential plugin', () => {
    const endpoint = endpointFromKubeconfig(
      [
        {
          path: '/cfg/kubeconfig',
          content: config(
            'server: https://h',
            [
              'exec:',
              '  apiVersion: client.authentication.k8s.io/v1beta1',
              '  command: ./get-token',
              '  args: [--cluster, prod]',
              '  env: [{name: REGION, value: eu}]',
            ].join('\n'),
          ),
        },
      ],
      files({}).read,
    );
    expect(endpoint.credentials).to.deep.equal({
      type: 'exec',
      plugin: {
        command: './get-token',
        args: ['--cluster', 'prod'],
        env: { REGION: 'eu' },
        apiVersion: 'client.authentication.k8s.io/v1beta1',
        baseDir: '/cfg',
      },
    });
  });

  it('merges several files as kubectl does: the first definition and the first current-context win', () => {
    const first = `clusters:\n- name: c\n  cluster: {server: 'https://first'}\ncurrent-context: x\n`;
    const second = config('server: https://second', 'token: t2', '').replace(
      'current-context: x',
      'current-context: other',
    );
    const endpoint = endpointFromKubeconfig(
      [
        { path: '/a', content: first },
        { path: '/b', content: second },
      ],
      files({}).read,
    );
    expect(endpoint.server.host).to.equal('first');
    expect(endpoint.credentials).to.deep.equal({ type: 'token', token: 't2' });
  });

  const refusals: [string, string, string][] = [
    [
      'no current context',
      config('server: https://h', 'token: t').replace('current-context: x', ''),
      'no Kubernetes cluster configured: set --kubeconfig, run in a pod, or use local mode (--spc-dir)',
    ],
    ['no server', config('insecure-skip-tls-verify: true', 'token: t'), 'kubeconfig: clusters[c].server is missing'],
    [
      'a server that is no URL',
      config('server: h:6443', 'token: t'),
      'kubeconfig: clusters[c].server must be an https:// or http:// URL',
    ],
    [
      'a proxy',
      config('server: https://h\nproxy-url: http://proxy:3128', 'token: t'),
      'kubeconfig: clusters[c].proxy-url is not supported; the driver connects to the API server directly',
    ],
    [
      'an auth-provider',
      config('server: https://h', 'auth-provider: {name: oidc}'),
      'kubeconfig: users[u].auth-provider is not supported (client-go removed the built-in providers); use an exec credential plugin',
    ],
    [
      'a certificate without key',
      config('server: https://h', `client-certificate-data: ${Buffer.from('C').toString('base64')}`),
      'kubeconfig: users[u] needs both a client certificate and a client key',
    ],
    [
      'an exec plugin without command',
      config('server: https://h', 'exec: {args: [x]}'),
      'kubeconfig: users[u].exec.command is missing',
    ],
    [
      'a token that is not a string',
      config('server: https://h', 'token: [1]'),
      'kubeconfig: users[u].token must be a string',
    ],
  ];
  for (const [what, content, message] of refusals) {
    it(`refuses ${what}`, () => {
      expect(() => endpointFromKubeconfig([{ path: '/k', content }], files({}).read)).to.throw(message);
    });
  }

  it('refuses a context naming a user that is not defined (as client-go), instead of connecting anonymously', () => {
    const content = config('server: https://h', 'token: t').replace(
      'context: {cluster: c, user: u}',
      'context: {cluster: c, user: ghost}',
    );
    expect(() => endpointFromKubeconfig([{ path: '/k', content }], files({}).read)).to.throw(
      'kubeconfig: context x names user ghost, which is not defined',
    );
  });

  it('reports a YAML error by line and column, never quoting the line (it may hold a token)', () => {
    const content = config('server: https://h', 'token: "sekret-token').concat('\n');
    let message = '';
    try {
      endpointFromKubeconfig([{ path: '/k', content }], files({}).read);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.match(/^kubeconfig \/k is not valid YAML \(line \d+, column \d+\)$/);
    expect(message).not.to.include('sekret');
  });

  it("resolves relative paths against the kubeconfig's folder even when the kubeconfig path is relative", () => {
    const endpoint = endpointFromKubeconfig(
      [{ path: 'cfg/kubeconfig', content: config('server: https://h', 'exec: {command: ./plugin.sh}') }],
      files({}).read,
    );
    expect(endpoint.credentials).to.have.nested.property('plugin.baseDir', join(process.cwd(), 'cfg'));
  });

  it('names a CA file that cannot be read, and the entry that names it', () => {
    expect(() =>
      endpointFromKubeconfig(
        [{ path: '/k', content: config('server: https://h\ncertificate-authority: /nope/ca.crt', 'token: t') }],
        files({}).read,
      ),
    ).to.throw('kubeconfig: clusters[c].certificate-authority /nope/ca.crt cannot be read (ENOENT)');
  });
});

describe('in-cluster endpoint', () => {
  const fs = files({ '/sa/token': 'T', '/sa/ca.crt': 'CA' });

  it('uses KUBERNETES_SERVICE_HOST/PORT, the CA and the token file (re-read as it rotates)', () => {
    const endpoint = inClusterEndpoint(
      { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
      '/sa',
      fs.read,
    );
    expect(endpoint.server.href).to.equal('https://10.96.0.1/');
    expect(String(endpoint.tls.ca)).to.equal('CA');
    expect(endpoint.credentials).to.deep.equal({ type: 'token-file', path: '/sa/token' });
  });

  it('brackets an IPv6 service address', () => {
    expect(
      inClusterEndpoint({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, '/sa', fs.read).server
        .host,
    ).to.equal('[fd00::1]:6443');
  });

  it('fails naming the token file when the service-account token is not mounted', () => {
    expect(() => inClusterEndpoint({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, '/none', fs.read)).to.throw(
      "open '/none/token'",
    );
  });
});

describe('resolveEndpoint: where the driver finds its cluster', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-kubeconfig-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('skips KUBECONFIG entries that do not exist, and refuses when none does (never localhost:8080)', async () => {
    const present = join(dir, 'present');
    await writeFile(present, config('server: https://from-env', 'token: t'));
    expect(resolveEndpoint('', { KUBECONFIG: `${join(dir, 'missing')}:${present}` }).server.host).to.equal('from-env');
    expect(() => resolveEndpoint('', { KUBECONFIG: join(dir, 'missing') })).to.throw(
      `no Kubernetes cluster configured (${join(dir, 'missing')} does not exist, not in a pod): set --kubeconfig, or use local mode with --spc-dir`,
    );
    expect(() => resolveEndpoint('', {}, dir)).to.throw(
      `no Kubernetes cluster configured (${join(dir, '.kube', 'config')} does not exist`,
    );
  });

  it('reads --kubeconfig even in a pod, and names the flag and the file when it cannot be read', () => {
    expect(() => resolveEndpoint(join(dir, 'absent'), { KUBERNETES_SERVICE_HOST: '10.96.0.1' })).to.throw(
      `--kubeconfig ${join(dir, 'absent')} does not exist`,
    );
    expect(() => resolveEndpoint(dir, {})).to.throw(`cannot read --kubeconfig ${dir} (EISDIR)`);
  });
});
