import { createRequire } from 'node:module';

/**
 * `node:http`, loaded with require. On Node 24 an ESM import of it (named, default or
 * namespace) evaluates every lazy export — undici's WebSocket, EventSource and fetch
 * classes — which loads undici, worker_threads and zlib: ~12 MiB more RSS in a process
 * that never uses them. Types still come from `import type … from 'node:http'`.
 */
export const nodeHttp: typeof import('node:http') = createRequire(import.meta.url)(
  'node:http',
) as typeof import('node:http');
