import { expect } from 'chai';
import { parseListenAddress } from '../../proto/runtime/http-server.js';

describe('parseListenAddress', () => {
  const valid: [string, string | undefined, number][] = [
    [':8095', undefined, 8095],
    ['127.0.0.1:8095', '127.0.0.1', 8095],
    ['0.0.0.0:80', '0.0.0.0', 80],
    ['localhost:0', 'localhost', 0],
    ['[::1]:9090', '::1', 9090],
    ['[::]:65535', '::', 65535],
    [' :8095 ', undefined, 8095],
  ];
  for (const [addr, host, port] of valid) {
    it(`${JSON.stringify(addr)} → host ${String(host)}, port ${port}`, () => {
      expect(parseListenAddress(addr)).to.deep.equal({ host, port });
    });
  }
  const shape: string[] = ['8095', 'localhost', '', ':', ':abc', '::1:8095', 'a:b:80', ':-1', '[::1]', 'host:80/x'];
  for (const addr of shape) {
    it(`rejects ${JSON.stringify(addr)}`, () => {
      expect(() => parseListenAddress(addr)).to.throw(`address "${addr}" must look like :8095 or 127.0.0.1:8095`);
    });
  }
  for (const addr of [':65536', '127.0.0.1:99999']) {
    it(`rejects the port of ${addr}`, () => expect(() => parseListenAddress(addr)).to.throw(`address "${addr}" has an invalid port`));
  }
});
