// The vault provider's client pool with a counting factory in place of createVaultHttp:
// each client made stands for one read of its TLS files, each close for its sockets let go.
import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { MAX_IDLE_CLIENTS, VaultClientPool, type ClientTarget } from '../../../../providers/vault/client-pool.js';
import { VaultCallError, type VaultCall, type VaultHttp } from '../../../../providers/vault/vault-http.js';
import { deferred, rejection } from '../../../support/deferred.js';
import { NO_VAULT_TLS } from '../../../support/vault-fixtures.js';

const TARGET: ClientTarget = { vaultAddress: 'https://vault:8200', vaultNamespace: undefined, tls: NO_VAULT_TLS };
const CALL: VaultCall = { method: 'GET', path: 'secret/data/db', timeoutMs: 1_000 };
const IDENTITIES = 40;

/** A client as the factory made it: how it answers calls, and how often it was closed. */
class FakeClient implements VaultHttp {
  closes = 0;
  answer: () => Promise<unknown> = () => Promise.resolve('ok');
  constructor(readonly target: ClientTarget) {}
  call(): Promise<unknown> {
    return this.answer();
  }
  close(): void {
    this.closes++;
  }
}

describe('vault client pool: one client per address, namespace and TLS settings', () => {
  let made: FakeClient[];
  let failNext: boolean;
  let pool: VaultClientPool;
  beforeEach(() => {
    made = [];
    failNext = false;
    pool = new VaultClientPool((target) => {
      if (failNext) {
        failNext = false;
        return Promise.reject(new SscError('failed-precondition', 'cannot read the CA certificate /ca.pem (ENOENT)'));
      }
      const client = new FakeClient(target);
      made.push(client);
      return Promise.resolve(client);
    });
  });
  const handles = (n: number, target = TARGET) => Promise.all(Array.from({ length: n }, () => pool.handle(target)));
  /** A client is closed once it is made: lets those promise callbacks run. */
  const closesSettled = () => new Promise<void>((resolve) => setImmediate(resolve));
  const tlsFailure = () =>
    Promise.reject(new VaultCallError({ type: 'tls', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', message: 'x' }));

  it(`${IDENTITIES} identities of one target share one client (its TLS files read once); other settings get their own`, async () => {
    const all = await handles(IDENTITIES);
    expect(await Promise.all(all.map((h) => h.call(CALL)))).to.deep.equal(Array(IDENTITIES).fill('ok'));
    expect(made).to.have.length(1);
    await handles(2, { ...TARGET, tls: { ...NO_VAULT_TLS } });
    expect(made).to.have.length(1);
    await handles(2, { ...TARGET, vaultNamespace: 'team' });
    await handles(2, { ...TARGET, tls: { ...NO_VAULT_TLS, caCertPath: '/ca.pem' } });
    await handles(2, { ...TARGET, vaultAddress: 'https://other:8200' });
    expect(made.map((c) => [c.target.vaultAddress, c.target.vaultNamespace, c.target.tls.caCertPath])).to.deep.equal([
      ['https://vault:8200', undefined, undefined],
      ['https://vault:8200', 'team', undefined],
      ['https://vault:8200', undefined, '/ca.pem'],
      ['https://other:8200', undefined, undefined],
    ]);
  });

  it('a TLS failure seen by every identity retires the client once: the next calls make one new client for all', async () => {
    const all = await handles(IDENTITIES);
    const old = made[0] as FakeClient;
    old.answer = tlsFailure;
    const failures = await Promise.all(all.map((h) => rejection(h.call(CALL))));
    expect(failures.every((e) => e instanceof VaultCallError)).to.equal(true);
    expect(await Promise.all(all.map((h) => h.call(CALL)))).to.deep.equal(Array(IDENTITIES).fill('ok'));
    expect(made).to.have.length(2);
    await closesSettled();
    expect(old.closes).to.equal(1);
    expect((made[1] as FakeClient).closes).to.equal(0);
  });

  it('a retired client is closed only once its calls in flight end; their late TLS failures retire no newer client', async () => {
    const [a, b] = (await handles(2)) as [VaultHttp, VaultHttp];
    const old = made[0] as FakeClient;
    const slow = deferred<unknown>();
    const answers = [() => slow.promise, tlsFailure];
    old.answer = () => (answers.shift() as () => Promise<unknown>)();
    const inFlight = rejection(a.call(CALL));
    await rejection(b.call(CALL));
    expect(await b.call(CALL)).to.equal('ok');
    await closesSettled();
    expect([made.length, old.closes]).to.deep.equal([2, 0]);
    slow.reject(new VaultCallError({ type: 'tls', code: 'ECONNRESET', message: 'late' }));
    expect(await inFlight).to.be.instanceOf(VaultCallError);
    await closesSettled();
    expect(old.closes).to.equal(1);
    expect(await a.call(CALL)).to.equal('ok');
    expect(made.map((c) => c.closes)).to.deep.equal([1, 0]);
  });

  it('a client that could not be made (unreadable file) is not kept: the next identity reads the files again', async () => {
    failNext = true;
    const err = await rejection(pool.handle(TARGET));
    expect((err as SscError).kind).to.equal('failed-precondition');
    expect(pool.size).to.equal(0);
    const h = await pool.handle(TARGET);
    expect(await h.call(CALL)).to.equal('ok');
    expect(made).to.have.length(1);
  });

  it(`a client nobody holds stays for reuse, among the ${MAX_IDLE_CLIENTS} let go last; one pushed out is closed`, async () => {
    const [h] = await handles(1);
    h?.close();
    h?.close();
    expect(await (await pool.handle(TARGET)).call(CALL)).to.equal('ok');
    expect(made).to.have.length(1);
    for (let i = 0; i <= MAX_IDLE_CLIENTS; i++) {
      const other = await pool.handle({ ...TARGET, vaultAddress: `https://vault-${i}:8200` });
      other.close();
    }
    await closesSettled();
    expect(made.map((c) => c.closes)).to.deep.equal([0, 1, ...Array<number>(MAX_IDLE_CLIENTS).fill(0)]);
  });

  it('a closed handle still serves the calls of its Mount, on the current client', async () => {
    const h = await pool.handle(TARGET);
    h.close();
    expect(await h.call(CALL)).to.equal('ok');
    expect(made).to.have.length(1);
  });
});
