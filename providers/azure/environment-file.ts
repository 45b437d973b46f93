// Reads an Azure Stack Hub environment file (`cloudEnvFileName`, AZURE_ENVIRONMENT_FILEPATH)
// for a Mount. A class names the path, so the read is guarded: a regular file only (not
// /dev/zero or a FIFO, which would hang or exhaust the provider) and at most 64 KiB; and
// nothing of its content ever appears in an error.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';

/** Largest environment file read. */
export const MAX_ENVIRONMENT_FILE_BYTES = 64 * 1024;

/** The text of the environment file at `path`; FAILED_PRECONDITION naming the path when it can't be used. */
export function readEnvironmentFile(path: string): string {
  const refuse = (why: string) =>
    new SscError('failed-precondition', `azure provider: cloudEnvFileName ${quoted(path, 200)} ${why}`, {
      reason: 'InvalidParameters',
    });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw refuse(`cannot be opened (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse('is not a regular file');
    if (stat.size > MAX_ENVIRONMENT_FILE_BYTES) throw refuse(`is larger than ${MAX_ENVIRONMENT_FILE_BYTES} bytes`);
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
