/**
 * util.inspect.custom, the key of the method util.inspect calls instead of walking an
 * object: holders of secrets (caches, lease stores) answer it with a summary. The same
 * symbol as node:util's, taken from the global registry, because importing node:util on
 * Node 24 loads worker_threads into the process (test/integration/startup-modules.test.ts).
 */
export const INSPECT_CUSTOM: unique symbol = Symbol.for('nodejs.util.inspect.custom');
