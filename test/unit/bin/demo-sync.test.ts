import { expect } from 'chai';
import { findKubePeers, missingPeersMessage } from '../../../bin/demo-sync-cluster.js';
import { shownCommand } from '../../../bin/demo-sync-kube.js';
import { controllerManagerArgs, parseClusterEnv } from '../../../bin/local-control-plane.js';
import { peersCacheDir } from '../../../bin/local-peers.js';

describe('demo-sync: which test peers it needs', () => {
  const all: Record<string, string> = {
    ETCD: '/c/etcd',
    KUBE_APISERVER: '/c/kube-apiserver',
    KUBE_CONTROLLER_MANAGER: '/c/kcm',
    KUBECTL: '/c/kubectl',
  };

  it('finds all four from peers.env', () => {
    expect(findKubePeers((k) => all[k])).to.deep.equal(all);
  });

  it('names only the missing ones, in install.sh spelling, in one line', () => {
    const find = (k: string) => (k === 'ETCD' || k === 'KUBECTL' ? undefined : all[k]);
    expect(() => findKubePeers(find)).to.throw(
      'demo-sync needs the test peers etcd, kubectl, not installed: bash test/peers/install.sh etcd kubectl builds them',
    );
    expect(missingPeersMessage(['kubectl'])).not.to.include('\n');
  });

  it('the peers cache: $SSC_PEERS_CACHE, else under HOME (as install.sh)', () => {
    expect(peersCacheDir({ SSC_PEERS_CACHE: '/x' }, '/home/u')).to.equal('/x');
    expect(peersCacheDir({ SSC_PEERS_CACHE: '' }, '/home/u')).to.equal('/home/u/.cache/secrets-store-csi/peers');
  });
});

describe('demo-sync: what it prints and runs', () => {
  it('shows kubectl commands with paths relative to the repository', () => {
    expect(shownCommand(['apply', '-f', '/r/repo/deploy/x.yaml', '-n', 'ns'], '/r/repo/')).to.equal(
      '$ kubectl apply -f deploy/x.yaml -n ns',
    );
  });

  it("reads start-cluster.sh's KEY=value lines (values may hold '=')", () => {
    const env = parseClusterEnv('KUBE_URL=https://127.0.0.1:1\nADMIN_TOKEN=a=b\n\nnoise\n');
    expect([...env]).to.deep.equal([
      ['KUBE_URL', 'https://127.0.0.1:1'],
      ['ADMIN_TOKEN', 'a=b'],
    ]);
  });

  it('kube-controller-manager: only the named controllers, no leader election, no port; keys only when needed', () => {
    const plane = { dir: '/d', caFile: '/d/pki/ca.crt' };
    expect(controllerManagerArgs(plane, ['garbage-collector-controller'])).to.deep.equal([
      '--kubeconfig=/d/kubeconfig',
      '--controllers=garbage-collector-controller',
      '--leader-elect=false',
      '--secure-port=0',
      '--concurrent-gc-syncs=5',
    ]);
    expect(controllerManagerArgs(plane, ['serviceaccount-token-controller']).slice(-2)).to.deep.equal([
      '--service-account-private-key-file=/d/pki/sa.key',
      '--root-ca-file=/d/pki/ca.crt',
    ]);
    expect(controllerManagerArgs(plane, ['root-ca-certificate-publisher-controller']).at(-1)).to.equal(
      '--root-ca-file=/d/pki/ca.crt',
    );
  });
});
