/** One line of /proc/self/mountinfo, the fields the driver uses. */
export interface MountInfoEntry {
  readonly mountPoint: string;
  readonly fsType: string;
  readonly source: string;
}

/** Undoes the kernel's octal escaping of spaces, tabs, newlines and backslashes. */
function unescapeOctal(field: string): string {
  if (!field.includes('\\')) return field;
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/**
 * Parses /proc/self/mountinfo text (proc(5)): field 5 is the mount point; after the
 * " - " separator come the filesystem type and the source.
 */
export function parseMountInfo(text: string): MountInfoEntry[] {
  const entries: MountInfoEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const left = line.slice(0, sep).split(' ');
    const right = line.slice(sep + 3).split(' ');
    const mountPoint = left[4];
    if (mountPoint === undefined) continue;
    entries.push({
      mountPoint: unescapeOctal(mountPoint),
      fsType: right[0] ?? '',
      source: unescapeOctal(right[1] ?? ''),
    });
  }
  return entries;
}

/** The mount points of /proc/self/mountinfo text (unescaped), for O(1) lookups. */
export function mountPointSet(text: string): Set<string> {
  return new Set(parseMountInfo(text).map((e) => e.mountPoint));
}

/** Mount points at or below `dir` in mountinfo text, deepest first (the order to unmount them in). */
export function mountPointsUnder(text: string, dir: string): string[] {
  return [...mountPointSet(text)]
    .filter((p) => p === dir || p.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length || (a < b ? 1 : -1));
}
