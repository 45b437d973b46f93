import { SscError } from '../../lib/errors.js';

/**
 * The one spelling of a path: empty and "." elements and trailing slashes removed, so
 * `/a//b`, `/a/./b` and `/a/b/` are the same key. Lexical only: it
 * neither validates nor resolves symlinks, and leaves ".." elements alone.
 */
export function cleanTargetPath(path: string): string {
  const elements = path.split('/').filter((e) => e !== '' && e !== '.');
  const joined = elements.join('/');
  return path.startsWith('/') ? `/${joined}` : joined;
}

function invalid(message: string): SscError {
  return new SscError('invalid-argument', message, { reason: 'InvalidRequest' });
}

/**
 * A CSI request's target_path in its canonical spelling, the key every lock and memory
 * of a volume uses. Kubelet always sends absolute, clean paths, which come back unchanged;
 * relative paths, ".." elements, NUL bytes and "/" itself are refused with INVALID_ARGUMENT.
 */
export function canonicalTargetPath(raw: string): string {
  if (raw.includes('\0')) throw invalid(`Target path ${JSON.stringify(raw)} must not contain a NUL byte`);
  if (!raw.startsWith('/') || raw.split('/').includes('..')) {
    throw invalid(`Target path ${JSON.stringify(raw)} must be an absolute path without ".." elements`);
  }
  const clean = cleanTargetPath(raw);
  if (clean === '/')
    throw invalid(`Target path ${JSON.stringify(raw)} is the root directory: name a directory for the volume`);
  return clean;
}
