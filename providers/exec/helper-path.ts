// Finds a helper named by a class: a regular executable file directly in --helpers-dir,
// after symlinks are resolved, so a link in the directory cannot lead a class to any
// other program on the node. The resolved path is what runs.
import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import { helperNameProblem } from './parameters.js';
import { invalidParameter } from './exec-errors.js';

function notUsable(name: string, why: string): SscError {
  return new SscError('failed-precondition', `exec provider: helper ${quoted(name, 64)} ${why}`, {
    reason: 'HelperNotFound',
  });
}

/**
 * The real path of helper `name` in `helpersDir`. Throws INVALID_ARGUMENT for a name that
 * is not a plain file name, PERMISSION_DENIED (`HelperOutsideDir`) when it resolves
 * outside the directory, FAILED_PRECONDITION (`HelperNotFound`) when it is missing, not a
 * regular file or not executable, UNAVAILABLE (`HelpersDirMissing`) without the directory.
 */
export async function resolveHelper(helpersDir: string, name: string): Promise<string> {
  const problem = helperNameProblem(name);
  if (problem) throw invalidParameter(`helper ${quoted(name, 64)} ${problem}`);
  let dir: string;
  try {
    dir = await realpath(helpersDir);
  } catch (err) {
    throw new SscError(
      'unavailable',
      `exec provider: --helpers-dir ${quoted(helpersDir, 256)} cannot be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      { reason: 'HelpersDirMissing' },
    );
  }
  let real: string;
  try {
    real = await realpath(join(dir, name));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw notUsable(name, code === 'ENOENT' ? 'is not in --helpers-dir' : `cannot be resolved (${code})`);
  }
  if (dirname(real) !== dir) {
    throw new SscError(
      'permission-denied',
      `exec provider: helper ${quoted(name, 64)} resolves outside --helpers-dir; a helper must be a file directly in it`,
      { reason: 'HelperOutsideDir' },
    );
  }
  const info = await stat(real).catch(() => undefined);
  if (!info?.isFile()) throw notUsable(name, 'is not a regular file');
  try {
    await access(real, constants.X_OK);
  } catch {
    throw notUsable(name, 'is not executable by the provider');
  }
  return real;
}
