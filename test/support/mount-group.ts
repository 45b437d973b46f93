// What the fsGroup ownership tests look at: requests carrying the pod's
// fsGroup as kubelet sends it, what is on disk below a target and who may read it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstatSync, readdirSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import type { DriverStack } from './driver-stack.js';

/** The volume record a local-mode driver keeps in each volume (driver/rotation/volume-record.ts). */
export const VOLUME_RECORD = '..secrets-store-volume.json';

/** The request with volume_mount_group set as kubelet sets it (the decimal fsGroup). */
export function withGroup(request: NodePublishVolumeRequest, gid: string): NodePublishVolumeRequest {
  return {
    ...request,
    volume_capability: {
      ...request.volume_capability,
      mount: { ...request.volume_capability?.mount, volume_mount_group: gid },
    },
  };
}

/** One thing below a target, as lstat sees it. */
export interface Entry {
  readonly path: string;
  readonly gid: number;
  readonly mode: number;
  readonly link: boolean;
}

/** Everything at and below `dir` (links not followed) except the driver's own volume record. */
export function walk(dir: string, rel = '.'): Entry[] {
  const s = lstatSync(join(dir, rel));
  const entry = { path: rel, gid: s.gid, mode: s.mode & 0o7777, link: s.isSymbolicLink() };
  if (!s.isDirectory()) return [entry];
  return [
    entry,
    ...readdirSync(join(dir, rel))
      .filter((n) => n !== VOLUME_RECORD)
      .sort()
      .flatMap((n) => walk(dir, rel === '.' ? n : `${rel}/${n}`)),
  ];
}

/** Paths at and below `dir` whose group is not `gid` (links not followed; the volume record excluded). */
export function notInGroup(dir: string, gid: number): string[] {
  return walk(dir)
    .filter((e) => e.gid !== gid)
    .map((e) => e.path);
}

/** Runs `cat path` as uid/gid (no supplementary groups, as libuv drops them): exit code and output. */
export async function readAs(path: string, uid: number, gid: number): Promise<{ code: number | null; out: string }> {
  const child = spawn('cat', [path], { uid, gid, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, out };
}

/** A target whose parent directories anyone may traverse, as a container sees only its mount. */
export async function reachableTarget(stack: DriverStack, name: string): Promise<string> {
  const target = stack.targetPath(name);
  await chmod(stack.work, 0o755);
  await mkdir(dirname(target), { recursive: true, mode: 0o755 });
  return target;
}
