import { expect } from 'chai';
import { KubeApiError } from '../../../driver/k8s/client/kube-api.js';
import { withApiRefusal } from '../../../sync-controller/api-refusal.js';

describe('sync-controller withApiRefusal', () => {
  const denial =
    "secrets \"s\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: " + 'x'.repeat(400);
  const refused = new KubeApiError(403, JSON.stringify({ kind: 'Status', message: denial }), 'PATCH', '/api/v1/x');

  it("carries the API server's Status message whole, with the code and what was attempted", () => {
    const err = withApiRefusal(refused, 'apply Secret ns/s') as Error;
    expect(err.message).to.equal(`Kubernetes API refused to apply Secret ns/s: HTTP 403 ${denial}`);
    expect(err.cause).to.equal(refused);
  });

  it('finds the API error behind a wrapping error (the token cache)', () => {
    const wrapped = new Error('Kubernetes API refused to request a token: HTTP 403 cut…', { cause: refused });
    expect((withApiRefusal(wrapped, 'request a token') as Error).message).to.include(denial);
  });

  it('returns other errors, and API answers without a Status message, as they are', () => {
    const other = new Error('ECONNRESET');
    expect(withApiRefusal(other, 'x')).to.equal(other);
    const bare = new KubeApiError(500, 'not json', 'PATCH', '/api/v1/x');
    expect(withApiRefusal(bare, 'x')).to.equal(bare);
  });
});
