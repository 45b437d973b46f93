import { expect } from 'chai';
import { socketPathFromEndpoint } from '../../../../lib/grpc/unix-socket.js';
import { SscError } from '../../../../lib/errors.js';

describe('socketPathFromEndpoint', () => {
  const valid: [string, string][] = [
    ['unix:///csi/csi.sock', '/csi/csi.sock'],
    ['unix:/csi/csi.sock', '/csi/csi.sock'],
    ['/csi/csi.sock', '/csi/csi.sock'],
    [
      '  unix:///var/lib/kubelet/plugins/csi-secrets-store/csi.sock\n',
      '/var/lib/kubelet/plugins/csi-secrets-store/csi.sock',
    ],
    ['csi.sock', '/csi.sock'],
  ];
  for (const [endpoint, path] of valid) {
    it(`${JSON.stringify(endpoint)} → ${path}`, () => expect(socketPathFromEndpoint(endpoint)).to.equal(path));
  }
  const invalid: [string, string][] = [
    ['tcp://127.0.0.1:10000', 'endpoint "tcp://127.0.0.1:10000" must be a unix socket (unix:///path)'],
    ['http://x/y', 'endpoint "http://x/y" must be a unix socket (unix:///path)'],
    ['unix://', 'endpoint "unix://" has no socket path'],
    ['unix:', 'endpoint "unix:" has no socket path'],
    ['', 'endpoint "" has no socket path'],
    ['/', 'endpoint "/" has no socket path'],
  ];
  for (const [endpoint, message] of invalid) {
    it(`rejects ${JSON.stringify(endpoint)}`, () => {
      let caught: unknown;
      try {
        socketPathFromEndpoint(endpoint);
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(SscError);
      expect((caught as SscError).kind).to.equal('invalid-argument');
      expect((caught as SscError).message).to.equal(message);
    });
  }
});
