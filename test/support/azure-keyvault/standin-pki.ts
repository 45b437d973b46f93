// Stand-in TLS identity for Azure Key Vault and Microsoft Entra ID host names (test only; no
// real Azure can be reached here, see docs/conformance.md). One test CA and one server
// certificate whose SANs cover every login host and `*.<vault suffix>` of the clouds the
// stand-in serves, so clients verify the real names against the test CA (never with
// verification off). Made once per test process (openssl is the slow part of startup).
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestPki, type TestPki } from '../test-pki.js';
import { standInDnsNames } from './clouds.js';

/** The stand-in's CA and server certificate, loaded. */
export interface StandInPki extends TestPki {
  readonly serverCertPem: string;
  readonly serverKeyPem: string;
}

let shared: Promise<StandInPki> | undefined;

async function make(): Promise<StandInPki> {
  const dir = mkdtempSync(join(tmpdir(), 'akv-standin-pki-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const names = standInDnsNames();
  const pki = await makeTestPki(dir, names[0] as string, names.slice(1));
  return {
    ...pki,
    serverCertPem: await readFile(pki.serverCertPath, 'utf8'),
    serverKeyPem: await readFile(pki.serverKeyPath, 'utf8'),
  };
}

/** The process-wide stand-in PKI (made on first use; its files go when the process exits). */
export function standInPki(): Promise<StandInPki> {
  shared ??= make().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  return shared;
}
