import { expect } from 'chai';
import { answersRepublishOk } from '../../../../driver/csi/node-service.js';
import { SscError, type ErrorKind } from '../../../../lib/errors.js';
import { PublishError } from '../../../../driver/publish/publisher.js';

function failed(
  kind: ErrorKind,
  { origin = 'kubelet', stillMounted = true }: { origin?: 'kubelet' | 'rotation'; stillMounted?: boolean } = {},
): PublishError {
  return new PublishError(new SscError(kind, 'x'), 'file', false, origin, stillMounted);
}

// kubernetes#121271: a kubelet without the fix deletes the pod's mount dir when a
// republish fails with an error it counts as final.
describe('answersRepublishOk (which failed NodePublishVolume calls kubelet is told OK)', () => {
  const cases: [string, unknown, boolean, boolean][] = [
    ['a final error on a mounted volume, kubelet calling', failed('invalid-argument'), true, true],
    ['NOT_FOUND on a mounted volume', failed('not-found'), true, true],
    ['PERMISSION_DENIED on a mounted volume', failed('permission-denied'), true, true],
    ['INTERNAL on a mounted volume', failed('internal'), true, true],
    ['DEADLINE_EXCEEDED (kubelet keeps the dir)', failed('deadline-exceeded'), true, false],
    ['UNAVAILABLE (kubelet keeps the dir)', failed('unavailable'), true, false],
    ['RESOURCE_EXHAUSTED (kubelet keeps the dir)', failed('resource-exhausted'), true, false],
    ['ABORTED, another call holds the target', failed('aborted'), true, false],
    [
      'a failed first publish (nothing stays mounted)',
      failed('invalid-argument', { stillMounted: false }),
      true,
      false,
    ],
    ['local mode: the CLI wants the error', failed('invalid-argument'), false, false],
    [
      'a republish run as a rotation (republish mode), any mode',
      failed('not-found', { origin: 'rotation' }),
      false,
      true,
    ],
    [
      'an error before the publisher (request validation)',
      new SscError('invalid-argument', 'Target path missing in request'),
      true,
      false,
    ],
  ];
  for (const [name, err, kubeletCaller, ok] of cases) {
    it(`${name}: ${ok ? 'OK' : 'the error'}`, () => expect(answersRepublishOk(err, kubeletCaller)).to.equal(ok));
  }
});
