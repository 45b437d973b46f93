import type { Logger } from '../../proto/runtime/logger.js';
import type { ServiceHandlers } from '../../proto/runtime/service.js';
import { unary } from '../../proto/runtime/unary.js';
import type { CSI_CONTROLLER, CSI_IDENTITY } from '../../proto/wire/csi-identity.js';

/** What Identity reports. */
export interface IdentityOptions {
  readonly driverName: string;
  readonly vendorVersion: string;
  /** Probe's answer: true only when the driver can actually serve (SPEC 3.1). */
  readonly ready: () => boolean;
}

/**
 * CSI Identity service. No plugin capabilities are advertised: this is a node-only
 * driver, so neither CONTROLLER_SERVICE nor accessibility constraints apply.
 */
export function identityHandlers(options: IdentityOptions, logger: Logger): ServiceHandlers<typeof CSI_IDENTITY> {
  return {
    GetPluginInfo: unary('GetPluginInfo', async () => ({ name: options.driverName, vendor_version: options.vendorVersion }), logger),
    GetPluginCapabilities: unary('GetPluginCapabilities', async () => ({ capabilities: [] }), logger),
    Probe: unary('Probe', async () => ({ ready: { value: options.ready() } }), logger),
  };
}

/**
 * The one Controller method served: ControllerGetCapabilities, answering only
 * UNKNOWN (no capability), as upstream does. CONTROLLER_SERVICE is not advertised;
 * csi-sanity's node suite calls this method unconditionally and rejects an empty
 * list, and kubelet never calls it. Other Controller methods are UNIMPLEMENTED.
 */
export function controllerHandlers(logger: Logger): Pick<ServiceHandlers<typeof CSI_CONTROLLER>, 'ControllerGetCapabilities'> {
  return {
    ControllerGetCapabilities: unary('ControllerGetCapabilities', async () => ({ capabilities: [{ rpc: { type: 'UNKNOWN' } }] }), logger),
  };
}
