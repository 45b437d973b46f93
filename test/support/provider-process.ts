// A real provider process (`secrets-store-csi provider <name>`) for integration tests,
// and a v1alpha1 client calling its Mount as the driver does.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli, type Child } from '../../bin/child-process.js';
import * as grpc from '@grpc/grpc-js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { providerProto } from '../../lib/grpc/grpc-proto.js';

/** How a Mount failed, as the provider answered it. */
export interface MountFailure {
  /** The gRPC status name: PERMISSION_DENIED, NOT_FOUND, … */
  readonly code: string;
  readonly details: string;
}

/** A running provider process and a client to it. */
export interface ProviderProcess {
  readonly child: Child;
  readonly work: string;
  readonly providersDir: string;
  /** Mount with these attributes (a JSON object of strings) as the driver would call it. */
  mount(attributes: Record<string, string>, options?: MountOptions): Promise<MountResponse__Output>;
  /** The status a Mount fails with. */
  mountError(attributes: Record<string, string>, options?: MountOptions): Promise<MountFailure>;
  /** Its /metrics as `name{labels}` → value (started with `--health-addr=127.0.0.1:0`). */
  metrics(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

/** Prometheus text format as `name{labels}` → value (comments skipped; labels as written). */
export function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) values.set(m[1] as string, Number(m[2]));
  }
  return values;
}

/** Options of one Mount call. */
export interface MountOptions {
  /** What the driver has mounted: object id → version. */
  readonly current?: Record<string, string>;
  /** The call's deadline from now (default 20 s). */
  readonly deadlineMs?: number;
  /** The nodePublishSecretRef data (default none: `{}`). */
  readonly secrets?: Record<string, string>;
  /** The volume's target path (default one path for every call). */
  readonly targetPath?: string;
}

/**
 * Starts `secrets-store-csi provider <name> <args>` with `env` (nothing inherited but PATH
 * and HOME unless given), its socket `<name>.sock` in `providersDir` (default: in its temp
 * dir). `extraArgs` gets the temp dir, for arguments that name files in it.
 */
export async function startProviderProcess(
  name: string,
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
  options: { providersDir?: string; extraArgs?: (work: string) => readonly string[] } = {},
): Promise<ProviderProcess> {
  const work = await mkdtemp(join(tmpdir(), `ssc-${name}-`));
  const providersDir = options.providersDir ?? join(work, 'providers');
  await mkdir(providersDir, { recursive: true });
  let child: Child;
  try {
    child = await startCli(
      [
        'provider',
        name,
        `--endpoint=unix://${join(providersDir, `${name}.sock`)}`,
        ...(options.extraArgs?.(work) ?? []),
        '--log-level=debug',
        ...args,
      ],
      /provider started/,
      { env: { PATH: process.env['PATH'], HOME: work, ...env } },
    );
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
  const healthPort = /"healthPort":(\d+)/.exec(child.stderr())?.[1];
  const Client = providerProto().CSIDriverProvider;
  const client = new Client(`unix://${join(providersDir, `${name}.sock`)}`, grpc.credentials.createInsecure());
  const mount = (attributes: Record<string, string>, options: MountOptions = {}) =>
    new Promise<MountResponse__Output>((resolve, reject) => {
      client.Mount(
        {
          attributes: JSON.stringify(attributes),
          secrets: JSON.stringify(options.secrets ?? {}),
          permission: '420',
          target_path: options.targetPath ?? '/var/lib/kubelet/pods/x/volumes/v',
          current_object_version: Object.entries(options.current ?? {}).map(([id, version]) => ({ id, version })),
        },
        { deadline: new Date(Date.now() + (options.deadlineMs ?? 20_000)) },
        (err, res) => (err ? reject(err) : resolve(res as MountResponse__Output)),
      );
    });
  return {
    child,
    work,
    providersDir,
    mount,
    mountError: (attributes, options) =>
      mount(attributes, options).then(
        () => {
          throw new Error('expected the Mount to fail');
        },
        (e: grpc.ServiceError) => {
          if (typeof e.code !== 'number') throw e;
          return { code: grpc.status[e.code] ?? String(e.code), details: e.details };
        },
      ),
    async metrics() {
      if (healthPort === undefined) throw new Error(`the ${name} provider was started without --health-addr`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
      return parseMetrics(await res.text());
    },
    async stop() {
      client.close();
      await child.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

/** Pod attributes the driver adds (volume context) for pod `name` of service account `ns/sa` (default `default/app`). */
export function podAttributes(name = 'web-0', serviceAccount = 'default/app'): Record<string, string> {
  const [ns, sa] = serviceAccount.split('/') as [string, string];
  return {
    'csi.storage.k8s.io/pod.name': name,
    'csi.storage.k8s.io/pod.namespace': ns,
    'csi.storage.k8s.io/pod.uid': `uid-${name}`,
    'csi.storage.k8s.io/serviceAccount.name': sa,
  };
}
