import type { KubeObject, Secret } from '../driver/k8s/client/types.js';
import type { MintedToken, TokenSpec } from '../driver/k8s/token-requests.js';
import { parseSecretProviderClass, type SecretProviderClass } from '../driver/spc/secret-provider-class.js';
import type { MountRequest } from '../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse__Output } from '../proto/gen/v1alpha1/MountResponse.js';
import { statusMessage } from '../driver/k8s/api-errors.js';
import { printable } from '../lib/untrusted-text.js';
import { type ControllerPod, responseFiles, syncMountRequest, tokensJson } from './provider-fetch.js';
import type { SecretSync } from './secret-sync.js';
import {
  ownershipProblem,
  reservedKeyProblem,
  secretApplyBody,
  secretMatches,
  secretTypeProblem,
  syncedSecretData,
} from './synced-secret.js';
import type { HashInputs } from './sync-hash.js';
import { hasFailedCondition, Reasons } from './conditions.js';
import { sameStatus, type SyncOutcome, statusAfter } from './sync-status.js';

/** Most of an error's text kept in a condition or event. */
const MAX_MESSAGE = 1024;

/** The API and provider calls a reconcile makes (adapters in sync-ports.ts; fakes never: tests use real peers). */
export interface SyncPorts {
  /** The SecretProviderClass object, or undefined when it does not exist. */
  getClass(namespace: string, name: string): Promise<(KubeObject & { metadata?: { generation?: number } }) | undefined>;
  mint(spec: TokenSpec): Promise<MintedToken>;
  /**
   * The provider's answer to `request`, from a call started after `triggeredAt` (when the
   * reconcile was asked for, on the controller's monotonic clock): possibly one made for
   * another SecretSync with the identical request (shared-mount.ts).
   */
  mount(provider: string, request: MountRequest, triggeredAt: number): Promise<MountResponse__Output>;
  /** The Secret, or undefined when it does not exist (from the watch of managed Secrets when it has listed). */
  getSecret(namespace: string, name: string): Promise<Secret | undefined>;
  applySecret(body: Secret): Promise<void>;
  patchStatus(ss: SecretSync, status: NonNullable<SecretSync['status']>): Promise<void>;
  /** syncHash of the data and objects (SyncHashes: the last one per SecretSync remembered). */
  hash(data: ReadonlyMap<string, Buffer>, inputs: HashInputs): Promise<string>;
}

/** The controller's settings a reconcile uses. */
export interface SyncSettings {
  readonly audiences: readonly string[];
  readonly tokenExpirationSeconds: number;
  readonly pod: ControllerPod;
  readonly now: () => Date;
}

/** An error as a condition shows it: an API refusal by the API server's own message (as SSC's `%v` of it), bounded. */
function errorText(err: unknown): string {
  const text = err instanceof Error ? statusMessage(err) || err.message : String(err);
  return printable(text, MAX_MESSAGE);
}

type Fetched = { data: Map<string, Buffer>; hash: string } | { reason: string; message: string };

type ClassRead =
  | { raw: NonNullable<Awaited<ReturnType<SyncPorts['getClass']>>>; cls: SecretProviderClass }
  | { reason: string; message: string };

/** The SecretSync's class, from its namespace only, raw (UID, generation) and parsed. */
async function readClass(ports: SyncPorts, namespace: string, className: string): Promise<ClassRead> {
  const failed = (message: string): ClassRead => ({ reason: Reasons.spcMisconfigured, message });
  let raw;
  try {
    raw = await ports.getClass(namespace, className);
  } catch (err) {
    return failed(`failed to get SecretProviderClass "${className}": ${errorText(err)}`);
  }
  // SSC reads the class from controller-runtime's cache, whose NotFound names the Kind
  // (not the resource): its e2e tests assert this text.
  if (raw === undefined)
    return failed(
      `failed to get SecretProviderClass "${className}": SecretProviderClass.secrets-store.csi.x-k8s.io "${className}" not found`,
    );
  try {
    return { raw, cls: parseSecretProviderClass(raw, namespace) };
  } catch (err) {
    return failed(errorText(err));
  }
}

/** Reads the class, asks its provider, builds the data and its hash; a failure names upstream's reason. */
async function fetchData(
  ss: SecretSync,
  ports: SyncPorts,
  settings: SyncSettings,
  triggeredAt: number,
): Promise<Fetched> {
  const namespace = ss.metadata?.namespace ?? '';
  const className = ss.spec.secretProviderClassName;
  const failed = (reason: string, message: string): Fetched => ({ reason, message });
  const read = await readClass(ports, namespace, className);
  if ('reason' in read) return read;
  const { raw, cls } = read;
  const sa = ss.spec.serviceAccountName;
  let tokens;
  try {
    const mint = (spec: TokenSpec) => ports.mint(spec);
    tokens = await tokensJson(mint, namespace, sa, settings.audiences, settings.tokenExpirationSeconds);
  } catch (err) {
    return failed(Reasons.syncError, `fetching secrets from the provider failed: ${errorText(err)}`);
  }
  let files;
  try {
    const request = syncMountRequest({
      parameters: cls.parameters,
      namespace,
      serviceAccount: sa,
      pod: settings.pod,
      tokens,
    });
    files = responseFiles(cls.provider, await ports.mount(cls.provider, request, triggeredAt));
  } catch (err) {
    const notFound = (err as { reason?: string }).reason === 'ProviderNotFound';
    const reason = notFound ? Reasons.spcMisconfigured : Reasons.providerError;
    return failed(reason, `fetching secrets from the provider failed: ${errorText(err)}`);
  }
  let data;
  try {
    data = syncedSecretData(ss, files);
  } catch (err) {
    return failed(Reasons.remoteFetchFailed, `fetching secrets from the provider failed: ${errorText(err)}`);
  }
  const hash = await ports.hash(data, {
    classUid: raw.metadata?.uid ?? '',
    classGeneration: raw.metadata?.generation ?? 0,
    syncUid: ss.metadata?.uid ?? '',
    syncGeneration: ss.metadata?.generation ?? 0,
    forceSynchronization: ss.spec.forceSynchronization ?? '',
  });
  return { data, hash };
}

/** Writes the Secret unless someone else owns it: the outcome. */
async function writeSecret(
  ss: SecretSync,
  data: Map<string, Buffer>,
  hash: string,
  ports: SyncPorts,
): Promise<SyncOutcome> {
  const name = ss.metadata?.name ?? '';
  const failed = (message: string, notOwned = false): SyncOutcome => ({
    kind: 'failed',
    reason: Reasons.patchError,
    message: `failed to patch secret "${name}": ${message}`,
    notOwned,
  });
  try {
    const problem = ownershipProblem(await ports.getSecret(ss.metadata?.namespace ?? '', name), ss);
    if (problem) return failed(problem, true);
    await ports.applySecret(secretApplyBody(ss, data));
    return { kind: 'synced', hash, created: !ss.status?.syncHash };
  } catch (err) {
    return failed(errorText(err));
  }
}

/**
 * True when nothing needs writing: the hash is the one of the last sync, no failure is
 * pending, and the Secret still holds that sync's data (not deleted or edited out of band).
 */
async function upToDate(ss: SecretSync, fetched: { data: Map<string, Buffer>; hash: string }, ports: SyncPorts) {
  if (fetched.hash !== ss.status?.syncHash || hasFailedCondition(ss.status?.conditions)) return false;
  // Unreadable: the write path reads it again and reports what fails.
  const current = await ports.getSecret(ss.metadata?.namespace ?? '', ss.metadata?.name ?? '').catch(() => null);
  return current !== null && secretMatches(current, secretApplyBody(ss, fetched.data));
}

/** A reconcile's outcome, and whether it changed the status (events are recorded only then, or on a write). */
export interface ReconcileResult {
  readonly outcome: SyncOutcome;
  readonly statusChanged: boolean;
}

/**
 * One SecretSync, as upstream reconciles it: checks the reserved keys, fetches the data,
 * writes nothing when the hash is unchanged and no failure is pending, else applies the
 * Secret (never one it does not own) and records the outcome in status. `triggeredAt`: when
 * the reconcile was asked for (the provider's data must be fetched after it).
 */
export async function reconcileSecretSync(
  ss: SecretSync,
  ports: SyncPorts,
  settings: SyncSettings,
  triggeredAt: number,
): Promise<ReconcileResult> {
  const problem = reservedKeyProblem(ss) ?? secretTypeProblem(ss);
  const fetched = problem ?? (await fetchData(ss, ports, settings, triggeredAt));
  let outcome: SyncOutcome;
  if ('reason' in fetched) outcome = { kind: 'failed', reason: fetched.reason, message: fetched.message };
  else if (await upToDate(ss, fetched, ports)) return { outcome: { kind: 'unchanged' }, statusChanged: false };
  else outcome = await writeSecret(ss, fetched.data, fetched.hash, ports);
  const status = statusAfter(ss, outcome, settings.now());
  // A failure repeated by every poll writes its status once.
  const statusChanged = !sameStatus(ss.status, status);
  if (statusChanged) await ports.patchStatus(ss, status);
  return { outcome, statusChanged };
}
