import { KubeApiError } from '../driver/k8s/client/kube-api.js';

/** The KubeApiError behind `err`: itself or one of its causes. */
function apiErrorOf(err: unknown): KubeApiError | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    if (e instanceof KubeApiError) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The `message` of a Kubernetes Status body; '' when the body is not one. */
function statusMessage(body: string): string {
  try {
    const message = (JSON.parse(body) as { message?: unknown } | null)?.message;
    return typeof message === 'string' ? message : '';
  } catch {
    return '';
  }
}

/**
 * An API server's refusal in its own words, for a SecretSync's condition: `Kubernetes API
 * refused to <what>: HTTP <code> <Status message>`, whole (the condition bounds it), so
 * the message of the admission policy that refused reaches the user. Any other error is
 * returned as it is.
 */
export function withApiRefusal(err: unknown, what: string): unknown {
  const api = apiErrorOf(err);
  const message = api ? statusMessage(api.body) : '';
  if (!api || message === '') return err;
  return new Error(`Kubernetes API refused to ${what}: HTTP ${api.code} ${message}`, { cause: err });
}
