import * as grpc from '@grpc/grpc-js';
import { isGrpcCallError } from '../../lib/errors.js';

/** How a gRPC call ended, as a test asserts on it: the status name (`OK` on success) and the message. */
export interface CallOutcome {
  readonly code: string;
  readonly message: string;
}

/** Awaits a call and reports its status by name; errors that are not gRPC statuses are rethrown. */
export async function outcome(call: Promise<unknown>): Promise<CallOutcome> {
  try {
    await call;
    return { code: 'OK', message: '' };
  } catch (err) {
    if (isGrpcCallError(err)) return { code: grpc.status[err.code] ?? String(err.code), message: err.details };
    throw err;
  }
}

/** Like outcome, for a call that must fail: a success is an error. */
export async function failure(call: Promise<unknown>): Promise<CallOutcome> {
  const result = await outcome(call);
  if (result.code === 'OK') throw new Error('expected the call to fail');
  return result;
}
