import { expect } from 'chai';
import { E2E_IMAGE } from '../../support/e2e-image.js';
import { containerdConfig, containerdSocket, kubeletConfig } from '../../support/e2e-runtime.js';

// The end-to-end node's configs (test/support/e2e-runtime.ts): every setting the issue
// found necessary on these machines, and nothing outside the node's temp dir.

describe('e2e node: containerd config', () => {
  const text = containerdConfig('/tmp/ssc-e2e-x');
  const cases: [string, RegExp][] = [
    ['config format of containerd 1.6', /^version = 2$/m],
    ['root under the node dir', /^root = "\/tmp\/ssc-e2e-x\/containerd\/root"$/m],
    ['state under the node dir', /^state = "\/tmp\/ssc-e2e-x\/containerd\/state"$/m],
    ['its own gRPC socket', /^\[grpc\]\n {2}address = "\/tmp\/ssc-e2e-x\/containerd\/containerd\.sock"$/m],
    ['its own ttrpc socket', /^\[ttrpc\]\n {2}address = "\/tmp\/ssc-e2e-x\/containerd\/containerd\.sock\.ttrpc"$/m],
    ['our image as the sandbox image', new RegExp(`^ {2}sandbox_image = "${E2E_IMAGE}"$`, 'm')],
    ['oom_score_adj restricted (root lacks CAP_SYS_RESOURCE)', /^ {2}restrict_oom_score_adj = true$/m],
    ['cgroupfs, not systemd', /^ {2}SystemdCgroup = false$/m],
    ['the opt plugin (writes /opt/containerd) disabled', /"io\.containerd\.internal\.v1\.opt"/],
    ['CNI dirs under the node dir', /^ {2}conf_dir = "\/tmp\/ssc-e2e-x\/containerd\/cni-conf"$/m],
  ];
  for (const [name, pattern] of cases) it(name, () => expect(text).to.match(pattern));
  it('names its socket as containerdSocket does', () =>
    expect(text).to.include(`"${containerdSocket('/tmp/ssc-e2e-x')}"`));
});

describe('e2e node: kubelet config', () => {
  const config = JSON.parse(
    kubeletConfig(
      {
        dir: '/tmp/ssc-e2e-x',
        rootDir: '/tmp/ssc-e2e-x/kubelet',
        podLogsDir: '/tmp/ssc-e2e-x/pod-logs',
        cgroupRoot: '/ssc-e2e-abc',
        port: 4321,
      },
      '/tmp/ssc-e2e-x/containerd/containerd.sock',
    ),
  ) as Record<string, unknown>;
  const cases: [string, string, unknown][] = [
    ['cgroup v1 allowed (these VMs are v1)', 'failCgroupV1', false],
    ['cgroupfs like containerd', 'cgroupDriver', 'cgroupfs'],
    ["pods under the node's own cgroup root", 'cgroupRoot', '/ssc-e2e-abc'],
    ["the node's containerd", 'containerRuntimeEndpoint', 'unix:///tmp/ssc-e2e-x/containerd/containerd.sock'],
    ['pod logs under the node dir', 'podLogsDir', '/tmp/ssc-e2e-x/pod-logs'],
    ['flexvolume dir under the node dir', 'volumePluginDir', '/tmp/ssc-e2e-x/volume-plugins'],
    ['serves on loopback only', 'address', '127.0.0.1'],
    ['on the port given', 'port', 4321],
    ['no read-only port', 'readOnlyPort', 0],
    ['no healthz port', 'healthzPort', 0],
    [
      'anonymous access, no webhook (a throwaway node)',
      'authentication',
      { anonymous: { enabled: true }, webhook: { enabled: false } },
    ],
    ['no authorization webhook', 'authorization', { mode: 'AlwaysAllow' }],
    ['never collects the imported image', 'imageGCHighThresholdPercent', 100],
  ];
  for (const [name, key, value] of cases) it(name, () => expect(config[key]).to.deep.equal(value));
});
