// What demo-sync does with its local cluster: runs the kubectl peer (printing each command
// and its output as a user would see them), and waits for an object to reach a state
// through a watch (an event, not a polling timer).
import { execFile } from 'node:child_process';
import { relative } from 'node:path';
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import type { KubeList, KubeObject, WatchEvent } from '../driver/k8s/client/types.js';
import { line } from './demo-output.js';
import type { DemoSession } from './demo-session.js';

/** Runs `kubectl <args>` against the demo's cluster; prints the command and its output. */
export type Kubectl = (args: readonly string[]) => Promise<string>;

/** The command as the user would type it from the repository: paths under it made relative. */
export function shownCommand(args: readonly string[], repo: string): string {
  const shown = args.map((a) => (a.startsWith(repo) ? relative(repo, a) : a));
  return `$ kubectl ${shown.join(' ')}`;
}

/**
 * A Kubectl for `binary` with the admin kubeconfig; HOME is the demo's directory, so
 * kubectl's discovery cache goes with it. Each call is a session step: a signal ends it.
 */
export function kubectlRunner(session: DemoSession, binary: string, kubeconfig: string, repo: string): Kubectl {
  const env = { PATH: process.env['PATH'] ?? '', HOME: session.work, KUBECONFIG: kubeconfig };
  return async (args) => {
    line(shownCommand(args, repo));
    const out = await session.step(
      new Promise<string>((resolve, reject) => {
        execFile(binary, [...args], { env, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`kubectl ${args[0] ?? ''} failed: ${stderr.trim() || err.message}`));
          else resolve(stdout);
        });
      }),
    );
    for (const l of out.trimEnd().split('\n')) if (l !== '') line(`  ${l}`);
    return out;
  };
}

/** How long a wait for the controller's work may take before the demo fails. */
const WAIT_TIMEOUT_MS = 60_000;

/**
 * Waits until the object `name` of the collection `path` satisfies `want` (undefined:
 * absent), from a list then a watch of that one name; resolves with it.
 */
export async function untilObject<T extends KubeObject>(
  api: KubeApi,
  path: string,
  name: string,
  want: (obj: T | undefined) => boolean,
  what: string,
): Promise<T | undefined> {
  const fieldSelector = `metadata.name=${name}`;
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error(`${what}: not within ${WAIT_TIMEOUT_MS / 1000} s`)),
    WAIT_TIMEOUT_MS,
  );
  try {
    for (;;) {
      const list = await api.get<KubeList<T>>(path, { fieldSelector }, abort.signal);
      if (want(list.items[0])) return list.items[0];
      let found: { obj: T | undefined } | undefined;
      const onEvent = (event: WatchEvent) => {
        if (found || !['ADDED', 'MODIFIED', 'DELETED'].includes(event.type)) return;
        const obj = event.type === 'DELETED' ? undefined : (event.object as T);
        if (!want(obj)) return;
        found = { obj };
        abort.abort(new Error('found'));
      };
      const rv = list.metadata?.resourceVersion;
      await api
        .watch(path, { fieldSelector, resourceVersion: rv, timeoutSeconds: 30 }, onEvent, abort.signal)
        .catch((err: unknown) => {
          if (!found) throw err;
        });
      if (found) return found.obj;
    }
  } finally {
    clearTimeout(timer);
  }
}
