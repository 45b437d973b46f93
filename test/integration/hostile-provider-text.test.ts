import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { fileClass, mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { failure } from '../support/call-outcome.js';

// what a provider writes in its error code or error message reaches
// kubelet (and from there events), the driver's log and its metrics. A hostile or broken
// provider must not put unbounded, terminal-driving or secret text into any of them.

const SECRET = 'hunter2-TOPSECRET';
/** Starts like a real code, then a forged log line in ANSI colours, filler, and a secret value. */
const HOSTILE = `AccessDenied\n\u001b[31m{"level":"error","message":"forged"}\u001b[0m\r\n${'x'.repeat(5000)} password=${SECRET}`;

/** True when `text` holds a control character (escaped ones are plain backslash text). */
function hasControl(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return /[\u0000-\u001f\u007f-\u009f]/.test(text);
}

describe('hostile provider text (real driver process, scripted provider)', function () {
  let stack: DriverStack;
  let provider: ScriptedProvider;

  before(async () => {
    stack = await startDriverStack({
      classes: { 'scripted.yaml': fileClass('scripted', [{ objectName: 'x' }], 'scripted') },
    });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () => responseWith([{ path: 'x' }]));
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  async function publishFails(pod: string): Promise<{ code: string; message: string }> {
    const target = stack.targetPath(pod);
    const f = await failure(stack.client.publish(stack.request(target, 'scripted', pod)));
    expect(await mountsUnder(target)).to.deep.equal([]);
    return f;
  }

  it('an error.code that is free text: label ProviderError, message bounded and escaped', async () => {
    provider.script = async () => ({ ...responseWith([{ path: 'x' }]), error: { code: HOSTILE } });
    const f = await publishFails('code');
    expect(f.code).to.equal('FAILED_PRECONDITION');
    expect(f.message).to.include('provider reported error code "AccessDenied\\n\\u001b[31m{\\"level\\":\\"error\\"');
    expect(f.message.length).to.be.below(400);
    expect(hasControl(f.message)).to.equal(false);
    expect(f.message).not.to.include(SECRET);
  });

  const grpcErrors: [string, grpc.status, string, string][] = [
    [
      'UNKNOWN',
      grpc.status.UNKNOWN,
      'FAILED_PRECONDITION',
      'provider "scripted" Mount failed: AccessDenied\\n\\u001b[31m',
    ],
    [
      'UNAVAILABLE',
      grpc.status.UNAVAILABLE,
      'UNAVAILABLE',
      'provider "scripted" Mount failed (the provider runs; it answered UNAVAILABLE): AccessDenied\\n\\u001b[31m',
    ],
    [
      'RESOURCE_EXHAUSTED',
      grpc.status.RESOURCE_EXHAUSTED,
      'RESOURCE_EXHAUSTED',
      'provider "scripted" Mount failed: AccessDenied\\n\\u001b[31m',
    ],
  ];
  for (const [name, status, code, start] of grpcErrors) {
    it(`a gRPC ${name} with a hostile message: relayed bounded and escaped`, async () => {
      provider.script = async () =>
        Object.assign(new Error('hostile'), { code: status, details: HOSTILE, metadata: new grpc.Metadata() });
      const f = await publishFails(`grpc-${name.toLowerCase()}`);
      expect(f.code).to.equal(code);
      expect(f.message).to.include(start);
      expect(f.message).to.include('AccessDenied\\n\\u001b[31m{"level":"error","message":"forged"}\\u001b[0m\\r\\nxxx');
      expect(f.message.length).to.be.below(1000);
      expect(hasControl(f.message)).to.equal(false);
      expect(f.message).not.to.include(SECRET);
    });
  }

  it('nothing of it reaches the metric labels or the log', async () => {
    const metrics = await stack.metrics();
    expect(metrics).to.match(
      /^node_publish_error_total\{provider="scripted",error_type="ProviderError",os_type="linux"\} 1$/m,
    );
    expect(metrics).to.match(
      /^node_publish_error_total\{provider="scripted",error_type="GRPCProviderError",os_type="linux"\} 2$/m,
    );
    expect(metrics).to.match(
      /^node_publish_error_total\{provider="scripted",error_type="ProviderBackendUnavailable",os_type="linux"\} 1$/m,
    );
    expect(metrics).not.to.include('AccessDenied');
    expect(metrics).not.to.include(SECRET);
    const log = stack.driver.stderr();
    expect(log).to.include('provider reported error code');
    expect(log).not.to.include(SECRET);
    expect(log).not.to.include('\u001b');
  });
});
