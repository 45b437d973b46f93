// Compressed messages (grpc-encoding, Compressed-Flag 1). This transport never compresses
// what it sends, but grpc-js and grpc-go peers may be configured to, so gzip and deflate
// (zlib format, as grpc-js and grpc-go write it) are read, bounded by the receive limit.
import type { InputType, ZlibOptions } from 'node:zlib';
import { GrpcError, GrpcStatus } from './status.js';

/** The grpc-encoding values whose compressed messages this transport can read. */
export type MessageEncoding = 'identity' | 'gzip' | 'deflate';

/** The encoding a grpc-encoding header names (absent means identity), or undefined when unsupported. */
export function messageEncoding(header: string | undefined): MessageEncoding | undefined {
  if (header === undefined || header === '' || header === 'identity') return 'identity';
  if (header === 'gzip' || header === 'deflate') return header;
  return undefined;
}

type Inflater = (buf: InputType, options: ZlibOptions, cb: (err: Error | null, out: Buffer) => void) => void;

/** gunzip or inflate, with node:zlib loaded on first use: peers rarely compress, and it costs RSS. */
async function inflaterFor(encoding: 'gzip' | 'deflate'): Promise<Inflater> {
  const zlib = await import('node:zlib');
  return encoding === 'gzip' ? zlib.gunzip : zlib.inflate;
}

/**
 * The message inside a Compressed-Flag 1 frame. Decompression stops at `maxLength` bytes
 * (zlib's maxOutputLength), so a small "zip bomb" cannot balloon in memory. Rejects with
 * GrpcError: RESOURCE_EXHAUSTED past the limit ("larger than max", the wording clients
 * match), INTERNAL for a flag without a compressing encoding or bytes that do not inflate.
 */
export async function decompressMessage(encoding: MessageEncoding, bytes: Buffer, maxLength: number): Promise<Buffer> {
  if (encoding === 'identity') {
    throw new GrpcError(GrpcStatus.INTERNAL, 'compressed flag set with identity or empty encoding');
  }
  const inflater = await inflaterFor(encoding);
  return new Promise((resolve, reject) => {
    inflater(bytes, { maxOutputLength: Math.max(1, maxLength) }, (err, out) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        reject(new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max after decompression (more than ${maxLength} bytes)`));
      } else if (err) {
        reject(new GrpcError(GrpcStatus.INTERNAL, `could not decompress a ${encoding} message`));
      } else if (out.length > maxLength) {
        reject(new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max after decompression (${out.length} vs. ${maxLength})`));
      } else {
        resolve(out);
      }
    });
  });
}
