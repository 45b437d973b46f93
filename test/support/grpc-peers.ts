// Raw HTTP/2 for what no well-behaved gRPC peer sends: hostile clients on the driver's
// socket. Messages are framed here by hand (the gRPC length prefix) on purpose.
import { connect, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { connect as netConnect } from 'node:net';

/** A gRPC message frame: not compressed, 4-byte big-endian length, the bytes. */
export function grpcFrame(message: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** The usual gRPC request headers for `path`, to alter per test. */
export function grpcRequestHeaders(path: string, extra: OutgoingHttpHeaders = {}): OutgoingHttpHeaders {
  return { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...extra };
}

/** An HTTP/2 session on a Unix socket that never throws: its errors are the test's to provoke. */
export function rawSession(socketPath: string): ClientHttp2Session {
  const session = connect('http://localhost', {
    createConnection: () => netConnect(socketPath),
    maxSendHeaderBlockLength: 10_000_000,
  });
  session.on('error', () => {});
  return session;
}

/** What came back on one raw HTTP/2 request. */
export interface RawExchange {
  readonly headers: IncomingHttpHeaders | undefined;
  readonly trailers: IncomingHttpHeaders | undefined;
  readonly data: Buffer;
  readonly rstCode: number | undefined;
}

/** Sends one HTTP/2 request of `body` chunks to `socketPath` on a fresh session and collects the answer. */
export function rawRequest(
  socketPath: string,
  headers: OutgoingHttpHeaders,
  body: Buffer[] = [],
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const session = rawSession(socketPath);
    const stream = session.request(headers, { endStream: body.length === 0 });
    let responseHeaders: IncomingHttpHeaders | undefined;
    let trailers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on('error', () => {});
    stream.on('response', (h, flags) => {
      responseHeaders = h;
      if (flags & 0x1) trailers = h;
    });
    stream.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('close', () => {
      session.close();
      resolve({ headers: responseHeaders, trailers, data: Buffer.concat(chunks), rstCode: stream.rstCode });
    });
    body.forEach((chunk, i) => (i === body.length - 1 ? stream.end(chunk) : stream.write(chunk)));
  });
}
