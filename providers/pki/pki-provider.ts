// The pki provider: a certificate per pod from the CA in the nodePublishSecretRef (or --ca-dir),
// renewed by rotation. Stateless apart from a per-target rendering fingerprint: the
// mounted serial (current_object_version) says when to renew (serial.ts, renewal.ts).
// A Mount is parse → load CA → decide → (keep: no files) or issue → files.
import { randomBytes } from 'node:crypto';
import type {
  ProviderCallContext,
  ProviderMountRequest,
  ProviderMountResult,
  SecretsProvider,
} from '../framework/provider.js';
import { TargetRenderings } from '../framework/render-fingerprint.js';
import { loadCa } from './ca.js';
import { caSource } from './ca-dir.js';
import { generateLeafKey, issueCertificate } from './issue.js';
import { parseCertificateRequest } from './parameters.js';
import type { PkiMetrics } from './pki-metrics.js';
import { OBJECT_IDS, renewalDecision } from './renewal.js';
import type { PkiSettings } from './settings.js';

/** What the provider needs besides its settings; tests inject the clock and randomness. */
export interface PkiProviderDeps {
  readonly metrics: PkiMetrics;
  /** Milliseconds since the epoch (default Date.now). */
  readonly now?: () => number;
  readonly random?: (size: number) => Buffer;
}

/** Issues and renews per-pod certificates. */
export class PkiProvider implements SecretsProvider {
  readonly name = 'pki';
  private readonly renderings = new TargetRenderings();
  private readonly now: () => number;
  private readonly random: (size: number) => Buffer;

  constructor(
    private readonly settings: PkiSettings,
    private readonly deps: PkiProviderDeps,
  ) {
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? randomBytes;
  }

  async mount(request: ProviderMountRequest, ctx: ProviderCallContext): Promise<ProviderMountResult> {
    const wanted = parseCertificateRequest(request.attributes, {
      minDurationSeconds: this.settings.minDurationSeconds,
    });
    const now = Math.floor(this.now() / 1000);
    const from = await caSource(request.secrets, request.attributes, this.settings.caDir);
    const ca = loadCa(from.data, now, from.source);
    const { fingerprint, sameRendering } = this.renderings.check(request);
    const decision = renewalDecision({
      current: request.currentObjectVersions,
      sameRendering,
      signerTag: ca.signerTag,
      bundleVersion: ca.bundleVersion,
      now,
    });
    this.deps.metrics.decided(decision);
    if (decision === 'keep') {
      ctx.logger.debug('pki provider: certificate not due for renewal; answered with no files');
      return {
        files: [],
        objectVersions: Object.values(OBJECT_IDS).map((id) => ({
          id,
          version: request.currentObjectVersions.get(id) as string,
        })),
      };
    }
    const key = await generateLeafKey(wanted.keyAlgorithm);
    const issued = issueCertificate(wanted, key, ca, now, this.random);
    ctx.logger.info('pki provider: certificate issued', {
      reason: decision,
      serial: issued.version,
      keyAlgorithm: wanted.keyAlgorithm,
      notAfter: new Date(issued.notAfter * 1000).toISOString(),
    });
    this.renderings.answered(request.targetPath, fingerprint);
    return {
      files: [
        { path: OBJECT_IDS.cert, mode: request.permission, contents: issued.chain },
        { path: OBJECT_IDS.key, mode: wanted.keyFilePermission ?? request.permission, contents: issued.key },
        { path: OBJECT_IDS.bundle, mode: request.permission, contents: ca.bundle },
      ],
      objectVersions: [
        { id: OBJECT_IDS.cert, version: issued.version },
        { id: OBJECT_IDS.key, version: issued.version },
        { id: OBJECT_IDS.bundle, version: ca.bundleVersion },
      ],
    };
  }
}
