import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcCallError } from '../lib/errors.js';
import { parseDurationFlag } from '../lib/duration.js';
import { flagsHelp, parseFlags, stringFlag, type FlagSpec, type ParsedFlags } from '../lib/flags.js';
import { socketPathFromEndpoint } from '../lib/grpc/unix-socket.js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from './csi-client.js';
import {
  isNotYetListening,
  noDriverMessage,
  realSocketWaitPorts,
  tryConnectUnix,
  waitForSocket,
} from './wait-for-socket.js';

const COMMON: Record<string, FlagSpec> = {
  endpoint: { type: 'string', default: 'unix:///csi/csi.sock', help: "the driver's CSI socket" },
  'target-path': { type: 'string', default: '', help: 'volume directory (required)' },
  'volume-id': { type: 'string', default: '', help: 'CSI volume id (default: derived from the target path)' },
  timeout: {
    type: 'string',
    default: '30s',
    help: "deadline of the command: waiting for the driver's socket, then the call",
  },
};

const PUBLISH_FLAGS: Record<string, FlagSpec> = {
  ...COMMON,
  'secret-provider-class': { type: 'string', default: '', help: 'SecretProviderClass name (required)' },
  'pod-name': { type: 'string', default: 'debug-pod', help: 'pod name sent in volume_context' },
  'pod-namespace': { type: 'string', default: 'default', help: 'pod namespace (the class is looked up here)' },
  'pod-uid': { type: 'string', default: '', help: 'pod uid (default: random)' },
  'service-account': { type: 'string', default: 'default', help: 'service account name sent in volume_context' },
  'secrets-file': { type: 'string', default: '', help: 'JSON file of nodePublishSecretRef data sent as `secrets`' },
  'volume-mount-group': {
    type: 'string',
    default: '',
    help: "the pod's fsGroup, sent as volume_mount_group (files get that group)",
  },
};

function fail(message: string): never {
  throw Object.assign(new Error(message), { exitCode: 2 });
}

/** Parses `--timeout`; a bad value is an error naming the flag. */
export function parseTimeoutFlag(raw: string): number {
  return parseDurationFlag('timeout', raw, { example: '30s or 2m', positive: true });
}

/** Parses `--secrets-file` text: a JSON object of strings, as kubelet reads a Secret's data. */
export function parseSecretsFile(path: string, text: string): Record<string, string> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // Not JSON.parse's message: it quotes the input, and this file holds secrets.
    throw new Error(`--secrets-file ${path}: not valid JSON`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new Error(`--secrets-file ${path}: must hold a JSON object of string values`);
  const bad = Object.entries(doc).find(([, v]) => typeof v !== 'string');
  if (bad) throw new Error(`--secrets-file ${path}: the value of ${JSON.stringify(bad[0])} must be a string`);
  return doc as Record<string, string>;
}

/**
 * Explains a failed call. The transport's text for a socket nobody listens on (connect
 * ECONNREFUSED …) is replaced by ours, decided by trying the socket again: a driver's own
 * UNAVAILABLE (say, a provider is down) stays as is.
 */
async function describeCallError(err: unknown, socketPath: string): Promise<string> {
  if (!isGrpcCallError(err)) return (err as Error).message;
  if (err.code === GrpcStatus.UNAVAILABLE) {
    const code = await tryConnectUnix(socketPath);
    if (code !== undefined && isNotYetListening(code)) return noDriverMessage(socketPath, code, 0);
  }
  return `${GrpcStatus[err.code] ?? String(err.code)}: ${err.details}`;
}

/**
 * Runs one CSI call within `--timeout`: waits for the driver's socket (a driver started
 * in the background a moment ago is not listening yet), then calls with the time left.
 */
async function callDriver(
  flags: ParsedFlags,
  timeoutMs: number,
  what: string,
  call: (client: CsiClient, timeoutMs: number) => Promise<void>,
): Promise<void> {
  const socketPath = socketPathFromEndpoint(stringFlag(flags, 'endpoint'));
  const deadline = Date.now() + timeoutMs;
  await waitForSocket(socketPath, timeoutMs, realSocketWaitPorts());
  const client = new CsiClient(socketPath);
  try {
    await call(client, Math.max(1, deadline - Date.now()));
  } catch (err) {
    fail(`${what} failed: ${await describeCallError(err, socketPath)}`);
  } finally {
    client.close();
  }
}

function volumeIdFor(targetPath: string): string {
  return `csi-${Buffer.from(targetPath).toString('base64url').slice(-40)}`;
}

/** `secrets-store-csi publish`: NodePublishVolume as kubelet sends it for an inline volume. */
export async function publishCommand(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help')) {
    process.stdout.write(`secrets-store-csi publish [flags]\n${flagsHelp(PUBLISH_FLAGS)}\n`);
    return;
  }
  const flags = parseFlags(argv, PUBLISH_FLAGS);
  const timeoutMs = parseTimeoutFlag(stringFlag(flags, 'timeout'));
  const targetPath = stringFlag(flags, 'target-path');
  const spc = stringFlag(flags, 'secret-provider-class');
  if (targetPath === '') fail('--target-path is required');
  if (spc === '') fail('--secret-provider-class is required');
  const abs = resolve(targetPath);
  const secretsFile = stringFlag(flags, 'secrets-file');
  const secrets = secretsFile ? parseSecretsFile(secretsFile, await readFile(secretsFile, 'utf8')) : {};
  const ctx = inlineVolumeContext(
    {
      name: stringFlag(flags, 'pod-name'),
      namespace: stringFlag(flags, 'pod-namespace'),
      uid: stringFlag(flags, 'pod-uid') || randomUUID(),
      serviceAccountName: stringFlag(flags, 'service-account'),
    },
    spc,
  );
  const request = inlinePublishRequest(
    stringFlag(flags, 'volume-id') || volumeIdFor(abs),
    abs,
    ctx,
    secrets,
    stringFlag(flags, 'volume-mount-group'),
  );
  await callDriver(flags, timeoutMs, 'NodePublishVolume', (client, timeoutMs) => client.publish(request, timeoutMs));
  process.stdout.write(`published ${abs}\n`);
}

/** `secrets-store-csi unpublish`: NodeUnpublishVolume. */
export async function unpublishCommand(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help')) {
    process.stdout.write(`secrets-store-csi unpublish [flags]\n${flagsHelp(COMMON)}\n`);
    return;
  }
  const flags = parseFlags(argv, COMMON);
  const timeoutMs = parseTimeoutFlag(stringFlag(flags, 'timeout'));
  const targetPath = stringFlag(flags, 'target-path');
  if (targetPath === '') fail('--target-path is required');
  const abs = resolve(targetPath);
  await callDriver(flags, timeoutMs, 'NodeUnpublishVolume', (client, timeoutMs) =>
    client.unpublish(stringFlag(flags, 'volume-id') || volumeIdFor(abs), abs, timeoutMs),
  );
  process.stdout.write(`unpublished ${abs}\n`);
}
