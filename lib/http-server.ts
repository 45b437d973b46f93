import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { nodeHttp } from './node-http.js';

/** Splits an address flag (":8095", "127.0.0.1:0", "[::1]:9000") into host and port. */
export function parseListenAddress(addr: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(addr.trim());
  if (!m) throw new Error(`address "${addr}" must look like :8095 or 127.0.0.1:8095`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`address "${addr}" has an invalid port`);
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

/** A running /metrics + /healthz server. */
export interface HealthServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** Answers a scrape: the registry's text, or 500 when a metric could not be read. */
async function serveMetrics(registry: Registry, res: ServerResponse): Promise<void> {
  let text: string;
  try {
    text = await registry.metrics();
  } catch {
    res.writeHead(500);
    res.end('metrics unavailable\n');
    return;
  }
  res.writeHead(200, { 'content-type': registry.contentType });
  res.end(text);
}

/**
 * Serves Prometheus text on /metrics and a health check on /healthz (200 "ok" when
 * `healthy()` is true, 503 otherwise), and /readyz likewise when `ready` is given. A failure to listen names `flag`, the flag that set `addr`.
 */
export async function startHealthServer(
  addr: string,
  registry: Registry,
  healthy: () => boolean,
  flag: string,
  ready?: () => boolean,
): Promise<HealthServer> {
  const { host, port } = parseListenAddress(addr);
  const server: Server = nodeHttp.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      // A rejection here would end the process: drop the connection instead.
      serveMetrics(registry, res).catch(() => res.destroy());
    } else if (path === '/healthz' || (path === '/readyz' && ready)) {
      const ok = path === '/healthz' ? healthy() : (ready?.() ?? false);
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' });
      res.end(ok ? 'ok\n' : 'not ready\n');
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    const refused = (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `${flag} ${addr}: cannot listen: ${err.code === 'EADDRINUSE' ? 'the address is in use' : err.message}`,
        ),
      );
    server.once('error', refused);
    server.listen(port, host, () => {
      server.off('error', refused);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
