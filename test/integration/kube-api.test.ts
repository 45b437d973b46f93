import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fromKubeError } from '../../driver/k8s/api-errors.js';
import { connectKubeApi, resolveEndpoint } from '../../driver/k8s/client/connect.js';
import { KubeApi } from '../../driver/k8s/client/kube-api.js';
import type { KubeList, KubeObject, Secret } from '../../driver/k8s/client/types.js';
import { corePath } from '../../driver/k8s/resource-paths.js';
import { WatchedCache } from '../../driver/k8s/watched-cache.js';
import { realSleep } from '../../lib/sleep.js';
import { createLogger } from '../../lib/logging/logger.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';

/** A TCP relay to the API server that counts the connections it carries. */
async function countingRelay(target: URL): Promise<{ server: Server; url: string; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(socket).add(upstream);
    socket.pipe(upstream).pipe(socket);
    const close = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `https://127.0.0.1:${(server.address() as { port: number }).port}`,
    connections: () => connections,
  };
}

describe("KubeApi, the driver's Kubernetes client, against a real kube-apiserver", function () {
  this.timeout(60_000);
  let cluster: KubeCluster;
  let dir: string;
  let adminToken: string;
  let ns: string;
  const opened: KubeApi[] = [];

  /** A kubeconfig for the test cluster with this user entry (YAML lines under `user:`). */
  async function kubeconfig(name: string, user: string[], server = cluster.url, ca = cluster.caFile): Promise<string> {
    const path = join(dir, name);
    await writeFile(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: test',
        '  cluster:',
        `    server: ${server}`,
        `    certificate-authority: ${ca}`,
        'users:',
        '- name: u',
        '  user:',
        ...user.map((l) => `    ${l}`),
        'contexts:',
        '- name: x',
        '  context: {cluster: test, user: u}',
        'current-context: x',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    return path;
  }

  function open(path: string, timeoutMs?: number): KubeApi {
    const api = connectKubeApi(path, {}, timeoutMs ? { timeoutMs } : {});
    opened.push(api);
    return api;
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    dir = await mkdtemp(join(cluster.dir, 'kube-api-'));
    adminToken = cluster.adminToken;
    ns = await createNamespace(cluster, 'kube-api');
  });
  after(async () => {
    for (const api of opened) api.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps one connection for many requests, sequential and concurrent (no TLS handshake per call)', async () => {
    const relay = await countingRelay(new URL(cluster.url));
    try {
      const api = open(await kubeconfig('relayed', [`token: ${adminToken}`], relay.url));
      for (let i = 0; i < 20; i++) await api.get(corePath('namespaces', undefined, ns));
      expect(relay.connections()).to.equal(1);
      await Promise.all(Array.from({ length: 40 }, () => api.get(corePath('namespaces', undefined, ns))));
      expect(relay.connections()).to.be.at.most(16);
    } finally {
      relay.server.close();
    }
  });

  it('reports an API refusal with its HTTP status and Status message, never the body', async () => {
    const api = open(await kubeconfig('admin', [`token: ${adminToken}`]));
    const err = await api.get<Secret>(corePath('secrets', ns, 'nope')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as { code?: unknown }).code).to.equal(404);
    expect(fromKubeError(err, `get Secret ${ns}/nope`).message).to.equal(
      `Kubernetes API refused to get Secret ${ns}/nope: HTTP 404 secrets "nope" not found`,
    );
  });

  it('tells its observer the method and status code of every request, "<error>" when no answer came', async () => {
    const seen: string[] = [];
    const observe = (method: string, code: string) => {
      seen.push(`${method} ${code}`);
    };
    const api = new KubeApi(resolveEndpoint(await kubeconfig('observed', [`token: ${adminToken}`]), {}), { observe });
    opened.push(api);
    await api.get(corePath('secrets', ns, 'nope')).catch(() => undefined);
    await api.create(corePath('secrets', ns), { metadata: { name: 'observed' }, stringData: { a: 'b' } });
    await api.delete(corePath('secrets', ns, 'observed'));
    const unreachable = new KubeApi(
      resolveEndpoint(await kubeconfig('observed-closed', [`token: ${adminToken}`], 'https://127.0.0.1:1'), {}),
      { observe },
    );
    await unreachable.get(corePath('namespaces')).catch(() => undefined);
    unreachable.close();
    expect(seen).to.deep.equal(['GET 404', 'POST 201', 'DELETE 200', 'GET <error>']);
  });

  it('authenticates with a client certificate from the kubeconfig', async () => {
    const pki = join(cluster.dir, 'pki');
    const sh = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    sh([
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'client.key',
      '-out',
      'client.csr',
      '-subj',
      '/CN=cert-user/O=system:masters',
    ]);
    sh([
      'x509',
      '-req',
      '-in',
      'client.csr',
      '-CA',
      join(pki, 'ca.crt'),
      '-CAkey',
      join(pki, 'ca.key'),
      '-set_serial',
      '0x1234',
      '-days',
      '1',
      '-out',
      'client.crt',
    ]);
    const api = open(await kubeconfig('cert', ['client-certificate: client.crt', 'client-key: client.key']));
    const list = await api.get<KubeList<KubeObject>>(corePath('secrets', ns));
    expect(list.items).to.be.an('array');
    // Without the certificate the same request is anonymous and refused.
    const anonymous = open(await kubeconfig('anonymous', []));
    expect(
      await anonymous.get(corePath('secrets', ns)).then(
        () => 0,
        (e: unknown) => (e as { code?: number }).code,
      ),
    ).to.be.oneOf([401, 403]);
  });

  it('refuses a server whose certificate another CA signed, naming the TLS verdict', async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-keyout',
        'other-ca.key',
        '-out',
        'other-ca.crt',
        '-subj',
        '/CN=other-ca',
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    const api = open(await kubeconfig('other-ca', [`token: ${adminToken}`], cluster.url, join(dir, 'other-ca.crt')));
    const err = await api.get(corePath('namespaces')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(fromKubeError(err, 'list Namespaces').message).to.match(
      /^Kubernetes API call failed while trying to list Namespaces \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\)$/,
    );
  });

  it('runs an exec credential plugin (relative to the kubeconfig) once, not per request', async () => {
    const runs = join(dir, 'plugin-runs');
    await writeFile(
      join(dir, 'plugin.sh'),
      [
        '#!/bin/sh',
        `echo run >> '${runs}'`,
        `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$TOKEN_FOR_TEST"`,
        '',
      ].join('\n'),
    );
    await chmod(join(dir, 'plugin.sh'), 0o755);
    const api = open(
      await kubeconfig('exec', [
        'exec:',
        '  apiVersion: client.authentication.k8s.io/v1',
        '  command: ./plugin.sh',
        '  env: [{name: TOKEN_FOR_TEST, value: ' + adminToken + '}]',
      ]),
    );
    await Promise.all(Array.from({ length: 5 }, () => api.get(corePath('namespaces', undefined, ns))));
    await api.get(corePath('namespaces', undefined, ns));
    expect((await readFile(runs, 'utf8')).trim().split('\n')).to.have.length(1);
  });

  it('re-reads a rotated token file after a 401 instead of failing until the next minute', async () => {
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, 'not-a-valid-token');
    const api = open(await kubeconfig('token-file', [`tokenFile: ${tokenFile}`]));
    expect(
      await api.get(corePath('namespaces', undefined, ns)).then(
        () => 0,
        (e: unknown) => (e as { code?: number }).code,
      ),
    ).to.equal(401);
    await writeFile(tokenFile, adminToken);
    expect((await api.get<KubeObject>(corePath('namespaces', undefined, ns))).metadata?.name).to.equal(ns);
  });

  it('gives up on a server that accepts and never answers, as unreachable (ETIMEDOUT)', async () => {
    const sockets: Socket[] = [];
    const blackHole = createServer((s) => {
      sockets.push(s);
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    try {
      const api = open(
        await kubeconfig(
          'black-hole',
          [`token: ${adminToken}`],
          `https://127.0.0.1:${(blackHole.address() as { port: number }).port}`,
        ),
        300,
      );
      const err = await api.get(corePath('namespaces')).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(fromKubeError(err, 'list Namespaces').message).to.equal(
        'Kubernetes API unreachable while trying to list Namespaces (ETIMEDOUT)',
      );
    } finally {
      for (const s of sockets) s.destroy();
      blackHole.close();
    }
  });

  it('tells its watch observer when a watch opens, each event with its type and bytes, and when it closes', async () => {
    const log: string[] = [];
    let bytes = 0;
    let wake: (() => void) | undefined;
    const observeWatch = {
      opened: (path: string) => log.push(`opened ${path}`),
      received: (path: string, type: string, n: number) => {
        log.push(`${type} ${path}`);
        bytes += n;
        wake?.();
      },
      closed: (path: string) => log.push(`closed ${path}`),
    };
    const api = new KubeApi(resolveEndpoint(await kubeconfig('watch-observed', [`token: ${adminToken}`]), {}), {
      observeWatch,
    });
    opened.push(api);
    const path = corePath('secrets', ns);
    const list = await api.get<KubeList<Secret>>(path, { labelSelector: 'observed=yes' });
    const stop = new AbortController();
    const events: string[] = [];
    const watching = api
      .watch(
        path,
        { labelSelector: 'observed=yes', resourceVersion: list.metadata?.resourceVersion },
        (e) => events.push(JSON.stringify(e)),
        stop.signal,
      )
      .catch((err: unknown) => err);
    const secret = { metadata: { name: 'watch-observed', labels: { observed: 'yes' } }, stringData: { v: 'x' } };
    await cluster.admin.core.createNamespacedSecret({ namespace: ns, body: secret });
    while (events.length === 0)
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    stop.abort(new Error('test done'));
    expect(((await watching) as Error).message).to.equal('test done');
    expect(log).to.deep.equal([`opened ${path}`, `ADDED ${path}`, `closed ${path}`]);
    // The event's JSON text and its newline, as the server sent it (JSON.stringify of the parsed event is the same text here).
    expect(bytes).to.equal(Buffer.byteLength(events[0]!) + 1);
  });

  it('keeps a WatchedCache in step with creates, updates and deletes', async () => {
    const api = open(await kubeconfig('watch', [`token: ${adminToken}`]));
    const cache = new WatchedCache<Secret>(
      api,
      { what: 'Secret', path: corePath('secrets', ns), labelSelector: 'watched=yes' },
      createLogger({ component: 'test', silent: true }),
      realSleep,
    );
    const seen: string[] = [];
    let wake: (() => void) | undefined;
    cache.onChange((s) => {
      seen.push(`${s.metadata?.name}=${Buffer.from(s.data?.['v'] ?? '', 'base64').toString()}`);
      wake?.();
    });
    const until = async (entry: string) => {
      while (!seen.includes(entry))
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
    };
    const body = (name: string, v: string) => ({ metadata: { name, labels: { watched: 'yes' } }, stringData: { v } });
    await cluster.admin.core.createNamespacedSecret({ namespace: ns, body: body('listed', '0') });
    cache.start();
    try {
      await until('listed=0');
      await cluster.admin.core.createNamespacedSecret({ namespace: ns, body: body('a', '1') });
      await until('a=1');
      await cluster.admin.core.replaceNamespacedSecret({ name: 'a', namespace: ns, body: body('a', '2') });
      await until('a=2');
      await cluster.admin.core.deleteNamespacedSecret({ name: 'listed', namespace: ns });
      await cluster.admin.core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: 'unlabelled' }, stringData: { v: 'x' } },
      });
      await cluster.admin.core.createNamespacedSecret({ namespace: ns, body: body('b', '3') });
      await until('b=3');
      // Events arrive in order: the delete before b; the unlabelled Secret never.
      expect(cache.get('listed', ns)).to.equal(undefined);
      expect(cache.get('unlabelled', ns)).to.equal(undefined);
      expect(cache.get('a', ns)?.data?.['v']).to.equal(Buffer.from('2').toString('base64'));
      expect(cache.get('a', ns)?.metadata).to.not.have.property('managedFields');
      expect(cache.everSynced).to.equal(true);
    } finally {
      await cache.stop();
    }
  });
});
