import { status as GrpcStatus } from '@grpc/grpc-js';
import { expect } from 'chai';
import { grpcCodeOf } from '../../../../lib/errors.js';
import {
  POD_NAME_ATTRIBUTE,
  POD_NAMESPACE_ATTRIBUTE,
  POD_UID_ATTRIBUTE,
  podInfoMissing,
  SERVICE_ACCOUNT_ATTRIBUTE,
} from '../../../../providers/framework/pod-info.js';

describe('pod attributes', () => {
  it("are kubelet's names for podInfoOnMount (the driver passes them as they are)", () => {
    expect([POD_NAME_ATTRIBUTE, POD_NAMESPACE_ATTRIBUTE, POD_UID_ATTRIBUTE, SERVICE_ACCOUNT_ATTRIBUTE]).to.deep.equal([
      'csi.storage.k8s.io/pod.name',
      'csi.storage.k8s.io/pod.namespace',
      'csi.storage.k8s.io/pod.uid',
      'csi.storage.k8s.io/serviceAccount.name',
    ]);
  });
});

describe('podInfoMissing', () => {
  const cases: [provider: string, attribute: string, why: string | undefined, message: string][] = [
    [
      'azure',
      POD_NAME_ATTRIBUTE,
      undefined,
      'azure provider: the Mount has no csi.storage.k8s.io/pod.name: the CSIDriver must set podInfoOnMount: true',
    ],
    [
      'vault',
      SERVICE_ACCOUNT_ATTRIBUTE,
      "the pod's service account is the Vault identity",
      "vault provider: the Mount has no csi.storage.k8s.io/serviceAccount.name: the CSIDriver must set podInfoOnMount: true (the pod's service account is the Vault identity)",
    ],
    [
      'exec',
      POD_NAMESPACE_ATTRIBUTE,
      'helpers need it',
      'exec provider: the Mount has no csi.storage.k8s.io/pod.namespace: the CSIDriver must set podInfoOnMount: true (helpers need it)',
    ],
  ];
  for (const [provider, attribute, why, message] of cases) {
    it(`${provider}, ${attribute}${why === undefined ? '' : ', with why'}: FAILED_PRECONDITION PodInfoMissing`, () => {
      const err = podInfoMissing(provider, attribute, why);
      expect([grpcCodeOf(err.kind), err.reason, err.message]).to.deep.equal([
        GrpcStatus.FAILED_PRECONDITION,
        'PodInfoMissing',
        message,
      ]);
    });
  }
});
