// What an azure provider DaemonSet must get right, checked the same way for deploy/'s file
// (test/repo/deploy-manifests.test.ts) and the chart's rendering (helm-chart-render): its
// args parse with the provider's own flag table and settings (no ignored flag, never the
// test-only one), its socket lands in the driver's --provider-volume, it runs on the host
// network as Azure's does but unprivileged, and its probes hit the health port.
import { expect } from 'chai';
import { checkProbesAndSelector, checkProviderSocket, checkUnprivileged } from './provider-daemonset-checks.js';
import { container, type Obj } from './deploy-manifests.js';
import { parseFlags, type ParsedFlags } from '../../lib/flags.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';
import {
  azureHealthAddress,
  azureProviderFlags,
  azureSettings,
  type AzureSettings,
} from '../../providers/azure/settings.js';

/** The provider's name: the first argument of the image's `cli.js provider` entrypoint. */
export const AZURE_PROVIDER_NAME = 'azure';

/** What the DaemonSet was rendered or written for. */
export interface AzureDaemonSetExpectation {
  readonly constructPemChain: boolean;
  readonly writeCertAndKeyInSeparateFiles: boolean;
  readonly cloudName: string;
  /** The port of /healthz and /metrics. */
  readonly healthPort: number;
}

/** The provider's parsed flags, settings and health address (throws as the provider would at start). */
export function azureProviderArgs(ds: Obj): { flags: ParsedFlags; settings: AzureSettings; healthAddress: string } {
  const [name, ...rest] = container(ds, 'provider')['args'] as string[];
  expect(name, 'the provider name').to.equal(AZURE_PROVIDER_NAME);
  const flags = parseFlags(rest, { ...commonProviderFlags(AZURE_PROVIDER_NAME), ...azureProviderFlags });
  expect(flags.positionals).to.deep.equal([]);
  expect([...flags.ignoredGiven], 'no ignored flags').to.deep.equal([]);
  expect(flags.given.has('test-only-connect-to'), '--test-only-connect-to is for tests only').to.equal(false);
  return { flags, settings: azureSettings(flags), healthAddress: azureHealthAddress(flags) };
}

/**
 * Asserts everything an azure provider DaemonSet must get right next to `driverDs`: flags
 * the provider accepts with the expected settings, its socket in the driver's
 * --provider-volume, host network with cluster DNS, unprivileged and non-root without an
 * API token, probes on the health port, and a selector of its own.
 */
export function checkAzureProviderDaemonSet(ds: Obj, driverDs: Obj, want: AzureDaemonSetExpectation): void {
  const { flags, settings, healthAddress } = azureProviderArgs(ds);
  expect(settings.constructPemChain, '--construct-pem-chain').to.equal(want.constructPemChain);
  expect(settings.writeCertAndKeyInSeparateFiles, '--write-cert-and-key-in-separate-files').to.equal(
    want.writeCertAndKeyInSeparateFiles,
  );
  expect(settings.cloudName, '--cloud-name').to.equal(want.cloudName);
  expect(settings.connectTo).to.deep.equal([]);
  expect(healthAddress, 'health address').to.equal(`:${want.healthPort}`);

  checkProviderSocket(ds, driverDs, flags, AZURE_PROVIDER_NAME);

  const pod = ds['spec'].template.spec as Obj;
  // As Azure's DaemonSet: IMDS is asked as the node; cluster names still resolve.
  expect(pod['hostNetwork'], 'hostNetwork').to.equal(true);
  expect(pod['dnsPolicy'], 'dnsPolicy').to.equal('ClusterFirstWithHostNet');
  checkUnprivileged(ds);
  expect(pod['nodeSelector']?.['kubernetes.io/os']).to.equal('linux');

  checkProbesAndSelector(ds, driverDs, want.healthPort);
}
