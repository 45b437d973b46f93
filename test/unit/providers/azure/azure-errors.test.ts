import { expect } from 'chai';
import { aadstsCode, keyVaultError, type ReadContext } from '../../../../providers/azure/azure-errors.js';

const context: ReadContext = {
  objectType: 'secret',
  objectName: 'db-password',
  objectVersion: '',
  keyvaultName: 'kv1',
  identityKind: 'workload identity',
};

function restError(
  statusCode: number | undefined,
  code?: string,
  message = 'The user oid=123 secret value hunter2',
): Error {
  return Object.assign(new Error(message), { name: 'RestError', statusCode, code });
}

function authError(statusCode: number, error: string, description: string): Error {
  return Object.assign(new Error(description), {
    name: 'AuthenticationError',
    statusCode,
    errorResponse: { error, errorDescription: description },
  });
}

describe('azure keyVaultError', () => {
  const cases: [string, unknown, string, string, string[]][] = [
    [
      '404 SecretNotFound',
      restError(404, 'SecretNotFound'),
      'not-found',
      'KeyVaultObjectNotFound',
      ['secret "db-password"', 'key vault "kv1"', 'SecretNotFound'],
    ],
    [
      '403 Forbidden',
      restError(403, 'Forbidden'),
      'permission-denied',
      'KeyVaultAccessDenied',
      ['refused the workload identity', 'Forbidden'],
    ],
    ['401 Unauthorized', restError(401, 'Unauthorized'), 'permission-denied', 'KeyVaultAccessDenied', ['HTTP 401']],
    ['429 after retries', restError(429, 'Throttled'), 'resource-exhausted', 'KeyVaultThrottled', ['throttled']],
    ['500', restError(500, 'InternalError'), 'unavailable', 'KeyVaultUnavailable', ['HTTP 500']],
    [
      '400 BadParameter',
      restError(400, 'BadParameter'),
      'invalid-argument',
      'KeyVaultRequestRejected',
      ['BadParameter'],
    ],
    [
      'connection refused',
      restError(undefined, 'ECONNREFUSED'),
      'unavailable',
      'KeyVaultUnreachable',
      ['unreachable', 'ECONNREFUSED'],
    ],
    ['unknown name', restError(undefined, 'ENOTFOUND'), 'unavailable', 'KeyVaultUnreachable', ['ENOTFOUND']],
    [
      'certificate not trusted',
      restError(undefined, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'),
      'unavailable',
      'KeyVaultUnreachable',
      ['UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
    ],
    [
      'Entra refused the assertion',
      authError(
        400,
        'invalid_client',
        'AADSTS70021: No matching federated identity record found for presented assertion subject. token eyJhbGciOi',
      ),
      'permission-denied',
      'AuthenticationFailed',
      ['Microsoft Entra ID refused the workload identity', 'invalid_client AADSTS70021'],
    ],
    [
      "msal's refusal (AuthenticationRequiredError)",
      Object.assign(
        new Error(
          'invalid_client: Error(s): 7000215 - Timestamp: x - Description: AADSTS7000215: Invalid client secret provided. hunter2',
        ),
        { name: 'AuthenticationRequiredError' },
      ),
      'permission-denied',
      'AuthenticationFailed',
      ['refused the workload identity (invalid_client AADSTS7000215)'],
    ],
    [
      "msal's network failure",
      Object.assign(new Error('network_error: Network request failed'), { name: 'AuthenticationRequiredError' }),
      'unavailable',
      'TokenUnavailable',
      ['could not issue', 'network_error'],
    ],
    [
      'Entra down',
      authError(503, 'temporarily_unavailable', 'AADSTS90033: busy'),
      'unavailable',
      'TokenUnavailable',
      ['HTTP 503'],
    ],
    [
      'IMDS unreachable',
      Object.assign(new Error('ManagedIdentityCredential: connect ECONNREFUSED'), {
        name: 'CredentialUnavailableError',
      }),
      'unavailable',
      'TokenUnavailable',
      ['token endpoint is unavailable'],
    ],
    [
      'aborted',
      Object.assign(new Error('aborted'), { name: 'AbortError' }),
      'deadline-exceeded',
      'KeyVaultTimeout',
      ['cancelled'],
    ],
  ];
  for (const [name, err, kind, reason, includes] of cases) {
    it(`${name} → ${kind} ${reason}`, () => {
      const e = keyVaultError(err, context);
      expect([e.kind, e.reason]).to.deep.equal([kind, reason]);
      expect(e.message).to.match(/^azure provider: /);
      for (const text of includes) expect(e.message).to.include(text);
      // The service's and Entra's own words never pass through (they may carry values or tokens).
      expect(e.message).not.to.include('hunter2');
      expect(e.message).not.to.include('eyJhbGciOi');
      expect(e.message).not.to.include('oid=123');
    });
  }

  it('names a pinned version', () => {
    expect(keyVaultError(restError(404, 'SecretNotFound'), { ...context, objectVersion: 'abc123' }).message).to.include(
      'version "abc123"',
    );
  });

  it('reads only a leading AADSTS code', () => {
    expect([
      aadstsCode('AADSTS7000215: Invalid client secret'),
      aadstsCode('see AADSTS1'),
      aadstsCode(undefined),
    ]).to.deep.equal(['AADSTS7000215', undefined, undefined]);
  });
});
