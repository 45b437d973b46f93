import { expect } from 'chai';
import { parseObjects, type VaultObject } from '../../../../providers/vault/objects.js';
import type { VaultCall, VaultHttp } from '../../../../providers/vault/vault-http.js';
import { MOUNT_INFO_TTL_MS, VaultSession, type SessionCall } from '../../../../providers/vault/vault-session.js';
import { TEST_VAULT_IDENTITY as ID } from '../../../support/vault-fixtures.js';

const CALL: SessionCall = { jwt: 'jwt', requestTimeoutMs: 10_000 };

function object(secretPath: string): VaultObject {
  return parseObjects(`- {objectName: a, secretPath: ${secretPath}, secretKey: password}`).objects[0] as VaultObject;
}

/**
 * A session on a test clock, talking to a stand-in Vault with a KV v2 mount at `secret`
 * and one at `secret/team` (the longer one must win), counting its mount lookups.
 */
function session() {
  let t = 1_700_000_000_000;
  const lookups: string[] = [];
  const reads: string[] = [];
  const http: VaultHttp = {
    call: async (c: VaultCall) => {
      if (c.path === 'auth/kubernetes/login') return { auth: { client_token: 'token', lease_duration: 86_400 } };
      if (c.path.startsWith('sys/internal/ui/mounts/')) {
        const path = c.path.slice('sys/internal/ui/mounts/'.length);
        lookups.push(path);
        const mount = path.startsWith('secret/team/') ? 'secret/team/' : 'secret/';
        return { data: { path: mount, type: 'kv', options: { version: '2' } } };
      }
      reads.push(c.path);
      return { data: { data: { password: 'pw' }, metadata: { version: 1 } } };
    },
  };
  return {
    s: new VaultSession(ID, http, () => t),
    lookups,
    reads,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe('vault session mount lookups (sys/internal/ui/mounts)', () => {
  it('trusts what Vault said about a mount for MOUNT_INFO_TTL_MS, then asks again', async () => {
    const { s, lookups, advance } = session();
    await s.read(object('secret/app'), CALL);
    advance(MOUNT_INFO_TTL_MS);
    await s.read(object('secret/other'), CALL); // under the same mount: no lookup
    expect(lookups).to.deep.equal(['secret/app']);
    advance(1);
    await s.read(object('secret/app'), CALL);
    expect(lookups).to.deep.equal(['secret/app', 'secret/app']);
  });

  it('uses the most specific mount a path is under', async () => {
    const { s, lookups, reads } = session();
    await s.read(object('secret/team/db'), CALL);
    await s.read(object('secret/app'), CALL);
    await s.read(object('secret/team/api'), CALL); // under both known mounts
    await s.read(object('secret/x'), CALL);
    expect(lookups).to.deep.equal(['secret/team/db', 'secret/app']);
    expect(reads).to.deep.equal(['secret/team/data/db', 'secret/data/app', 'secret/team/data/api', 'secret/data/x']);
  });
});
