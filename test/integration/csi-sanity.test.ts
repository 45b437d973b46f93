import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { requirePeer } from '../support/peers.js';
import { driverLogSince, startDriverStack, type DriverStack } from '../support/driver-stack.js';

/**
 * Specs skipped on purpose (documented in docs/conformance.md):
 * - "Controller Server": this is a node-only driver; CONTROLLER_SERVICE is not advertised.
 * - "should remove target path": it needs CreateVolume from a controller service.
 * csi-sanity itself skips Stage/Unstage, GetVolumeStats, Expand and the
 * "should work"/"idempotent" specs because those capabilities are not advertised.
 */
const SKIP = 'Controller Server|should remove target path';

/** Every spec that applies to this driver; each must pass. */
const EXPECTED_PASSING = [
  'Identity Service GetPluginCapabilities should return appropriate capabilities',
  'Identity Service Probe should return appropriate information',
  'Identity Service GetPluginInfo should return appropriate information',
  'Node Service NodeGetCapabilities should return appropriate capabilities',
  'Node Service NodeGetInfo should return appropriate values',
  'Node Service NodePublishVolume should fail when no volume id is provided',
  'Node Service NodePublishVolume should fail when no target path is provided',
  'Node Service NodePublishVolume should fail when no volume capability is provided',
  'Node Service NodeUnpublishVolume should fail when no volume id is provided',
  'Node Service NodeUnpublishVolume should fail when no target path is provided',
];

interface SpecResult {
  name: string;
  status: string;
}

function parseJunit(xml: string): SpecResult[] {
  return [...xml.matchAll(/<testcase name="\[It\] ([^"]*)"[^>]*status="([^"]*)"/g)].map((m) => ({
    name: (m[1] ?? '').replace(/&#34;/g, '"').replace(/&amp;/g, '&'),
    status: m[2] ?? '',
  }));
}

describe('csi-sanity v5.4.0 conformance (real csi-sanity against the real driver)', function () {
  this.timeout(300_000);
  let stack: DriverStack;
  let results: SpecResult[] = [];
  let output = '';

  before(async () => {
    const sanity = requirePeer('CSI_SANITY');
    stack = await startDriverStack();
    const junit = join(stack.work, 'junit.xml');
    output = await new Promise<string>((resolve) => {
      execFile(
        sanity,
        [
          `--csi.endpoint=${stack.socketPath}`,
          `--csi.mountdir=${join(stack.work, 'sanity-mount')}`,
          `--csi.stagingdir=${join(stack.work, 'sanity-staging')}`,
          `--ginkgo.skip=${SKIP}`,
          `--ginkgo.junit-report=${junit}`,
          '--ginkgo.no-color',
        ],
        { maxBuffer: 16 * 1024 * 1024 },
        (_err, stdout, stderr) => resolve(`${stdout}${stderr}`),
      );
    });
    results = parseJunit(await readFile(junit, 'utf8').catch(() => ''));
  });
  after(async () => {
    await stack?.stop();
  });

  it('reports no failed spec', () => {
    const failed = results.filter((r) => r.status === 'failed');
    expect(
      failed.map((r) => r.name),
      output.slice(-4000),
    ).to.deep.equal([]);
  });

  it("leaves no connection problem in the driver's log (grpc-go clients send a GOAWAY naming their own last stream when they hang up)", () => {
    const grpcLines = driverLogSince(stack, 0).filter((e) => e['message'] === 'gRPC' || e['level'] === 'error');
    expect(grpcLines).to.deep.equal([]);
  });

  for (const spec of EXPECTED_PASSING) {
    it(`passes: ${spec}`, () => {
      expect(results.find((r) => r.name === spec)?.status, output.slice(-2000)).to.equal('passed');
    });
  }
});
