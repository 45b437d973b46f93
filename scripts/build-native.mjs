// Builds the optional mount(2)/umount2(2) addon (native/mount-syscalls.c) with the
// node-gyp that npm bundles. Skipped when the addon is newer than its source. A failed
// build is not fatal: the driver then runs the mount program instead (slower).
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ADDON = 'build/Release/mount_syscalls.node';
const SOURCES = ['native/mount-syscalls.c', 'binding.gyp'];

if (process.platform !== 'linux') process.exit(0);
if (existsSync(ADDON) && SOURCES.every((s) => statSync(s).mtimeMs <= statSync(ADDON).mtimeMs)) process.exit(0);

const candidates = [
  process.env.npm_config_node_gyp,
  join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
  '/usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
].filter(Boolean);
const nodeGyp = candidates.find((c) => existsSync(c));
if (!nodeGyp) {
  console.warn('build-native: node-gyp not found; the driver will use the mount program');
  process.exit(0);
}
// Headers for the running Node: the distribution's own (no download) when present.
const nodedir = process.env.npm_config_nodedir || (existsSync('/usr/include/node/node_api.h') ? '/usr' : undefined);
try {
  execFileSync(process.execPath, [nodeGyp, 'rebuild', ...(nodedir ? [`--nodedir=${nodedir}`] : [])], { stdio: ['ignore', 'ignore', 'pipe'] });
  console.log(`build-native: built ${ADDON}`);
} catch (err) {
  console.warn(`build-native: could not build the mount addon (${String(err.stderr ?? err).split('\n').filter(Boolean).slice(-3).join(' | ')}); the driver will use the mount program`);
}
