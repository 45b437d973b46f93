import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { GrpcError, GrpcStatus } from '../../proto/grpc/status.js';
import { UnaryClient } from '../../proto/grpc/unary-client.js';
import { UnaryServer } from '../../proto/grpc/unary-server.js';
import { rejection } from '../support/deferred.js';
import { bytesMethod, socketDir, type SocketDir } from '../support/grpc-peers.js';
import { requirePeer } from '../support/peers.js';

// proto/grpc against grpc-go, the implementation of kubelet, csi-sanity, upstream's driver
// and its providers: csi-sanity (a grpc-go client) calling UnaryServer, and UnaryClient
// calling upstream's fake provider (a grpc-go server). Messages are hand-encoded protobuf.

const execFileAsync = promisify(execFile);

/** A protobuf string field. */
function field(tag: number, value: string): Buffer {
  const bytes = Buffer.from(value);
  return Buffer.concat([Buffer.from([(tag << 3) | 2, bytes.length]), bytes]);
}

describe('proto/grpc against grpc-go peers', function () {
  this.timeout(60_000);
  let dir: SocketDir;
  before(async () => { dir = await socketDir(); });
  after(async () => { await dir.remove(); });

  it('csi-sanity\'s Identity Service specs pass against UnaryServer, and its hang-ups are not reported as errors', async () => {
    const socket = dir.path('csi.sock');
    const reported: string[] = [];
    const served: string[] = [];
    const server = new UnaryServer({ onError: (what, err) => reported.push(`${what}: ${String(err)}`) });
    const answers: [string, Buffer][] = [
      ['/csi.v1.Identity/GetPluginInfo', Buffer.concat([field(1, 'test.csi.example.com'), field(2, '1.0.0')])],
      ['/csi.v1.Identity/Probe', Buffer.alloc(0)],
      ['/csi.v1.Identity/GetPluginCapabilities', Buffer.alloc(0)],
    ];
    for (const [path, answer] of answers) server.add(bytesMethod(path), async () => { served.push(path); return answer; });
    await server.listen(socket);
    try {
      const { stdout } = await execFileAsync(requirePeer('CSI_SANITY'), [`--csi.endpoint=unix://${socket}`, '-ginkgo.focus=Identity Service', '-ginkgo.no-color'], { timeout: 50_000 });
      expect(stdout).to.match(/3 Passed \| 0 Failed/);
      expect([...new Set(served)].sort()).to.deep.equal(answers.map(([p]) => p).sort());
    } finally {
      await server.tryShutdown();
    }
    expect(reported).to.deep.equal([]);
  });

  describe('UnaryClient calling upstream\'s fake provider', () => {
    let provider: ChildProcess;
    let client: UnaryClient;
    const VERSION = '/v1alpha1.CSIDriverProvider/Version';
    const inSeconds = () => ({ deadline: new Date(Date.now() + 5000) });

    before(async () => {
      const socket = dir.path('fake.sock');
      const config = dir.path('fake.json');
      await writeFile(config, JSON.stringify({ objects: {}, files: [] }));
      provider = spawn(requirePeer('UPSTREAM_FAKE_PROVIDER'), ['--endpoint', `unix://${socket}`, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
      await new Promise<void>((resolve, reject) => {
        let out = '';
        const seen = (c: Buffer) => { out += c.toString(); if (out.includes('listening on')) resolve(); };
        provider.stdout?.on('data', seen);
        provider.stderr?.on('data', seen);
        provider.once('exit', (code) => reject(new Error(`fake provider exited with ${code}: ${out}`)));
      });
      client = new UnaryClient(socket);
    });
    after(() => {
      client?.close();
      provider?.kill('SIGKILL');
    });

    it('gets the Version answer', async () => {
      const answer = Buffer.from(await client.callRaw(VERSION, field(1, 'v1alpha1'), inSeconds()));
      expect(answer.equals(Buffer.concat([field(1, 'v1alpha1'), field(2, 'fakeprovider'), field(3, '0.0.10')])), answer.toString('latin1')).to.equal(true);
    });

    it('gets grpc-go\'s UNIMPLEMENTED for an unknown method and INTERNAL for bytes it cannot parse', async () => {
      const unknown = await rejection(client.callRaw('/v1alpha1.CSIDriverProvider/Nope', Buffer.alloc(0), inSeconds())) as GrpcError;
      expect([unknown.code, unknown.details]).to.deep.equal([GrpcStatus.UNIMPLEMENTED, 'unknown method Nope for service v1alpha1.CSIDriverProvider']);
      const bad = await rejection(client.callRaw(VERSION, Buffer.from([0xff, 0xff]), inSeconds())) as GrpcError;
      expect(bad.code).to.equal(GrpcStatus.INTERNAL);
      expect(bad.details).to.match(/unmarshal/);
    });
  });
});
