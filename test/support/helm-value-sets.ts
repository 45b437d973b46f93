// Value sets the chart tests render, lint and apply (server-side dry run), each with what
// the rendered objects must say. Upstream's values are our own copy of the keys of
// secrets-store-csi-driver v1.6.1's charts/secrets-store-csi-driver/values.yaml (read there),
// not their file.
import type { AzureDaemonSetExpectation } from './azure-provider-daemonset.js';
import type { ExecDaemonSetExpectation } from './exec-provider-daemonset.js';
import type { PkiDaemonSetExpectation } from './pki-provider-daemonset.js';
import type { VaultDaemonSetExpectation } from './vault-provider-daemonset.js';

/** What a value set must render. */
export interface ChartExpectation {
  readonly sync: boolean;
  readonly rotation: boolean;
  /** auto: no --rotation-mode flag, requiresRepublish with rotation, no rotation role (upstream's chart). */
  readonly rotationMode: 'auto' | 'reconciler' | 'republish';
  /** The CSIDriver's fsGroupPolicy (undefined: not rendered, the API server's default). */
  readonly fsGroupPolicy: string | undefined;
  readonly rotationPollIntervalMs: number;
  /** ClusterRoles bound to the driver, sorted. */
  readonly clusterRoles: readonly string[];
  readonly providerFile: boolean;
  /** The vault provider DaemonSet, with what its flags and volumes must say; undefined: none rendered. */
  readonly providerVault: VaultDaemonSetExpectation | undefined;
  /** The azure provider DaemonSet, with what its flags must say; undefined: none rendered. */
  readonly providerAzure: AzureDaemonSetExpectation | undefined;
  /** The exec provider DaemonSet, with what its flags and volumes must say; undefined: none rendered. */
  readonly providerExec: ExecDaemonSetExpectation | undefined;
  /** The pki provider DaemonSet, with what its flags must say; undefined: none rendered. */
  readonly providerPki: PkiDaemonSetExpectation | undefined;
  /** The two CRDs rendered (linux.crds.enabled). */
  readonly crds: boolean;
  readonly kubeletRootDir: string;
  /** Provider socket directories in the driver's search order. */
  readonly providerDirs: readonly string[];
  readonly tokenAudiences: readonly string[];
  readonly logLevel: string;
  readonly maxCallRecvMsgSize: number;
  readonly driverImage: string;
}

/** One set of chart values and its expectation. */
export interface ChartValueSet {
  readonly name: string;
  readonly values: Record<string, unknown>;
  readonly expect: ChartExpectation;
}

const BASE_ROLE = 'secretproviderclasses-role';
/** Upstream's roles aggregated into admin/edit/view (bound to nobody), rendered with rbac.install. */
export const AGGREGATED_ROLES = [
  'secretproviderclasses-admin-role',
  'secretproviderclasses-viewer-role',
  'secretproviderclasspodstatuses-viewer-role',
];
const SYNC_ROLE = 'secretprovidersyncing-role';
const ROTATION_ROLE = 'secretproviderrotation-role';
const RESTART_ROLE = 'secretproviderrestart-role';
const UPSTREAM_DIRS = ['/etc/kubernetes/secrets-store-csi-providers', '/var/run/secrets-store-csi-providers'];

/** What deploy/'s setup renders (RECOMMENDED_VALUES); most value sets start from it. */
const DEFAULTS: ChartExpectation = {
  sync: true,
  rotation: true,
  rotationMode: 'reconciler',
  fsGroupPolicy: 'File',
  rotationPollIntervalMs: 120_000,
  clusterRoles: [BASE_ROLE, ROTATION_ROLE, SYNC_ROLE].sort(),
  providerFile: true,
  providerVault: undefined,
  providerAzure: undefined,
  providerExec: undefined,
  providerPki: undefined,
  crds: true,
  kubeletRootDir: '/var/lib/kubelet',
  providerDirs: UPSTREAM_DIRS,
  tokenAudiences: [],
  logLevel: 'info',
  maxCallRecvMsgSize: 4 * 1024 * 1024,
  driverImage: 'secrets-store-csi/driver:0.1.0',
};

const resources = (cpu: string, memory: string, cpuReq: string, memoryReq: string) => ({
  limits: { cpu, memory },
  requests: { cpu: cpuReq, memory: memoryReq },
});
const notVirtualKubelet = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] }] }],
    },
  },
};

/**
 * The values that render deploy/'s setup (docs/helm.md#the-chart-and-deploy): Secret sync,
 * the rotation reconciler, fsGroupPolicy File, the file provider, deploy/'s scheduling and
 * sizes. The chart's defaults are upstream's instead.
 */
export const RECOMMENDED_VALUES: Record<string, unknown> = {
  syncSecret: { enabled: true },
  enableSecretRotation: true,
  rotationPollInterval: '2m',
  rotationMode: 'reconciler',
  fsGroupPolicy: 'File',
  providers: { file: { enabled: true } },
  linux: {
    // null: Helm drops the default (an empty map would merge into it).
    affinity: null,
    priorityClassName: 'system-node-critical',
    driver: { resources: resources('500m', '384Mi', '50m', '128Mi') },
    registrar: { logVerbosity: 2 },
  },
};

/** `values` over `base`, maps merged key by key (as Helm merges values files), anything else replaced. */
export function mergeValues(base: Record<string, unknown>, values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(values)) {
    const b = out[k];
    const isMap = (x: unknown): x is Record<string, unknown> =>
      typeof x === 'object' && x !== null && !Array.isArray(x);
    out[k] = isMap(b) && isMap(v) ? mergeValues(b, v) : v;
  }
  return out;
}

/** deploy/'s setup with `values` on top. */
function recommended(values: Record<string, unknown>): Record<string, unknown> {
  return mergeValues(RECOMMENDED_VALUES, values);
}

/** What the chart's defaults render: upstream's behaviour and RBAC. */
const UPSTREAM_LIKE: ChartExpectation = {
  ...DEFAULTS,
  sync: false,
  rotation: false,
  rotationMode: 'auto',
  fsGroupPolicy: undefined,
  clusterRoles: [BASE_ROLE],
  providerFile: false,
};

/** The keys and defaults of upstream v1.6.1's values.yaml (windows.* trimmed to what it sets). */
export const UPSTREAM_DEFAULT_VALUES: Record<string, unknown> = {
  linux: {
    enabled: true,
    image: { repository: 'registry.k8s.io/csi-secrets-store/driver', tag: 'v1.6.1', pullPolicy: 'IfNotPresent' },
    crds: {
      enabled: true,
      image: { repository: 'registry.k8s.io/csi-secrets-store/driver-crds', tag: 'v1.6.1', pullPolicy: 'IfNotPresent' },
      resources: {},
      annotations: {},
      podLabels: {},
    },
    affinity: notVirtualKubelet,
    driver: { resources: resources('200m', '200Mi', '50m', '100Mi') },
    registrarImage: {
      repository: 'registry.k8s.io/sig-storage/csi-node-driver-registrar',
      tag: 'v2.16.0',
      pullPolicy: 'IfNotPresent',
    },
    registrar: { resources: resources('100m', '100Mi', '10m', '20Mi'), logVerbosity: 5 },
    livenessProbeImage: {
      repository: 'registry.k8s.io/sig-storage/livenessprobe',
      tag: 'v2.18.0',
      pullPolicy: 'IfNotPresent',
    },
    livenessProbe: { resources: resources('100m', '100Mi', '10m', '20Mi') },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
    kubeletRootDir: '/var/lib/kubelet',
    providersDir: '/var/run/secrets-store-csi-providers',
    additionalProvidersDirs: ['/etc/kubernetes/secrets-store-csi-providers'],
    nodeSelector: {},
    tolerations: [{ operator: 'Exists' }],
    metricsAddr: ':8095',
    env: [],
    priorityClassName: '',
    daemonsetAnnotations: {},
    podAnnotations: {},
    podLabels: {},
    volumes: null,
    volumeMounts: null,
  },
  windows: {
    enabled: false,
    image: { repository: 'registry.k8s.io/csi-secrets-store/driver', tag: 'v1.6.1', pullPolicy: 'IfNotPresent' },
    kubeletRootDir: 'C:\\var\\lib\\kubelet',
    providersDir: 'C:\\\\k\\\\secrets-store-csi-providers',
    additionalProvidersDirs: null,
    tolerations: [{ operator: 'Exists' }],
    metricsAddr: ':8095',
    volumes: null,
    volumeMounts: null,
  },
  logVerbosity: 0,
  logFormatJSON: false,
  livenessProbe: { port: 9808, logLevel: 2 },
  maxCallRecvMsgSize: 4194304,
  rbac: { install: true, pspEnabled: false },
  syncSecret: { enabled: false },
  enableSecretRotation: false,
  rotationPollInterval: null,
  providerHealthCheck: false,
  providerHealthCheckInterval: '2m',
  imagePullSecrets: [],
  tokenRequests: [],
  automountServiceAccountToken: true,
  commonLabels: {},
};

/** The token audience of Azure workload identity, which providers.azure adds to the CSIDriver. */
export const AZURE_AUDIENCE = 'api://AzureADTokenExchange';
const AZURE_DEFAULTS: AzureDaemonSetExpectation = {
  constructPemChain: true,
  writeCertAndKeyInSeparateFiles: false,
  cloudName: 'AzurePublicCloud',
  healthPort: 8989,
};
/** The exec provider's DaemonSet name in the chart tests' release, and so its ConfigMaps' prefix. */
const EXEC_DS = 'csi-secrets-store-secrets-store-csi-driver-provider-exec';
/** A helper for the exec value sets: any program text; the chart renders it verbatim. */
const HELPER = '#!/bin/sh\nexec cat -- "${0%/*}/data.d/$SSC_PARAM_PATH"\n';
const EXEC_DEFAULTS = {
  helperTimeout: '10s',
  maxOutputBytes: 1048576,
  maxConcurrentHelpers: 8,
  healthPort: 8991,
  hmacSecret: { name: 'exec-provider-hmac-key', key: 'key' },
};
const PKI_DEFAULTS: PkiDaemonSetExpectation = { minDuration: '1h', healthPort: 8992 };

/** The value sets every chart test covers. */
export const CHART_VALUE_SETS: readonly ChartValueSet[] = [
  { name: 'defaults', values: {}, expect: UPSTREAM_LIKE },
  {
    name: "upstream v1.6.1's default values",
    values: UPSTREAM_DEFAULT_VALUES,
    expect: { ...UPSTREAM_LIKE, driverImage: 'registry.k8s.io/csi-secrets-store/driver:v1.6.1' },
  },
  {
    name: "upstream's values for rotation with tokenRequests (rotationMode auto)",
    values: { syncSecret: { enabled: true }, enableSecretRotation: true, tokenRequests: [{ audience: 'vault' }] },
    // As upstream's chart: requiresRepublish, no rotation role; the driver then picks republish.
    expect: {
      ...UPSTREAM_LIKE,
      sync: true,
      rotation: true,
      clusterRoles: [BASE_ROLE, SYNC_ROLE].sort(),
      tokenAudiences: ['vault'],
    },
  },
  { name: "deploy/'s setup (RECOMMENDED_VALUES)", values: RECOMMENDED_VALUES, expect: DEFAULTS },
  {
    name: 'Secret sync off',
    values: recommended({ syncSecret: { enabled: false } }),
    expect: { ...DEFAULTS, sync: false, clusterRoles: [BASE_ROLE, ROTATION_ROLE].sort() },
  },
  {
    name: 'rotation off',
    values: recommended({ enableSecretRotation: false }),
    expect: { ...DEFAULTS, rotation: false, clusterRoles: [BASE_ROLE, SYNC_ROLE].sort() },
  },
  {
    name: 'rotation on with tokenRequests (upstream style)',
    values: recommended({
      enableSecretRotation: true,
      rotationPollInterval: '30s',
      tokenRequests: [{ audience: 'vault' }, { audience: 'api://AzureADTokenExchange', expirationSeconds: 3600 }],
    }),
    expect: { ...DEFAULTS, rotationPollIntervalMs: 30_000, tokenAudiences: ['vault', 'api://AzureADTokenExchange'] },
  },
  {
    name: 'republish mode',
    values: recommended({
      enableSecretRotation: true,
      rotationMode: 'republish',
      tokenRequests: [{ audience: 'vault' }],
    }),
    // kubelet passes the tokens and the nodePublishSecretRef: no rotation role.
    expect: {
      ...DEFAULTS,
      rotationMode: 'republish',
      clusterRoles: [BASE_ROLE, SYNC_ROLE].sort(),
      tokenAudiences: ['vault'],
    },
  },
  // As upstream's chart: the sync role follows syncSecret.enabled, rbac.install the rest.
  {
    name: 'rbac.install=false',
    values: recommended({ rbac: { install: false } }),
    expect: { ...DEFAULTS, clusterRoles: [ROTATION_ROLE, SYNC_ROLE].sort() },
  },
  {
    name: 'custom kubeletRootDir',
    values: recommended({ linux: { kubeletRootDir: '/var/lib/k0s/kubelet/' } }),
    expect: { ...DEFAULTS, kubeletRootDir: '/var/lib/k0s/kubelet' },
  },
  {
    name: 'providers off',
    values: recommended({ providers: { file: { enabled: false } } }),
    expect: { ...DEFAULTS, providerFile: false },
  },
  {
    name: 'vault provider on',
    values: recommended({ providers: { vault: { enabled: true, vaultAddress: 'https://vault.vault.svc:8200' } } }),
    expect: {
      ...DEFAULTS,
      tokenAudiences: ['vault'],
      providerVault: {
        vaultAddress: 'https://vault.vault.svc:8200',
        authMount: 'kubernetes',
        hmacSecret: { name: 'vault-provider-hmac-key', key: 'key' },
      },
    },
  },
  {
    name: 'vault provider only, customised, its audience already in tokenRequests',
    values: recommended({
      tokenRequests: [{ audience: 'api://AzureADTokenExchange' }, { audience: 'bao', expirationSeconds: 3600 }],
      providers: {
        file: { enabled: false },
        vault: {
          enabled: true,
          vaultAddress: 'https://openbao.openbao.svc:8200/',
          vaultAuthMountPath: 'jwt',
          vaultNamespace: 'team-a',
          caCert: { secretName: 'openbao-tls', key: 'ca.pem' },
          hmacKeySecret: { name: 'bao-hmac', key: 'hmac.key' },
          tokenRequest: { audience: 'bao', expirationSeconds: 600 },
          healthPort: 9991,
          extraArgs: ['--cache-size=200', '--vault-tls-server-name=openbao.internal'],
          env: [{ name: 'NO_PROXY', value: 'openbao.openbao.svc' }],
          image: {
            repository: 'registry.example.com/ssc/provider',
            digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
          },
        },
      },
    }),
    expect: {
      ...DEFAULTS,
      providerFile: false,
      tokenAudiences: ['api://AzureADTokenExchange', 'bao'],
      providerVault: {
        vaultAddress: 'https://openbao.openbao.svc:8200/',
        authMount: 'jwt',
        vaultNamespace: 'team-a',
        hmacSecret: { name: 'bao-hmac', key: 'hmac.key' },
        ca: { kind: 'secret', name: 'openbao-tls', key: 'ca.pem' },
      },
    },
  },
  {
    name: 'vault provider with a CA ConfigMap and no token audience',
    values: recommended({
      providers: {
        vault: {
          enabled: true,
          vaultAddress: 'http://10.0.0.5:8200',
          caCert: { configMapName: 'vault-ca' },
          tokenRequest: { audience: '' },
        },
      },
    }),
    expect: {
      ...DEFAULTS,
      providerVault: {
        vaultAddress: 'http://10.0.0.5:8200',
        authMount: 'kubernetes',
        hmacSecret: { name: 'vault-provider-hmac-key', key: 'key' },
        ca: { kind: 'configMap', name: 'vault-ca', key: 'ca.crt' },
      },
    },
  },
  {
    name: 'azure provider on',
    values: recommended({ providers: { azure: { enabled: true } } }),
    expect: { ...DEFAULTS, tokenAudiences: [AZURE_AUDIENCE], providerAzure: AZURE_DEFAULTS },
  },
  {
    name: 'azure and vault providers, azure customised, its audience already in tokenRequests',
    values: recommended({
      tokenRequests: [{ audience: AZURE_AUDIENCE, expirationSeconds: 3600 }],
      providers: {
        vault: { enabled: true, vaultAddress: 'https://vault.vault.svc:8200' },
        azure: {
          enabled: true,
          constructPEMChain: false,
          writeCertAndKeyInSeparateFiles: true,
          cloudName: 'AzureUSGovernmentCloud',
          healthPort: 9898,
          extraArgs: ['--read-cache-window=10s', '--identity-cache-size=200'],
          env: [{ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/azure-ca/ca.crt' }],
          volumes: [{ name: 'azure-ca', configMap: { name: 'azure-ca' } }],
          volumeMounts: [{ name: 'azure-ca', mountPath: '/etc/azure-ca', readOnly: true }],
          image: {
            repository: 'registry.example.com/ssc/provider',
            digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
          },
        },
      },
    }),
    expect: {
      ...DEFAULTS,
      tokenAudiences: [AZURE_AUDIENCE, 'vault'],
      providerVault: {
        vaultAddress: 'https://vault.vault.svc:8200',
        authMount: 'kubernetes',
        hmacSecret: { name: 'vault-provider-hmac-key', key: 'key' },
      },
      providerAzure: {
        constructPemChain: false,
        writeCertAndKeyInSeparateFiles: true,
        cloudName: 'AzureUSGovernmentCloud',
        healthPort: 9898,
      },
    },
  },
  {
    name: 'azure provider without a token audience (no workload identity)',
    values: recommended({
      providers: { file: { enabled: false }, azure: { enabled: true, tokenRequest: { audience: '' } } },
    }),
    expect: { ...DEFAULTS, providerFile: false, providerAzure: AZURE_DEFAULTS },
  },
  {
    name: 'exec provider on, helpers and their files from values',
    values: recommended({
      providers: {
        exec: {
          enabled: true,
          helpers: { 'get.sh': HELPER, 'other-helper': '#!/bin/sh\necho hi\n' },
          helperFiles: { 'data.d/a.txt': 'a', 'data.d/sub/b.txt': 'b' },
        },
      },
    }),
    expect: {
      ...DEFAULTS,
      providerExec: {
        ...EXEC_DEFAULTS,
        helpers: {
          kind: 'configMap',
          name: `${EXEC_DS}-helpers`,
          filesConfigMap: { name: `${EXEC_DS}-helper-files`, paths: ['data.d/a.txt', 'data.d/sub/b.txt'] },
        },
      },
    },
  },
  {
    name: 'exec provider only, helpers on the nodes (hostPath), customised',
    values: recommended({
      providers: {
        file: { enabled: false },
        exec: {
          enabled: true,
          helpersHostPath: '/opt/ssc-helpers',
          hmacKeySecret: { name: 'exec-hmac', key: 'hmac.key' },
          helperTimeout: '30s',
          maxOutputBytes: 65536,
          maxConcurrentHelpers: 2,
          healthPort: 9993,
          tmpSizeLimit: '64Mi',
          extraArgs: ['--log-level=debug'],
          env: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=128' }],
          volumes: [{ name: 'bao', hostPath: { path: '/usr/local/bin/bao', type: 'File' } }],
          volumeMounts: [{ name: 'bao', mountPath: '/opt/bao/bin/bao', readOnly: true }],
          nodeSelector: { 'node-role.kubernetes.io/worker': 'true' },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'secrets', effect: 'NoSchedule' }],
          resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
          image: {
            repository: 'registry.example.com/ssc/provider-with-bao',
            digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
          },
        },
      },
    }),
    expect: {
      ...DEFAULTS,
      providerFile: false,
      providerExec: {
        helpers: { kind: 'hostPath', path: '/opt/ssc-helpers' },
        hmacSecret: { name: 'exec-hmac', key: 'hmac.key' },
        helperTimeout: '30s',
        maxOutputBytes: 65536,
        maxConcurrentHelpers: 2,
        healthPort: 9993,
      },
    },
  },
  {
    name: 'pki provider on',
    values: recommended({ providers: { pki: { enabled: true } } }),
    expect: { ...DEFAULTS, providerPki: PKI_DEFAULTS },
  },
  {
    name: 'pki and exec providers, pki customised',
    values: recommended({
      providers: {
        exec: { enabled: true, helpers: { 'get.sh': HELPER } },
        pki: {
          enabled: true,
          minDuration: '10m',
          healthPort: 9994,
          extraArgs: ['--log-level=debug'],
          nodeSelector: { 'kubernetes.io/arch': 'amd64' },
          priorityClassName: '',
          resources: { requests: { cpu: '100m', memory: '96Mi' }, limits: { cpu: '2', memory: '256Mi' } },
          image: { repository: 'registry.example.com/ssc/provider', tag: '9.9.9' },
        },
      },
    }),
    expect: {
      ...DEFAULTS,
      providerExec: { ...EXEC_DEFAULTS, helpers: { kind: 'configMap', name: `${EXEC_DS}-helpers` } },
      providerPki: { minDuration: '10m', healthPort: 9994 },
    },
  },
  {
    name: 'everything customised',
    values: recommended({
      commonLabels: { team: 'platform' },
      imagePullSecrets: [{ name: 'regcred' }],
      logVerbosity: 5,
      maxCallRecvMsgSize: 8388608,
      workloadRestart: { enabled: true },
      linux: {
        crds: { enabled: false },
        image: {
          repository: 'registry.example.com/ssc/driver',
          tag: 'ignored',
          digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
        },
        providersDir: '/run/providers',
        additionalProvidersDirs: ['/etc/kubernetes/secrets-store-csi-providers', '/run/providers', '/opt/providers'],
        metricsAddr: '127.0.0.1:9095',
        env: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=192' }],
        volumes: [{ name: 'extra', emptyDir: {} }],
        volumeMounts: [{ name: 'extra', mountPath: '/extra', readOnly: true }],
        nodeSelector: { 'node-role.kubernetes.io/worker': 'true' },
        affinity: notVirtualKubelet,
        priorityClassName: '',
        daemonsetAnnotations: { 'example.com/owner': 'platform' },
        podAnnotations: { 'prometheus.io/scrape': 'true' },
        podLabels: { tier: 'node' },
        driver: { extraArgs: ['--provider-timeout=20s', '--max-objects-per-volume=500'] },
      },
      providers: {
        file: {
          rootDir: '/srv/secrets',
          stateDir: '/srv/secrets-state',
          healthPort: 9999,
          podLabels: { tier: 'node' },
        },
      },
    }),
    expect: {
      ...DEFAULTS,
      clusterRoles: [BASE_ROLE, RESTART_ROLE, ROTATION_ROLE, SYNC_ROLE].sort(),
      providerDirs: [
        '/etc/kubernetes/secrets-store-csi-providers',
        '/run/providers',
        '/opt/providers',
        '/run/providers',
      ],
      crds: false,
      logLevel: 'debug',
      maxCallRecvMsgSize: 8388608,
      driverImage:
        'registry.example.com/ssc/driver@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    },
  },
];
