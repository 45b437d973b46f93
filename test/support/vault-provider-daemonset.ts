// What a vault provider DaemonSet must get right, checked the same way for deploy/'s file
// (test/repo/deploy-manifests.test.ts) and the chart's rendering (helm-chart-render):
// its args parse with the provider's own flag table and settings, its socket lands in the
// driver's --provider-volume, the HMAC key and CA files come from the volumes they name.
import { expect } from 'chai';
import {
  checkProbesAndSelector,
  checkProviderSocket,
  checkUnprivileged,
  healthPortOf,
} from './provider-daemonset-checks.js';
import { container, volumeFileOf, type Obj } from './deploy-manifests.js';
import { parseFlags, type ParsedFlags } from '../../lib/flags.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';
import { providerSettings, vaultProviderFlags, type ProviderSettings } from '../../providers/vault/settings.js';

/** The provider's name: the first argument of the image's `cli.js provider` entrypoint. */
export const VAULT_PROVIDER_NAME = 'vault';

/** The key-to-file projection of a Secret or ConfigMap volume: the file `inside` must be one listed item. */
export function projectedKey(source: Obj, inside: string, what: string): string {
  const items = (source['items'] ?? []) as Obj[];
  const item = items.find((i) => i['path'] === inside);
  expect(item, `${what}: ${inside} is a projected item (items listed, so a missing key stops the pod)`).to.not.equal(
    undefined,
  );
  expect(source['optional'], `${what} is not optional`).to.not.equal(true);
  return String(item?.['key']);
}

/** What the DaemonSet was rendered or written for. */
export interface VaultDaemonSetExpectation {
  readonly vaultAddress: string;
  readonly authMount: string;
  readonly vaultNamespace?: string | undefined;
  readonly hmacSecret: { readonly name: string; readonly key: string };
  /** The CA's source, when --vault-tls-ca-cert is expected. */
  readonly ca?: { readonly kind: 'configMap' | 'secret'; readonly name: string; readonly key: string } | undefined;
}

/** The provider's parsed flags and resolved settings (throws as the provider would at start). */
export function vaultProviderArgs(ds: Obj): { flags: ParsedFlags; settings: ProviderSettings } {
  const [name, ...rest] = container(ds, 'provider')['args'] as string[];
  expect(name, 'the provider name').to.equal(VAULT_PROVIDER_NAME);
  const flags = parseFlags(rest, { ...commonProviderFlags(VAULT_PROVIDER_NAME), ...vaultProviderFlags });
  expect(flags.positionals).to.deep.equal([]);
  expect([...flags.ignoredGiven], 'no ignored flags').to.deep.equal([]);
  return { flags, settings: providerSettings({}, flags) };
}

/**
 * Asserts everything a vault provider DaemonSet must get right next to `driverDs`: flags
 * the provider accepts with the expected settings, its socket in the driver's
 * --provider-volume, the HMAC key and CA from the expected Secret/ConfigMap, unprivileged
 * and non-root, probes on --health-addr, and a selector of its own.
 */
export function checkVaultProviderDaemonSet(ds: Obj, driverDs: Obj, want: VaultDaemonSetExpectation): void {
  const c = container(ds, 'provider');
  const { flags, settings } = vaultProviderArgs(ds);
  expect(settings.vaultAddress).to.equal(want.vaultAddress);
  expect(settings.vaultAuthMountPath).to.equal(want.authMount);
  expect(settings.vaultNamespace).to.equal(want.vaultNamespace);

  checkProviderSocket(ds, driverDs, flags, VAULT_PROVIDER_NAME);

  const key = volumeFileOf(ds, c, settings.hmacKeyFile);
  expect(key.mount['readOnly'], 'the HMAC key mount is read-only').to.equal(true);
  expect(key.volume['secret']?.secretName, 'the HMAC key comes from the Secret').to.equal(want.hmacSecret.name);
  expect(projectedKey(key.volume['secret'], key.inside, 'HMAC key Secret')).to.equal(want.hmacSecret.key);

  const caPath = settings.tls.caCertPath;
  if (want.ca === undefined) {
    expect(caPath, '--vault-tls-ca-cert').to.equal(undefined);
  } else {
    expect(caPath, '--vault-tls-ca-cert').to.be.a('string');
    const ca = volumeFileOf(ds, c, caPath as string);
    expect(ca.mount['readOnly']).to.equal(true);
    const source = ca.volume[want.ca.kind] as Obj | undefined;
    expect(source?.[want.ca.kind === 'secret' ? 'secretName' : 'name'], `CA ${want.ca.kind}`).to.equal(want.ca.name);
    expect(projectedKey(source as Obj, ca.inside, 'CA')).to.equal(want.ca.key);
  }

  const pod = ds['spec'].template.spec as Obj;
  checkUnprivileged(ds);
  const sc = c['securityContext'] as Obj;
  expect(pod['securityContext']?.fsGroup, 'the Secret files are group-readable by the provider').to.equal(
    sc['runAsGroup'],
  );

  const port = healthPortOf(flags);
  checkProbesAndSelector(ds, driverDs, port);
}
