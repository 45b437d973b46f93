import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve as resolvePath } from 'node:path';
import type { ApiCredentials, ExecPlugin } from './kubeconfig.js';

/** What one request authenticates with. */
export interface RequestAuth {
  /** The Authorization header value, if any. */
  readonly authorization?: string;
  /** A client certificate from a credential plugin (overrides the kubeconfig's). */
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

/** The driver's credentials could not be had (token file unreadable, plugin failed). Never carries a credential. */
export class KubeCredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeCredentialError';
  }
}

/** How often a token file is re-read (client-go re-reads every minute). */
export const TOKEN_FILE_TTL_MS = 60_000;
/** An exec credential is renewed this long before it expires. */
const EXEC_RENEW_MARGIN_MS = 30_000;
/** Longest a credential plugin may run. */
const EXEC_TIMEOUT_MS = 30_000;

/** Runs a credential plugin; injectable for tests. Resolves to its stdout. */
export type RunPlugin = (plugin: ExecPlugin, env: NodeJS.ProcessEnv) => Promise<string>;

const runPlugin: RunPlugin = (plugin, env) =>
  new Promise((resolve, reject) => {
    // A command with a slash is relative to the kubeconfig; a bare name is looked up on PATH.
    const command =
      plugin.command.includes('/') && !isAbsolute(plugin.command)
        ? resolvePath(plugin.baseDir, plugin.command)
        : plugin.command;
    execFile(command, [...plugin.args], { env, timeout: EXEC_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, stdout) => {
      // Never include the plugin's output in an error: it may hold a token.
      if (!err) {
        resolve(stdout);
        return;
      }
      const code =
        typeof err.code === 'number' ? ` (exit status ${err.code})` : err.code ? ` (${String(err.code)})` : '';
      reject(new KubeCredentialError(`kubeconfig credential plugin ${plugin.command} failed${code}`));
    });
  });

/** Parses an ExecCredential's status; expiry undefined means "until the API refuses it". */
function parseExecCredential(stdout: string, plugin: ExecPlugin): { auth: RequestAuth; expiresAt: number | undefined } {
  let status: Record<string, unknown> | undefined;
  try {
    status = (JSON.parse(stdout) as { status?: Record<string, unknown> }).status;
  } catch {
    /* reported below */
  }
  if (!status || typeof status !== 'object')
    throw new KubeCredentialError(`kubeconfig credential plugin ${plugin.command} printed no ExecCredential status`);
  const { token, clientCertificateData: cert, clientKeyData: key, expirationTimestamp } = status;
  if (typeof token !== 'string' && (typeof cert !== 'string' || typeof key !== 'string')) {
    throw new KubeCredentialError(
      `kubeconfig credential plugin ${plugin.command} returned neither a token nor a client certificate and key`,
    );
  }
  const expiresAt = typeof expirationTimestamp === 'string' ? Date.parse(expirationTimestamp) : undefined;
  return {
    auth: {
      ...(typeof token === 'string' ? { authorization: `Bearer ${token.trim()}` } : {}),
      ...(typeof cert === 'string' && typeof key === 'string'
        ? { cert: Buffer.from(cert), key: Buffer.from(key) }
        : {}),
    },
    expiresAt: expiresAt !== undefined && Number.isFinite(expiresAt) ? expiresAt : undefined,
  };
}

/**
 * Hands each request its credentials: a static token or basic auth as is, a token file
 * re-read every minute, a credential plugin re-run when its credential nears expiry.
 * `invalidate()` after a 401 makes the next request re-read or re-run.
 */
export class CredentialSource {
  private cached: { auth: RequestAuth; until: number } | undefined;
  private pending: Promise<RequestAuth> | undefined;

  constructor(
    private readonly credentials: ApiCredentials,
    private readonly now: () => number = Date.now,
    private readonly run: RunPlugin = runPlugin,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** True when the credential can change (so a 401 is worth one retry). */
  get renewable(): boolean {
    return this.credentials.type === 'token-file' || this.credentials.type === 'exec';
  }

  async current(): Promise<RequestAuth> {
    const c = this.credentials;
    if (c.type === 'none') return {};
    // A YAML block scalar leaves a trailing newline, which no header may carry.
    if (c.type === 'token') return { authorization: `Bearer ${c.token.trim()}` };
    if (c.type === 'basic')
      return { authorization: `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}` };
    if (this.cached && this.now() < this.cached.until) return this.cached.auth;
    // Concurrent requests share one read or one plugin run.
    this.pending ??= this.load(c).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Forgets the credential `used` (the one a 401 refused); a newer one, loaded meanwhile, stays. */
  invalidate(used?: RequestAuth): void {
    if (used === undefined || this.cached?.auth === used) this.cached = undefined;
  }

  private async load(c: Extract<ApiCredentials, { type: 'token-file' | 'exec' }>): Promise<RequestAuth> {
    if (c.type === 'token-file') {
      const token = await readFile(c.path, 'utf8').then(
        (t) => t.trim(),
        (err: NodeJS.ErrnoException) => {
          throw new KubeCredentialError(`cannot read the token file ${c.path} (${err.code ?? err.message})`);
        },
      );
      const auth = { authorization: `Bearer ${token}` };
      this.cached = { auth, until: this.now() + TOKEN_FILE_TTL_MS };
      return auth;
    }
    const env = {
      ...this.env,
      ...c.plugin.env,
      KUBERNETES_EXEC_INFO: JSON.stringify({
        apiVersion: c.plugin.apiVersion,
        kind: 'ExecCredential',
        spec: { interactive: false },
      }),
    };
    const { auth, expiresAt } = parseExecCredential(await this.run(c.plugin, env), c.plugin);
    this.cached = {
      auth,
      until: expiresAt === undefined ? Number.POSITIVE_INFINITY : expiresAt - EXEC_RENEW_MARGIN_MS,
    };
    return auth;
  }
}
