import type { ControllerHandlers } from '../../proto/gen/csi/v1/Controller.js';
import type { IdentityHandlers } from '../../proto/gen/csi/v1/Identity.js';
import type { Logger } from '../../lib/logging/logger.js';
import { unary } from '../../lib/grpc/unary.js';

/** What Identity reports. */
export interface IdentityOptions {
  readonly driverName: string;
  readonly vendorVersion: string;
  /** Probe's answer: true only when the driver can actually serve. */
  readonly ready: () => boolean;
}

/**
 * CSI Identity service. No plugin capabilities are advertised: this is a node-only
 * driver, so neither CONTROLLER_SERVICE nor accessibility constraints apply.
 */
export function identityHandlers(options: IdentityOptions, logger: Logger): IdentityHandlers {
  return {
    GetPluginInfo: unary(
      'GetPluginInfo',
      async () => ({ name: options.driverName, vendor_version: options.vendorVersion }),
      logger,
    ),
    GetPluginCapabilities: unary('GetPluginCapabilities', async () => ({ capabilities: [] }), logger),
    Probe: unary('Probe', async () => ({ ready: { value: options.ready() } }), logger),
  };
}

/**
 * The one Controller method served: ControllerGetCapabilities, answering only
 * UNKNOWN (no capability), as upstream does. CONTROLLER_SERVICE is not advertised;
 * csi-sanity's node suite calls this method unconditionally and rejects an empty
 * list, and kubelet never calls it. Other Controller methods are UNIMPLEMENTED
 * (grpc-js answers a method without a handler so).
 */
export function controllerHandlers(logger: Logger): Pick<ControllerHandlers, 'ControllerGetCapabilities'> {
  return {
    ControllerGetCapabilities: unary(
      'ControllerGetCapabilities',
      async () => ({ capabilities: [{ rpc: { type: 'UNKNOWN' } }] }),
      logger,
    ),
  };
}
