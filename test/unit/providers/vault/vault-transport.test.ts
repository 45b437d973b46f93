import { expect } from 'chai';
import { vaultError, type VaultFailure, type VaultOperation } from '../../../../providers/vault/vault-errors.js';
import { redirectStep, type RedirectStep } from '../../../../providers/vault/vault-transport.js';

describe('vault transport: which redirects are followed', () => {
  const from = new URL('http://vault:8200/v1/secret/data/db');
  const follow = (href: string): RedirectStep => ({ kind: 'follow', url: new URL(href) });
  const refuse = (
    status: number,
    target: string | undefined,
    why: 'other-origin' | 'repeated' | 'no-location',
  ): RedirectStep => ({ kind: 'refuse', failure: { type: 'redirect', status, target, why } });
  // [case, from, status, Location, redirects already followed, step]
  const table: [string, URL, number, string | undefined, number, RedirectStep][] = [
    ['an answer', from, 200, undefined, 0, { kind: 'answer' }],
    ['a 404', from, 404, undefined, 0, { kind: 'answer' }],
    [
      "303 and 308 are not followed (nor by Vault's Go client): node-vault reports the status",
      from,
      303,
      '/v1/x',
      0,
      { kind: 'answer' },
    ],
    ['308', from, 308, '/v1/x', 0, { kind: 'answer' }],
    [
      '307 to a path on the same origin',
      from,
      307,
      '/moved/v1/secret/data/db',
      0,
      follow('http://vault:8200/moved/v1/secret/data/db'),
    ],
    ['301 and 302 too', from, 301, 'http://vault:8200/v1/b', 0, follow('http://vault:8200/v1/b')],
    [
      'the default port spelled out is the same origin',
      new URL('https://vault/v1/a'),
      302,
      'https://vault:443/v1/b',
      0,
      follow('https://vault/v1/b'),
    ],
    [
      'credentials in the Location are dropped',
      from,
      307,
      'http://u:p@vault:8200/v1/b',
      0,
      follow('http://vault:8200/v1/b'),
    ],
    [
      'another host',
      from,
      307,
      'http://active.vault:8200/v1/secret/data/db',
      0,
      refuse(307, 'http://active.vault:8200', 'other-origin'),
    ],
    ['another port', from, 307, 'http://vault:8201/v1/x', 0, refuse(307, 'http://vault:8201', 'other-origin')],
    [
      'https to http on the same host and port (a downgrade)',
      new URL('https://vault:8200/v1/a'),
      302,
      'http://vault:8200/v1/a',
      0,
      refuse(302, 'http://vault:8200', 'other-origin'),
    ],
    [
      'http to https is another origin too',
      from,
      301,
      'https://vault:8200/v1/a',
      0,
      refuse(301, 'https://vault:8200', 'other-origin'),
    ],
    [
      'a second redirect, even within the origin',
      from,
      307,
      '/v1/again',
      1,
      refuse(307, 'http://vault:8200', 'repeated'),
    ],
    ['no Location', from, 307, undefined, 0, refuse(307, undefined, 'no-location')],
    ['a Location that is not a URL', from, 307, 'http://[nope', 0, refuse(307, undefined, 'no-location')],
    ['a Location that is not http(s)', from, 302, 'file:///etc/passwd', 0, refuse(302, undefined, 'no-location')],
  ];
  for (const [name, base, status, location, followed, expected] of table) {
    it(`${name}: ${expected.kind}`, () => {
      const step = redirectStep(base, status, location, followed);
      expect(step.kind === 'follow' ? { kind: step.kind, url: step.url.href } : step).to.deep.equal(
        expected.kind === 'follow' ? { kind: 'follow', url: expected.url.href } : expected,
      );
    });
  }
});

describe('vault transport errors as gRPC codes', () => {
  const read: VaultOperation = {
    action: 'read',
    path: 'secret/data/db',
    roleName: 'app',
    vaultAddress: 'https://v:8200',
    vaultNamespace: undefined,
  };
  const login: VaultOperation = { ...read, action: 'login', path: 'auth/kubernetes/login' };
  const table: [VaultFailure, VaultOperation, string, string, string][] = [
    [
      { type: 'redirect', status: 307, target: 'https://active:8200', why: 'other-origin' },
      login,
      'unavailable',
      'VaultRedirectRefused',
      'Vault at https://v:8200 redirected login "auth/kubernetes/login" (HTTP 307) to another origin, https://active:8200: not followed, as the Vault token or the login\'s service-account token would go there; set vaultAddress to the node that answers (the active one, or an address that reaches it)',
    ],
    [
      { type: 'redirect', status: 302, target: 'https://v:8200', why: 'repeated' },
      read,
      'unavailable',
      'VaultRedirectRefused',
      'Vault at https://v:8200 redirected read "secret/data/db" (HTTP 302) a second time, to https://v:8200: only one redirect is followed',
    ],
    [
      { type: 'redirect', status: 301, target: undefined, why: 'no-location' },
      read,
      'unavailable',
      'VaultRedirectRefused',
      'Vault at https://v:8200 redirected read "secret/data/db" (HTTP 301) without a usable Location',
    ],
    [
      { type: 'too-large', limit: 4194304 },
      read,
      'resource-exhausted',
      'VaultResponseTooLarge',
      'Vault at https://v:8200 answered read "secret/data/db" with more than 4194304 bytes (--vault-max-response-bytes)',
    ],
  ];
  for (const [failure, op, kind, reason, message] of table) {
    it(`${failure.type}${failure.type === 'redirect' ? ` (${failure.why})` : ''} → ${kind} ${reason}`, () => {
      const e = vaultError(failure, op);
      expect([e.kind, e.reason, e.message]).to.deep.equal([kind, reason, message]);
    });
  }
});
