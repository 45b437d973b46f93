// A throwaway certificate authority for TLS tests against real peers (OpenBao's TLS
// listener, mTLS client certificates): made with the openssl command in a temp dir, so
// tests exercise real PEM files the way a user's mounted CA and client certs would be.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Paths (all PEM) of a test CA, a server certificate and a client certificate it signed. */
export interface TestPki {
  readonly caCertPath: string;
  readonly caCertPem: string;
  readonly serverCertPath: string;
  readonly serverKeyPath: string;
  readonly clientCertPath: string;
  readonly clientKeyPath: string;
  /** The DNS name in the server certificate that is not `localhost` (for TLS server name tests). */
  readonly serverName: string;
}

async function openssl(dir: string, args: readonly string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

/** A P-256 key and a certificate for `cn` signed by the CA in `dir`, with the given X.509v3 extensions. */
async function issue(dir: string, name: string, cn: string, extensions: string): Promise<void> {
  await openssl(dir, [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${cn}`,
  ]);
  await writeFile(join(dir, `${name}.ext`), extensions);
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-sha256',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  ]);
}

/**
 * Writes a CA (`ca.pem`), a server certificate for `serverName`, `localhost` and
 * 127.0.0.1 (`server.pem`/`server.key`) and a client certificate (`client.pem`/`client.key`)
 * into `dir`; keys are unencrypted, valid for two days. `extraDnsNames` (wildcards allowed)
 * are added to the server certificate's SANs (the Azure stand-in serves many host names).
 */
export async function makeTestPki(
  dir: string,
  serverName = 'openbao.test',
  extraDnsNames: readonly string[] = [],
): Promise<TestPki> {
  await openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=secrets-store-csi test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await issue(
    dir,
    'server',
    serverName,
    `subjectAltName=${[serverName, ...extraDnsNames, 'localhost'].map((n) => `DNS:${n}`).join(',')},IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n`,
  );
  await issue(
    dir,
    'client',
    'secrets-store-csi test client',
    'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n',
  );
  return {
    caCertPath: join(dir, 'ca.pem'),
    caCertPem: await readFile(join(dir, 'ca.pem'), 'utf8'),
    serverCertPath: join(dir, 'server.pem'),
    serverKeyPath: join(dir, 'server.key'),
    clientCertPath: join(dir, 'client.pem'),
    clientKeyPath: join(dir, 'client.key'),
    serverName,
  };
}
