/**
 * Messages the codec tests encode and decode, per gRPC path: between them every field of
 * every message is set to a non-default value and every enum value occurs (a test checks
 * that against the schema), so a wrong field number or type cannot pass.
 */

/** A JSON object with own "__proto__", "constructor" and "toString" keys, as a peer may send. */
function awkwardKeys(extra: Record<string, string>): Record<string, string> {
  return {
    ...(JSON.parse('{"__proto__":"proto","constructor":"ctor","toString":"str","":"empty key"}') as Record<
      string,
      string
    >),
    ...extra,
  };
}

const LONG = 'l'.repeat(200); // a 2-byte length
const HUGE = 's'.repeat(20000); // a 3-byte length
const UNICODE = 'é/ü/日本/😀';

const POD_CONTEXT = {
  secretProviderClass: 'app-secrets',
  'csi.storage.k8s.io/pod.name': 'web-0',
  'csi.storage.k8s.io/pod.namespace': 'default',
  'csi.storage.k8s.io/pod.uid': '0f3c1b9e-6b0a-4d3c-9f5e-2a1b3c4d5e6f',
  'csi.storage.k8s.io/serviceAccount.name': 'web',
  'csi.storage.k8s.io/ephemeral': 'true',
};

const ACCESS_MODES = [
  'UNKNOWN',
  'SINGLE_NODE_WRITER',
  'SINGLE_NODE_READER_ONLY',
  'MULTI_NODE_READER_ONLY',
  'MULTI_NODE_SINGLE_WRITER',
  'MULTI_NODE_MULTI_WRITER',
  'SINGLE_NODE_SINGLE_WRITER',
  'SINGLE_NODE_MULTI_WRITER',
];

/** A NodePublishVolumeRequest like kubelet's for a CSI inline volume, every field set. */
export function kubeletPublishRequest(i = 0): Record<string, unknown> {
  return {
    volume_id: `csi-${i.toString(16).padStart(8, '0')}-volume`,
    publish_context: { 'publish.example.com/key': 'v' },
    staging_target_path: '/var/lib/kubelet/plugins/kubernetes.io/csi/staging',
    target_path: `/var/lib/kubelet/pods/0f3c1b9e-6b0a-4d3c-9f5e-2a1b3c4d5e6f/volumes/kubernetes.io~csi/secrets-${i}/mount`,
    volume_capability: {
      mount: { fs_type: 'ext4', mount_flags: ['ro', '', 'noexec'], volume_mount_group: '1000' },
      access_mode: { mode: 'SINGLE_NODE_READER_ONLY' },
      access_type: 'mount',
    },
    readonly: true,
    secrets: {
      'csi.storage.k8s.io/serviceAccount.tokens': JSON.stringify({
        '': { token: 'x'.repeat(900), expirationTimestamp: '2030-01-01T00:00:00Z' },
      }),
      key: 'value',
    },
    volume_context: POD_CONTEXT,
  };
}

const RICH_CAPABILITY = {
  mount: { fs_type: UNICODE, mount_flags: ['a', LONG], volume_mount_group: '2000' },
  access_mode: { mode: 'MULTI_NODE_MULTI_WRITER' },
};

/** Samples per gRPC path: requests and responses in the generated input shapes. */
export const WIRE_SAMPLES: Readonly<
  Record<string, { readonly requests: readonly unknown[]; readonly responses: readonly unknown[] }>
> = {
  '/csi.v1.Identity/GetPluginInfo': {
    requests: [{}],
    responses: [
      {},
      {
        name: 'secrets-store.csi.k8s.io',
        vendor_version: 'v0.1.0',
        manifest: awkwardKeys({ url: UNICODE, long: HUGE }),
      },
    ],
  },
  '/csi.v1.Identity/GetPluginCapabilities': {
    requests: [{}],
    responses: [
      {},
      { capabilities: [] },
      {
        capabilities: [
          ...['UNKNOWN', 'CONTROLLER_SERVICE', 'VOLUME_ACCESSIBILITY_CONSTRAINTS', 'GROUP_CONTROLLER_SERVICE'].map(
            (type) => ({ service: { type } }),
          ),
          ...['UNKNOWN', 'ONLINE', 'OFFLINE'].map((type) => ({ volume_expansion: { type }, type: 'volume_expansion' })),
          {},
          { service: {} },
          { service: { type: 99 } },
          { volume_expansion: { type: -1 } },
          { service: { type: 2 } },
        ],
      },
    ],
  },
  '/csi.v1.Identity/Probe': {
    requests: [{}],
    responses: [{}, { ready: { value: true } }, { ready: { value: false } }, { ready: {} }, { ready: null }],
  },
  '/csi.v1.Controller/ControllerGetCapabilities': {
    requests: [{}],
    responses: [
      { capabilities: [{ rpc: { type: 'UNKNOWN' } }] },
      {
        capabilities: [
          ...[
            'UNKNOWN',
            'CREATE_DELETE_VOLUME',
            'PUBLISH_UNPUBLISH_VOLUME',
            'LIST_VOLUMES',
            'GET_CAPACITY',
            'CREATE_DELETE_SNAPSHOT',
            'LIST_SNAPSHOTS',
            'CLONE_VOLUME',
            'PUBLISH_READONLY',
            'EXPAND_VOLUME',
            'LIST_VOLUMES_PUBLISHED_NODES',
            'VOLUME_CONDITION',
            'GET_VOLUME',
            'SINGLE_NODE_MULTI_WRITER',
            'MODIFY_VOLUME',
          ].map((type) => ({ rpc: { type } })),
          {},
          { rpc: {} },
          { rpc: { type: 42 } },
        ],
      },
    ],
  },
  '/csi.v1.Node/NodePublishVolume': {
    requests: [
      {},
      kubeletPublishRequest(),
      kubeletPublishRequest(7),
      {
        volume_id: LONG,
        target_path: HUGE,
        volume_capability: {},
        readonly: false,
        volume_context: awkwardKeys({ u: UNICODE }),
        secrets: awkwardKeys({}),
      },
      { volume_id: 'v', volume_capability: RICH_CAPABILITY },
      ...ACCESS_MODES.map((mode) => ({
        volume_capability: { block: {}, access_mode: { mode }, access_type: 'block' },
        readonly: true,
      })),
      { volume_capability: { access_mode: { mode: 100 } } },
      { volume_capability: { access_mode: {} } },
      { volume_capability: { mount: {} } },
    ],
    responses: [{}],
  },
  '/csi.v1.Node/NodeUnpublishVolume': {
    requests: [
      {},
      { volume_id: 'csi-1', target_path: '/var/lib/kubelet/pods/x/volumes/kubernetes.io~csi/s/mount' },
      { volume_id: UNICODE, target_path: HUGE },
    ],
    responses: [{}],
  },
  '/csi.v1.Node/NodeGetInfo': {
    requests: [{}],
    responses: [
      {},
      { node_id: 'node-1', max_volumes_per_node: 0 },
      {
        node_id: LONG,
        max_volumes_per_node: 110,
        accessible_topology: { segments: awkwardKeys({ 'topology.kubernetes.io/zone': 'z1' }) },
      },
      { accessible_topology: {} },
      { max_volumes_per_node: -1 },
      { max_volumes_per_node: 2 ** 53 - 1 },
      { max_volumes_per_node: '9007199254740993' },
      { max_volumes_per_node: '9223372036854775807' },
      { max_volumes_per_node: '-9223372036854775808' },
      { max_volumes_per_node: 1.9 },
      { max_volumes_per_node: Infinity },
      { max_volumes_per_node: 2 ** 32 },
    ],
  },
  '/csi.v1.Node/NodeGetCapabilities': {
    requests: [{}],
    responses: [
      {},
      {
        capabilities: [
          ...[
            'UNKNOWN',
            'STAGE_UNSTAGE_VOLUME',
            'GET_VOLUME_STATS',
            'EXPAND_VOLUME',
            'VOLUME_CONDITION',
            'SINGLE_NODE_MULTI_WRITER',
            'VOLUME_MOUNT_GROUP',
          ].map((type) => ({ rpc: { type } })),
          {},
          { rpc: { type: 77 } },
          { rpc: { type: 6 }, type: 'rpc' },
        ],
      },
    ],
  },
  '/csi.v1.Node/NodeStageVolume': {
    requests: [
      {},
      {
        volume_id: 'v',
        publish_context: { a: 'b' },
        staging_target_path: '/staging',
        volume_capability: RICH_CAPABILITY,
        secrets: awkwardKeys({ s: 't' }),
        volume_context: POD_CONTEXT,
      },
      { volume_capability: { block: {} } },
    ],
    responses: [{}],
  },
  '/csi.v1.Node/NodeUnstageVolume': {
    requests: [{}, { volume_id: 'v', staging_target_path: '/staging' }],
    responses: [{}],
  },
  '/csi.v1.Node/NodeGetVolumeStats': {
    requests: [{}, { volume_id: 'v', volume_path: '/target', staging_target_path: '/staging' }],
    responses: [
      {},
      {
        usage: [
          { available: 1, total: 2, used: 3, unit: 'BYTES' },
          { available: 0, total: '9007199254740993', used: -5, unit: 'INODES' },
          {},
          { unit: 'UNKNOWN' },
          { unit: 9 },
        ],
        volume_condition: { abnormal: true, message: UNICODE },
      },
      { volume_condition: {} },
    ],
  },
  '/csi.v1.Node/NodeExpandVolume': {
    requests: [
      {},
      {
        volume_id: 'v',
        volume_path: '/target',
        capacity_range: { required_bytes: 2 ** 30, limit_bytes: '9223372036854775807' },
        staging_target_path: '/staging',
        volume_capability: RICH_CAPABILITY,
        secrets: { a: 'b' },
      },
      { capacity_range: {} },
    ],
    responses: [
      {},
      { capacity_bytes: 5 },
      { capacity_bytes: -1 },
      { capacity_bytes: { low: 1, high: 1, unsigned: false } },
    ],
  },
  '/v1alpha1.CSIDriverProvider/Version': {
    requests: [{}, { version: 'v1alpha1' }],
    responses: [{}, { version: 'v1alpha1', runtime_name: 'secrets-store-csi-file', runtime_version: '0.1.0' }],
  },
  '/v1alpha1.CSIDriverProvider/Mount': {
    requests: [
      {},
      {
        attributes: JSON.stringify({ ...POD_CONTEXT, objects: LONG }),
        secrets: '{}',
        target_path: '/var/lib/kubelet/pods/x/volumes/kubernetes.io~csi/s/mount',
        permission: '420',
        current_object_version: [
          { id: 'a', version: '1' },
          { id: '', version: '' },
          { id: UNICODE, version: HUGE },
          {},
        ],
      },
    ],
    responses: [
      {},
      {
        object_version: [{ id: 'db/password', version: '3' }, { id: '', version: '' }, {}],
        error: { code: 'AccessDenied' },
        files: [
          { path: 'db/password', mode: 0o644, contents: Buffer.from('hunter2') },
          { path: UNICODE, mode: 0, contents: Buffer.alloc(0) },
          { path: 'bin', mode: 0o400, contents: Buffer.from([0, 255, 10, 13, 0x80]) },
          { path: 'neg', mode: -1, contents: Buffer.from('a') },
          { path: 'max', mode: 2147483647, contents: Buffer.alloc(70000, 7) },
          { path: 'base64', contents: 'aGVsbG8=' },
          {},
          { path: 'u8', contents: new Uint8Array([1, 2, 3]) },
        ],
      },
      { error: {} },
      { error: { code: '' }, files: [] },
    ],
  },
};
