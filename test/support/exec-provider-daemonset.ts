// What an exec provider DaemonSet must get right, checked the same way for deploy/'s file
// (test/repo/deploy-exec-pki.test.ts) and the chart's rendering (helm-chart-render): its
// args parse with the provider's flag table, its socket lands in the driver's
// --provider-volume, --helpers-dir is the ConfigMap's resolved files (or a hostPath), the
// helpers are read-only and 0555, the HMAC key comes from the Secret, /tmp is writable
// (each helper call's working directory) while the root filesystem is not.
import { expect } from 'chai';
import {
  checkProbesAndSelector,
  checkProviderSocket,
  checkUnprivileged,
  healthPortOf,
} from './provider-daemonset-checks.js';
import { container, hostPathOf as hostPath, volumeFileOf, type Obj } from './deploy-manifests.js';
import { projectedKey } from './vault-provider-daemonset.js';
import { parseGoDuration } from '../../lib/duration.js';
import { parseFlags, stringFlag, type ParsedFlags } from '../../lib/flags.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';
import { execProviderFlags, execSettings } from '../../providers/exec/settings.js';

/** The provider's name: the first argument of the image's `cli.js provider` entrypoint. */
export const EXEC_PROVIDER_NAME = 'exec';
/** The ConfigMap layout's symlink to the directory of the current files (kubelet's atomic writer). */
export const CONFIGMAP_DATA_DIR = '..data';
/** 0555: helpers readable and executable by the provider's user, writable by nobody. */
export const HELPER_MODE = 0o555;

/** Where the helpers come from. */
export type ExecHelpersSource =
  | {
      readonly kind: 'configMap';
      readonly name: string;
      readonly filesConfigMap?: { readonly name: string; readonly paths: readonly string[] } | undefined;
    }
  | { readonly kind: 'hostPath'; readonly path: string };

/** What the DaemonSet was rendered or written for. */
export interface ExecDaemonSetExpectation {
  readonly helpers: ExecHelpersSource;
  readonly hmacSecret: { readonly name: string; readonly key: string };
  readonly helperTimeout: string;
  readonly maxOutputBytes: number;
  readonly maxConcurrentHelpers: number;
  readonly healthPort: number;
}

/** The provider's parsed flags (throws as the provider would at start on an unknown flag). */
export function execProviderArgs(ds: Obj): ParsedFlags {
  const [name, ...rest] = container(ds, 'provider')['args'] as string[];
  expect(name, 'the provider name').to.equal(EXEC_PROVIDER_NAME);
  const flags = parseFlags(rest, { ...commonProviderFlags(EXEC_PROVIDER_NAME), ...execProviderFlags });
  expect(flags.positionals).to.deep.equal([]);
  expect([...flags.ignoredGiven], 'no ignored flags').to.deep.equal([]);
  return flags;
}

/** Asserts --helpers-dir reads the expected ConfigMap(s) or host directory, read-only, mode 0555. */
function checkHelpers(ds: Obj, c: Obj, helpersDir: string, want: ExecHelpersSource): void {
  if (want.kind === 'hostPath') {
    expect(hostPath(ds, c, helpersDir), '--helpers-dir on the host').to.equal(want.path);
    expect(volumeFileOf(ds, c, helpersDir).mount['readOnly'], 'helpers mounted read-only').to.equal(true);
    return;
  }
  // The provider runs a helper only when its resolved path is directly in the resolved
  // --helpers-dir: for a ConfigMap volume that is <mount>/..data, never the mount itself,
  // whose entries are symlinks into a timestamped subdirectory.
  const f = volumeFileOf(ds, c, helpersDir);
  expect(f.inside, `--helpers-dir is <the ConfigMap's mount>/${CONFIGMAP_DATA_DIR}`).to.equal(CONFIGMAP_DATA_DIR);
  expect(f.mount['readOnly'], 'helpers mounted read-only').to.equal(true);
  const projected = f.volume['projected'] as Obj | undefined;
  expect(projected, 'the helpers volume is a projected volume').to.be.an('object');
  expect(projected?.['defaultMode'], 'helpers are 0555').to.equal(HELPER_MODE);
  const sources = (projected?.['sources'] ?? []) as Obj[];
  const helpers = sources[0]?.['configMap'] as Obj | undefined;
  expect(helpers?.['name'], 'the helpers ConfigMap').to.equal(want.name);
  expect(helpers?.['items'], 'every key of the helpers ConfigMap is a helper').to.equal(undefined);
  expect(helpers?.['optional'], 'the pod waits for its helpers').to.not.equal(true);
  const files = sources[1]?.['configMap'] as Obj | undefined;
  if (want.filesConfigMap === undefined) {
    expect(sources, 'only the helpers ConfigMap').to.have.lengthOf(1);
    return;
  }
  expect(sources).to.have.lengthOf(2);
  expect(files?.['name'], 'the helper files ConfigMap').to.equal(want.filesConfigMap.name);
  const items = (files?.['items'] ?? []) as Obj[];
  expect(items.map((i) => i['path']).sort(), 'helper files at their paths').to.deep.equal(
    [...want.filesConfigMap.paths].sort(),
  );
  for (const i of items) {
    // In a subdirectory: a helper file never shadows a helper, nor runs as one.
    expect(String(i['path']), 'a helper file lies in a subdirectory').to.match(/^[A-Za-z0-9_-][A-Za-z0-9._-]*\/[^/]/);
    expect(i['key'], 'its key is its path with / as _').to.equal(String(i['path']).replaceAll('/', '_'));
    expect(i['mode'], 'helper files are read-only data (0444)').to.equal(0o444);
  }
}

/**
 * Asserts everything an exec provider DaemonSet must get right next to `driverDs`: flags
 * the provider accepts with the expected values, its socket in the driver's
 * --provider-volume, the helpers and the HMAC key from the expected sources, a writable
 * /tmp, unprivileged and non-root without an API token, probes on --health-addr, and a
 * selector of its own.
 */
export function checkExecProviderDaemonSet(ds: Obj, driverDs: Obj, want: ExecDaemonSetExpectation): void {
  const c = container(ds, 'provider');
  const flags = execProviderArgs(ds);
  // As the provider reads them at start: bounds and the required --helpers-dir.
  const settings = execSettings(flags);
  expect(settings.helperTimeoutMs, '--helper-timeout').to.equal(parseGoDuration(want.helperTimeout));
  expect(settings.maxOutputBytes, '--max-output-bytes').to.equal(want.maxOutputBytes);
  expect(settings.maxConcurrentHelpers, '--max-concurrent-helpers').to.equal(want.maxConcurrentHelpers);

  checkProviderSocket(ds, driverDs, flags, EXEC_PROVIDER_NAME);

  const helpersDir = stringFlag(flags, 'helpers-dir');
  expect(helpersDir, '--helpers-dir is required').to.not.equal('');
  checkHelpers(ds, c, helpersDir, want.helpers);

  const key = volumeFileOf(ds, c, stringFlag(flags, 'hmac-key-file'));
  expect(key.mount['readOnly'], 'the HMAC key mount is read-only').to.equal(true);
  expect(key.volume['secret']?.secretName, 'the HMAC key comes from the Secret').to.equal(want.hmacSecret.name);
  expect(projectedKey(key.volume['secret'], key.inside, 'HMAC key Secret')).to.equal(want.hmacSecret.key);

  // Each call's working directory is made under os.tmpdir() (/tmp): writable, in memory.
  const tmp = volumeFileOf(ds, c, '/tmp');
  expect(tmp.inside).to.equal('');
  expect(tmp.volume['emptyDir']?.medium, '/tmp is an in-memory emptyDir').to.equal('Memory');
  expect(tmp.volume['emptyDir']?.sizeLimit, '/tmp is bounded').to.be.a('string');
  expect(tmp.mount['readOnly']).to.not.equal(true);

  const pod = ds['spec'].template.spec as Obj;
  checkUnprivileged(ds);
  const sc = c['securityContext'] as Obj;
  expect(pod['securityContext']?.fsGroup, 'the Secret files are group-readable by the provider').to.equal(
    sc['runAsGroup'],
  );
  expect(pod['hostNetwork'], "helpers stay off the node's network").to.not.equal(true);
  expect(pod['nodeSelector']?.['kubernetes.io/os']).to.equal('linux');

  const port = healthPortOf(flags);
  expect(port, '--health-addr port').to.equal(want.healthPort);
  checkProbesAndSelector(ds, driverDs, port);
}
