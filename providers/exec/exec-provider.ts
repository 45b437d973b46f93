// The exec provider: each object's file is the stdout of a helper program from
// --helpers-dir (the "two dozen lines of shell" per kind of vault of Kubernetes' FUSE
// flexVolume proposal "Providing external secrets to Pods"), called with
// the pod's identity as argv and the object's parameters in a clean environment. A Mount
// asks every object's helper for its `version` first, then `get`s every object. A
// rotation (class as last answered) gets only the objects without helper versions first:
// when every version, helper's or digest, is as mounted, it answers with no files (the
// driver keeps the mounted ones) and the other objects get no `get` at all. All
// objects or none: one failure fails the Mount, and the helpers still running are killed.
import { SscError } from '../../lib/errors.js';
import { boundedAll, MOUNT_CONCURRENCY } from '../framework/bounded-all.js';
import { hmacVersion, versionKey, type HmacKey } from '../framework/hmac-version.js';
import type {
  ProviderCallContext,
  ProviderFile,
  ProviderMountRequest,
  ProviderMountResult,
  SecretsProvider,
} from '../framework/provider.js';
import { logChangedObjects, mountedAsIs } from '../framework/object-versions.js';
import { TargetRenderings } from '../framework/render-fingerprint.js';
import { contentFrom, versionFrom, type CallContext } from './helper-outcome.js';
import { resolveHelper } from './helper-path.js';
import { runHelper, type HelperOutcome, type HelperRun } from './helper-runner.js';
import { HelperSlots } from './helper-slots.js';
import {
  helperArguments,
  helperEnvironment,
  podIdentity,
  secretValues,
  tokensToPass,
  type HelperOperation,
  type PodIdentity,
} from './invocation.js';
import { callTimeoutMs } from '../framework/call-deadline.js';
import { parseExecParameters, type ExecObject } from './parameters.js';
import type { ExecSettings } from './settings.js';

/** The files of a Mount: each object's contents with its own mode, or the Mount's. */
function filesOf(
  objects: readonly ExecObject[],
  contents: readonly (Buffer | undefined)[],
  permission: number,
): ProviderFile[] {
  return objects.map((object, i) => ({
    path: object.objectName,
    mode: object.filePermission ?? permission,
    contents: contents[i] as Buffer,
  }));
}

/** The version of content from a helper without version support: keyed, bound to the object and helper. */
export function digestVersion(key: HmacKey, object: ExecObject, contents: Buffer): string {
  return hmacVersion(key, contents, `exec\0${object.helper}\0${object.objectName}`);
}

/** What the provider runs helpers with; tests may pass their own runner. */
export type HelperRunner = (run: HelperRun) => Promise<HelperOutcome>;

/** Helper programs as the secret source. */
export class ExecProvider implements SecretsProvider {
  readonly name = 'exec';
  private readonly slots: HelperSlots;
  /** The rendering each target was last fully answered with. */
  private readonly renderings = new TargetRenderings();
  /** The HMAC key, converted once (see versionKey). */
  private readonly versionKey: HmacKey;

  constructor(
    private readonly settings: ExecSettings,
    hmacKey: Buffer,
    private readonly runner: HelperRunner = runHelper,
  ) {
    this.slots = new HelperSlots(settings.maxConcurrentHelpers);
    this.versionKey = versionKey(hmacKey);
  }

  async mount(request: ProviderMountRequest, ctx: ProviderCallContext): Promise<ProviderMountResult> {
    const params = parseExecParameters(request.attributes);
    for (const warning of params.warnings) ctx.logger.warn(`exec provider: ${warning}`);
    const pod = podIdentity(request.attributes);
    const tokens = tokensToPass(request.attributes, params.passServiceAccountTokens);
    const { fingerprint, sameRendering } = this.renderings.check(request);
    const ids = params.objects.map((o) => o.objectName);
    const call = (object: ExecObject, operation: HelperOperation, signal: AbortSignal) =>
      this.call(object, operation, pod, tokens, request.secrets, ctx, signal);

    const versions = await boundedAll(
      params.objects,
      MOUNT_CONCURRENCY,
      async (object, signal) => {
        const { outcome, context } = await call(object, 'version', signal);
        return versionFrom(outcome, context);
      },
      ctx.signal,
    );
    if (sameRendering && mountedAsIs(ids, versions, request.currentObjectVersions)) {
      ctx.logger.debug('exec provider: every helper reports the mounted version; answered without get', {
        objects: ids.length,
      });
      return { files: [], objectVersions: ids.map((id, i) => ({ id, version: versions[i] as string })) };
    }
    const contents: (Buffer | undefined)[] = new Array<Buffer | undefined>(ids.length);
    const fetch = async (indexes: readonly number[]) => {
      const got = await boundedAll(
        indexes,
        MOUNT_CONCURRENCY,
        async (i, signal) => {
          const object = params.objects[i] as ExecObject;
          const { outcome, context } = await call(object, 'get', signal);
          return contentFrom(outcome, context);
        },
        ctx.signal,
      );
      indexes.forEach((i, n) => {
        contents[i] = got[n];
      });
    };
    const digested = (i: number) =>
      versions[i] ??
      (contents[i] === undefined
        ? undefined
        : digestVersion(this.versionKey, params.objects[i] as ExecObject, contents[i]));
    const all = ids.map((_, i) => i);
    if (sameRendering && request.currentObjectVersions.size === ids.length) {
      // A rotation: the objects without helper versions are read first; when their
      // digests are as mounted too, the others need no get.
      await fetch(all.filter((i) => versions[i] === undefined));
      if (mountedAsIs(ids, all.map(digested), request.currentObjectVersions)) {
        ctx.logger.debug('exec provider: every object is as mounted; answered without files', { objects: ids.length });
        return { files: [], objectVersions: ids.map((id, i) => ({ id, version: digested(i) as string })) };
      }
    }
    await fetch(all.filter((i) => contents[i] === undefined));
    const objectVersions = ids.map((id, i) => ({ id, version: digested(i) as string }));
    logChangedObjects(ctx.logger, request.currentObjectVersions, objectVersions);
    this.renderings.answered(request.targetPath, fingerprint);
    return { files: filesOf(params.objects, contents, request.permission), objectVersions };
  }

  /** One helper call: resolve, wait for a slot, run within the time left. */
  private async call(
    object: ExecObject,
    operation: HelperOperation,
    pod: PodIdentity,
    tokens: string | undefined,
    secrets: Readonly<Record<string, string>>,
    ctx: ProviderCallContext,
    signal: AbortSignal,
  ): Promise<{ outcome: HelperOutcome; context: CallContext }> {
    const path = await resolveHelper(this.settings.helpersDir, object.helper);
    return this.slots.run(signal, async () => {
      const timeoutMs = callTimeoutMs(ctx.deadline?.getTime(), Date.now(), this.settings.helperTimeoutMs);
      const context: CallContext = {
        operation,
        objectName: object.objectName,
        helper: object.helper,
        timeoutMs: Math.max(0, Math.round(timeoutMs)),
        maxOutputBytes: this.settings.maxOutputBytes,
        secrets: secretValues(object, secrets, tokens),
      };
      if (timeoutMs <= 0) {
        throw new SscError(
          'deadline-exceeded',
          `exec provider: no time left before the Mount's deadline to run helper for ${operation} of ${JSON.stringify(object.objectName).slice(0, 130)}`,
          { reason: 'HelperTimeout' },
        );
      }
      const started = Date.now();
      const outcome = await this.runner({
        path,
        args: helperArguments(operation, object, pod),
        env: helperEnvironment(object, tokens),
        timeoutMs,
        maxOutputBytes: this.settings.maxOutputBytes,
        signal,
      });
      ctx.logger.debug('exec provider: helper ran', {
        helper: object.helper,
        operation,
        objectName: object.objectName,
        ms: Date.now() - started,
        outcome: outcome.kind,
        exitCode: outcome.kind === 'exited' ? outcome.code : undefined,
      });
      return { outcome, context };
    });
  }
}
