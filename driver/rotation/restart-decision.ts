// Pure decisions of the opt-in restart on rotation (docs/rotation.md). The last restart is
// read from the workload itself (the restartedAt pod-template annotation), never from the
// driver's memory, so the spacing holds across driver restarts and across nodes.

/** The pod-template annotation `kubectl rollout restart` sets. */
export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

/** What rotation does about a workload whose pod's content changed. */
export type RestartDecision =
  /** Restart now. */
  | { readonly action: 'restart' }
  /** The workload was restarted after this pod was created: its replacement mounts fresh content. */
  | { readonly action: 'skip' }
  /** Too soon after the last restart: restart at `until` (the last restart plus the minimum spacing). */
  | { readonly action: 'defer'; readonly last: Date; readonly until: Date };

/** What the decision is made from. */
export interface RestartFacts {
  readonly now: Date;
  /** The workload's restartedAt annotation as found (undefined when absent). */
  readonly restartedAt: string | undefined;
  /** The rotating pod's creationTimestamp (undefined when unknown). */
  readonly podCreated: Date | undefined;
  /** --workload-restart-min-interval. */
  readonly minIntervalMs: number;
}

/**
 * Decides whether to restart a workload now. A restartedAt that does not parse counts as no
 * restart (it is overwritten); one ahead of this node's clock counts as "now", so a skewed
 * clock elsewhere defers a restart by at most one interval.
 */
export function decideRestart(facts: RestartFacts): RestartDecision {
  const parsed = facts.restartedAt === undefined ? NaN : Date.parse(facts.restartedAt);
  if (Number.isNaN(parsed)) return { action: 'restart' };
  // Both times have whole seconds (RFC 3339 as kubectl writes, creationTimestamp): a pod
  // created in the second of the restart is treated as a new pod, never silently skipped.
  if (facts.podCreated && parsed > facts.podCreated.getTime()) return { action: 'skip' };
  const last = Math.min(parsed, facts.now.getTime());
  const until = last + facts.minIntervalMs;
  if (facts.now.getTime() >= until) return { action: 'restart' };
  return { action: 'defer', last: new Date(last), until: new Date(until) };
}

/** A restartedAt value as `kubectl rollout restart` writes it: RFC 3339, whole seconds. */
export function formatRestartedAt(at: Date): string {
  return new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

const METADATA_PATH = '/spec/template/metadata';

/** A pod template's metadata as read from the API (only annotations matter here). */
export interface TemplateMetadata {
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  readonly [field: string]: unknown;
}

/**
 * The JSON patch restarting a workload whose template metadata was read as `metadata`. It
 * tests that they are unchanged (two nodes deciding at once: the API server refuses the
 * second patch with HTTP 422, and that node decides again).
 */
export function restartPatch(metadata: TemplateMetadata | undefined, at: Date): object[] {
  const value = formatRestartedAt(at);
  if (metadata === undefined)
    return [{ op: 'add', path: METADATA_PATH, value: { annotations: { [RESTARTED_AT_ANNOTATION]: value } } }];
  if (metadata.annotations === undefined) {
    return [
      { op: 'test', path: METADATA_PATH, value: metadata },
      { op: 'add', path: `${METADATA_PATH}/annotations`, value: { [RESTARTED_AT_ANNOTATION]: value } },
    ];
  }
  return [
    { op: 'test', path: `${METADATA_PATH}/annotations`, value: metadata.annotations },
    { op: 'add', path: `${METADATA_PATH}/annotations/${RESTARTED_AT_ANNOTATION.replace('/', '~1')}`, value },
  ];
}
