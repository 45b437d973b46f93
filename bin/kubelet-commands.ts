import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isGrpcCallError } from '../proto/runtime/errors.js';
import { parseGoDuration } from '../proto/runtime/duration.js';
import { flagsHelp, parseFlags, stringFlag, type FlagSpec } from '../proto/runtime/flags.js';
import { socketPathFromEndpoint } from '../proto/runtime/unix-socket.js';
import { status } from '@grpc/grpc-js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from './csi-client.js';

const COMMON: Record<string, FlagSpec> = {
  'endpoint': { type: 'string', default: 'unix:///csi/csi.sock', help: 'the driver\'s CSI socket' },
  'target-path': { type: 'string', default: '', help: 'volume directory (required)' },
  'volume-id': { type: 'string', default: '', help: 'CSI volume id (default: derived from the target path)' },
  'timeout': { type: 'string', default: '30s', help: 'call deadline, as kubelet sets one' },
};

const PUBLISH_FLAGS: Record<string, FlagSpec> = {
  ...COMMON,
  'secret-provider-class': { type: 'string', default: '', help: 'SecretProviderClass name (required)' },
  'pod-name': { type: 'string', default: 'debug-pod', help: 'pod name sent in volume_context' },
  'pod-namespace': { type: 'string', default: 'default', help: 'pod namespace (the class is looked up here)' },
  'pod-uid': { type: 'string', default: '', help: 'pod uid (default: random)' },
  'service-account': { type: 'string', default: 'default', help: 'service account name sent in volume_context' },
  'secrets-file': { type: 'string', default: '', help: 'JSON file of nodePublishSecretRef data sent as `secrets`' },
};

function fail(message: string): never {
  throw Object.assign(new Error(message), { exitCode: 2 });
}

function describeCallError(err: unknown): string {
  if (isGrpcCallError(err)) return `${status[err.code] ?? err.code}: ${err.details}`;
  return (err as Error).message;
}

function volumeIdFor(targetPath: string): string {
  return `csi-${Buffer.from(targetPath).toString('base64url').slice(-40)}`;
}

/** `secrets-store-csi publish`: NodePublishVolume as kubelet sends it for an inline volume. */
export async function publishCommand(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help')) { process.stdout.write(`secrets-store-csi publish [flags]\n${flagsHelp(PUBLISH_FLAGS)}\n`); return; }
  const flags = parseFlags(argv, PUBLISH_FLAGS);
  const targetPath = stringFlag(flags, 'target-path');
  const spc = stringFlag(flags, 'secret-provider-class');
  if (targetPath === '') fail('--target-path is required');
  if (spc === '') fail('--secret-provider-class is required');
  const abs = resolve(targetPath);
  const secretsFile = stringFlag(flags, 'secrets-file');
  const secrets = secretsFile ? JSON.parse(await readFile(secretsFile, 'utf8')) as Record<string, string> : {};
  const ctx = inlineVolumeContext({
    name: stringFlag(flags, 'pod-name'), namespace: stringFlag(flags, 'pod-namespace'),
    uid: stringFlag(flags, 'pod-uid') || randomUUID(), serviceAccountName: stringFlag(flags, 'service-account'),
  }, spc);
  const client = new CsiClient(socketPathFromEndpoint(stringFlag(flags, 'endpoint')));
  try {
    await client.publish(inlinePublishRequest(stringFlag(flags, 'volume-id') || volumeIdFor(abs), abs, ctx, secrets), parseGoDuration(stringFlag(flags, 'timeout')));
    process.stdout.write(`published ${abs}\n`);
  } catch (err) {
    fail(`NodePublishVolume failed: ${describeCallError(err)}`);
  } finally {
    client.close();
  }
}

/** `secrets-store-csi unpublish`: NodeUnpublishVolume. */
export async function unpublishCommand(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help')) { process.stdout.write(`secrets-store-csi unpublish [flags]\n${flagsHelp(COMMON)}\n`); return; }
  const flags = parseFlags(argv, COMMON);
  const targetPath = stringFlag(flags, 'target-path');
  if (targetPath === '') fail('--target-path is required');
  const abs = resolve(targetPath);
  const client = new CsiClient(socketPathFromEndpoint(stringFlag(flags, 'endpoint')));
  try {
    await client.unpublish(stringFlag(flags, 'volume-id') || volumeIdFor(abs), abs, parseGoDuration(stringFlag(flags, 'timeout')));
    process.stdout.write(`unpublished ${abs}\n`);
  } catch (err) {
    fail(`NodeUnpublishVolume failed: ${describeCallError(err)}`);
  } finally {
    client.close();
  }
}
