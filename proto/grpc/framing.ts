// Length-Prefixed-Message (grpc/doc/PROTOCOL-HTTP2.md): a 1-byte Compressed-Flag, a
// 4-byte big-endian Message-Length, then the message. DATA frame boundaries say nothing
// about message boundaries, so messages are reassembled from arbitrary chunks.

/** Bytes before each message: the compressed flag and the length. */
export const FRAME_HEADER_LENGTH = 5;

/** `message` with its 5-byte prefix, ready for one DATA write. */
export function frameMessage(message: Uint8Array, compressed = false): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + message.length);
  frame[0] = compressed ? 1 : 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, FRAME_HEADER_LENGTH);
  return frame;
}

/** One received message: its bytes as sent and whether the sender compressed them. */
export interface ReceivedMessage {
  readonly compressed: boolean;
  readonly bytes: Buffer;
}

/**
 * Why the byte stream stopped making sense: a declared length over the limit (known from
 * the prefix alone, before buffering the message), more messages than allowed, or a
 * compressed flag other than 0 or 1.
 */
export type FramingProblem =
  | { readonly kind: 'too-large'; readonly length: number; readonly max: number }
  | { readonly kind: 'too-many'; readonly max: number }
  | { readonly kind: 'bad-flag'; readonly flag: number };

/**
 * Reassembles messages from DATA chunks, never holding more than one message of at most
 * `maxMessageLength` bytes plus its prefix. After a problem it takes nothing more.
 */
export class MessageDeframer {
  readonly messages: ReceivedMessage[] = [];
  private readonly header = Buffer.alloc(FRAME_HEADER_LENGTH);
  private headerFill = 0;
  private body: Buffer | undefined;
  private bodyFill = 0;
  private compressed = false;
  private problem: FramingProblem | undefined;

  constructor(private readonly maxMessageLength: number, private readonly maxMessages = Infinity) {}

  /** Takes the next chunk; returns the problem it revealed, if any (and keeps returning it). */
  push(chunk: Uint8Array): FramingProblem | undefined {
    let at = 0;
    while (at < chunk.length && !this.problem) {
      if (this.body === undefined) at = this.takeHeader(chunk, at);
      else at = this.takeBody(chunk, at);
    }
    return this.problem;
  }

  /** Bytes of a message begun but not finished (non-zero at the end of the stream means it was cut short). */
  get pendingBytes(): number {
    return this.headerFill + this.bodyFill;
  }

  private takeHeader(chunk: Uint8Array, at: number): number {
    if (this.headerFill === 0 && this.messages.length >= this.maxMessages) {
      this.problem = { kind: 'too-many', max: this.maxMessages };
      return at;
    }
    const n = Math.min(FRAME_HEADER_LENGTH - this.headerFill, chunk.length - at);
    this.header.set(chunk.subarray(at, at + n), this.headerFill);
    this.headerFill += n;
    if (this.headerFill < FRAME_HEADER_LENGTH) return at + n;
    const flag = this.header[0] as number;
    const length = this.header.readUInt32BE(1);
    if (flag > 1) this.problem = { kind: 'bad-flag', flag };
    else if (length > this.maxMessageLength) this.problem = { kind: 'too-large', length, max: this.maxMessageLength };
    else {
      this.compressed = flag === 1;
      this.body = Buffer.allocUnsafe(length);
      this.bodyFill = 0;
      this.finishIfComplete();
    }
    return at + n;
  }

  private takeBody(chunk: Uint8Array, at: number): number {
    const body = this.body as Buffer;
    const n = Math.min(body.length - this.bodyFill, chunk.length - at);
    body.set(chunk.subarray(at, at + n), this.bodyFill);
    this.bodyFill += n;
    this.finishIfComplete();
    return at + n;
  }

  private finishIfComplete(): void {
    const body = this.body as Buffer;
    if (this.bodyFill < body.length) return;
    this.messages.push({ compressed: this.compressed, bytes: body });
    this.body = undefined;
    this.headerFill = 0;
    this.bodyFill = 0;
  }
}
