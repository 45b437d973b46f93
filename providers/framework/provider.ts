import type { Logger } from '../../lib/logging/logger.js';

/** A Mount request after the framework parsed its JSON fields. */
export interface ProviderMountRequest {
  /** SecretProviderClass parameters overlaid with the volume context. */
  readonly attributes: Readonly<Record<string, string>>;
  /** nodePublishSecretRef data. Never log it. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly targetPath: string;
  /** Default file mode the driver asked for (e.g. 0o644). */
  readonly permission: number;
  /** What the driver has mounted now: object id → version. */
  readonly currentObjectVersions: ReadonlyMap<string, string>;
}

/**
 * One file a provider hands back. Give a real mode (the request's `permission` by default):
 * our driver reads 0 as the request's permission, but upstream's Go driver writes it as is (000).
 */
export interface ProviderFile {
  readonly path: string;
  readonly mode: number;
  readonly contents: Buffer;
}

/** What a provider returns for a Mount. */
export interface ProviderMountResult {
  readonly files: readonly ProviderFile[];
  readonly objectVersions: readonly { readonly id: string; readonly version: string }[];
}

/** Per-call context: cancellation and a logger already tagged with the call. */
export interface ProviderCallContext {
  readonly signal: AbortSignal;
  /** The driver's deadline for this call, if it set one (the signal aborts then too); lets a provider bound its own timeouts. */
  readonly deadline?: Date | undefined;
  readonly logger: Logger;
}

/**
 * What each provider implements: its vault-specific logic only. The framework does
 * the gRPC server, request parsing, response building, health, metrics and signals.
 * Throw SscErrors (kind picks the gRPC code); messages must never contain secret data.
 */
export interface SecretsProvider {
  /** Provider name, as in SecretProviderClass spec.provider and `<name>.sock`. */
  readonly name: string;
  mount(request: ProviderMountRequest, ctx: ProviderCallContext): Promise<ProviderMountResult>;
}
