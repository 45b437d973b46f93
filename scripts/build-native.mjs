// Builds the optional native addons with the node-gyp that npm bundles: mount(2)/umount2(2)
// for the driver (native/mount-syscalls.c) and the exec provider's process reaper
// (native/process-reaper.c: subreaper, waitpid of adopted helper descendants). Skipped when
// both are newer than their sources. Never fatal: without make or a C compiler, or when the
// build fails, it says so and exits 0; the driver then runs the mount program instead
// (slower), and the exec provider warns that a helper's descendants that leave its process
// group (setsid) can outlive it.
// `npm ci` does not build it: package.json sets "gypfile": false, because npm would
// otherwise run `node-gyp rebuild` at install for the root binding.gyp and fail there.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';

const ADDONS = ['build/Release/mount_syscalls.node', 'build/Release/process_reaper.node'];
const ADDON = ADDONS.join(' and ');
const SOURCES = ['native/mount-syscalls.c', 'native/process-reaper.c', 'binding.gyp'];
const FALLBACK =
  "the driver will use the mount program, and the exec provider can't stop a helper's descendants that leave its process group";

if (process.platform !== 'linux') process.exit(0);
const fresh = (addon) => existsSync(addon) && SOURCES.every((s) => statSync(s).mtimeMs <= statSync(addon).mtimeMs);
if (ADDONS.every(fresh)) process.exit(0);

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Whether `command` (a path, or a name looked up in PATH) can be run. */
function runnable(command) {
  if (command.includes('/')) return executable(isAbsolute(command) ? command : join(process.cwd(), command));
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && executable(join(dir, command)));
}

// What gyp's Makefile runs: make, and $CC (default cc) for a C source.
const compiler = (process.env.CC ?? '').trim().split(/\s+/)[0] || 'cc';
const missing = ['make', compiler].filter((c) => !runnable(c));
if (missing.length > 0) {
  console.warn(`build-native: skipped the optional native addons (${missing.join(' and ')} not found); ${FALLBACK}`);
  process.exit(0);
}

const candidates = [
  process.env.npm_config_node_gyp,
  join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
  '/usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
].filter(Boolean);
const nodeGyp = candidates.find((c) => existsSync(c));
if (!nodeGyp) {
  console.warn(`build-native: skipped the optional native addons (node-gyp not found); ${FALLBACK}`);
  process.exit(0);
}

/** The lines of node-gyp's stderr that say what went wrong, without its banner. */
function reason(stderr) {
  const noise = /^gyp (info|http)|^gyp ERR! (System|command|cwd|node -v|node-gyp -v|\$npm_|not ok|stack\s+at )|^\s*at /;
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !noise.test(l));
  return lines.slice(-3).join(' | ') || 'node-gyp failed';
}

// Headers for the running Node: the distribution's own (no download) when present.
const nodedir = process.env.npm_config_nodedir || (existsSync('/usr/include/node/node_api.h') ? '/usr' : undefined);
try {
  execFileSync(process.execPath, [nodeGyp, 'rebuild', ...(nodedir ? [`--nodedir=${nodedir}`] : [])], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  console.log(`build-native: built ${ADDON}`);
} catch (err) {
  console.warn(
    `build-native: could not build the optional native addons (${reason(String(err.stderr ?? err))}); ${FALLBACK}`,
  );
}
