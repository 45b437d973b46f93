// The azure provider: Azure Key Vault secrets, keys and certificates for a pod, through
// the Azure SDK, with the pod's workload identity, a service principal from the
// nodePublishSecretRef, or the node's managed identity (parameters.ts decides which).
// A Mount is parse → resolve versions → (nothing changed: answer from properties) →
// read values → render files. Reads of one identity are shared between Mounts for
// --read-cache-window (framework read-cache.ts), so many pods of one workload rotating
// together cost about one Key Vault read per object.
import type { Agent } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { boundedAll, MOUNT_CONCURRENCY } from '../framework/bounded-all.js';
import type {
  ProviderCallContext,
  ProviderMountRequest,
  ProviderMountResult,
  SecretsProvider,
} from '../framework/provider.js';
import { logChangedObjects } from '../framework/object-versions.js';
import { ReadCache } from '../framework/read-cache.js';
import type { AzureMetrics } from './azure-metrics.js';
import { isKnownAuthority } from './cloud.js';
import { ConnectToAgent } from './connect-to.js';
import { readEnvironmentFile } from './environment-file.js';
import { IdentityCache, type Identity } from './identities.js';
import { planEntries, unchangedFromProperties, uniqueVersions } from './mount-plan.js';
import { REMEMBERED_TARGETS, TargetRenderings } from '../framework/render-fingerprint.js';
import { listRefusalMemory, MountReads, type Read, type SharedReads } from './mount-reads.js';
import { mountFiles, renderEntry, type FetchedObject } from './object-files.js';
import { parseAzureMount } from './parameters.js';
import type { AzureSettings } from './settings.js';
import type { RetryClock } from './throttle-retry.js';
import { invalidParameter } from './azure-errors.js';

/** What the provider needs besides its settings. */
export interface AzureProviderDeps {
  readonly metrics: AzureMetrics;
  readonly clock?: RetryClock;
}

const realClock: RetryClock = { now: Date.now, sleep: (ms, signal) => sleep(ms, undefined, { signal }) };

function weigh(read: Read): number {
  if (read === 'too-many-pages') return 16;
  if (Array.isArray(read)) return 64 * read.length;
  if ('value' in read) return read.value.length + 128;
  if ('cer' in read) return read.cer.length + 128;
  return 1024;
}

/** Key Vault through the Azure SDK, one credential per identity. */
export class AzureProvider implements SecretsProvider {
  readonly name = 'azure';
  private readonly identities: IdentityCache;
  private readonly shared: SharedReads;
  /** The rendering each target was last answered with (for properties-only rotations). */
  private readonly renderings = new TargetRenderings();

  constructor(
    private readonly settings: AzureSettings,
    deps: AzureProviderDeps,
  ) {
    const agent: Agent | undefined = settings.connectTo.length > 0 ? new ConnectToAgent(settings.connectTo) : undefined;
    this.identities = new IdentityCache(settings.identityCacheSize, {
      agent,
      userAgent: settings.customUserAgent,
      count: (operation, status) => deps.metrics.request(operation, status),
    });
    const clock = deps.clock ?? realClock;
    this.shared = {
      cache: new ReadCache<Read>({
        windowMs: settings.readCacheWindowMs,
        weigh,
        hooks: {
          hit: () => deps.metrics.read('hit'),
          miss: () => deps.metrics.read('miss'),
          coalesced: () => deps.metrics.read('coalesced'),
        },
      }),
      clock,
      listRefusals: listRefusalMemory(clock, REMEMBERED_TARGETS),
    };
  }

  /** The Mount's reads: its identity's Key Vault reader, shared with Mounts of the same identity and vault. */
  private mountReads(config: ReturnType<typeof parseAzureMount>, ctx: ProviderCallContext): MountReads {
    const identity = this.identities.identity(config.auth, {
      tenantId: config.tenantId,
      authorityHost: config.cloud.authorityHost,
      customAuthority: !isKnownAuthority(config.cloud.authorityHost),
      serviceAccount: { namespace: config.pod.namespace, name: config.pod.serviceAccountName ?? '' },
    });
    const idKey = `${JSON.stringify([identity.kind, config.vaultUrl])}|${this.identityTag(identity)}`;
    return new MountReads(
      this.shared,
      identity.reader(config.vaultUrl),
      idKey,
      { keyvaultName: config.keyvaultName, identityKind: identity.kind },
      ctx.deadline?.getTime(),
      ctx.logger,
    );
  }

  async mount(request: ProviderMountRequest, ctx: ProviderCallContext): Promise<ProviderMountResult> {
    const config = parseAzureMount(request.attributes, request.secrets, {
      cloudName: this.settings.cloudName,
      environmentFilePath: this.settings.environmentFilePath,
      readEnvironmentFile,
    });
    for (const warning of config.warnings) ctx.logger.warn(`azure provider: ${warning}`);
    if (config.objects.length === 0) {
      // Upstream answers no object versions, which both drivers refuse with a vaguer error.
      throw invalidParameter('objects lists no object (objects.array is empty)');
    }
    const reads = this.mountReads(config, ctx);
    const { fingerprint, sameRendering } = this.renderings.check(request);
    const planned = (
      await boundedAll(
        config.objects,
        MOUNT_CONCURRENCY,
        (object, signal) =>
          planEntries(object, sameRendering ? request.currentObjectVersions : new Map(), reads.lister(signal)),
        ctx.signal,
      )
    ).flat();
    if (sameRendering && unchangedFromProperties(planned, request.currentObjectVersions)) {
      ctx.logger.debug('azure provider: no object has a new version; answered from version properties', {
        objects: planned.length,
      });
      return { files: [], objectVersions: uniqueVersions(planned) };
    }
    const fetched = await boundedAll(
      planned,
      MOUNT_CONCURRENCY,
      (entry, signal) => reads.get(entry, signal),
      ctx.signal,
    );
    const renderOptions = {
      constructPemChain: this.settings.constructPemChain,
      writeCertAndKeyInSeparateFiles: this.settings.writeCertAndKeyInSeparateFiles,
    };
    const rendered = planned.map((entry, i) => ({
      entry,
      contents: renderEntry(entry, fetched[i] as FetchedObject, renderOptions),
    }));
    const files = mountFiles(rendered, request.permission);
    const objectVersions = uniqueVersions(
      planned.map((entry, i) => ({ id: entry.id, version: (fetched[i] as FetchedObject).version })),
    );
    logChangedObjects(ctx.logger, request.currentObjectVersions, objectVersions, 'objectId');
    this.renderings.answered(request.targetPath, fingerprint);
    return { files, objectVersions };
  }

  /** A tag that tells identities apart in the read cache without naming them. */
  private readonly tags = new WeakMap<Identity, string>();
  private nextTag = 0;
  private identityTag(identity: Identity): string {
    let tag = this.tags.get(identity);
    if (tag === undefined) {
      tag = String(this.nextTag++);
      this.tags.set(identity, tag);
    }
    return tag;
  }
}
