// Service-account tokens signed by the test, as stand-ins for the ones kubelet mints for
// a CSIDriver's tokenRequests: RS256 JWTs with Kubernetes' claims, and the driver's
// `csi.storage.k8s.io/serviceAccount.tokens` attribute that carries them to a provider.
// Vault's JWT auth and the Entra stand-in's federated credentials verify them with the
// issuer's public key.
import { createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

/** The issuer Kubernetes puts in service-account tokens by default. */
export const KUBERNETES_ISSUER = 'https://kubernetes.default.svc';

/** Signs service-account tokens with its own fresh RSA key. */
export class ServiceAccountTokenIssuer {
  readonly publicKeyPem: string;
  readonly publicKey: KeyObject;
  private readonly privateKey: KeyObject;

  constructor(
    readonly issuer: string = KUBERNETES_ISSUER,
    readonly keyId = 'test',
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKey = privateKey;
    this.publicKey = publicKey;
    this.publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }

  /** A token for service account `namespace/name` and `audience`, valid for `ttlSeconds` (default 10 minutes). */
  token(serviceAccount: string, audience: string, ttlSeconds = 600): string {
    const now = Math.floor(Date.now() / 1000);
    const [ns, name] = serviceAccount.split('/');
    const claims = {
      iss: this.issuer,
      sub: `system:serviceaccount:${ns}:${name}`,
      aud: [audience],
      iat: now,
      nbf: now,
      exp: now + ttlSeconds,
      jti: randomBytes(8).toString('hex'),
    };
    const input = `${Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: this.keyId })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${input}.${createSign('RSA-SHA256').update(input).sign(this.privateKey).toString('base64url')}`;
  }
}

/** The driver's `csi.storage.k8s.io/serviceAccount.tokens` attribute holding `token` for `audience`. */
export function tokensAttribute(token: string, audience: string): string {
  return JSON.stringify({ [audience]: { token, expirationTimestamp: new Date(Date.now() + 600_000).toISOString() } });
}
