import { KubeConfig, RequestContext, HttpMethod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Agent as HttpsAgent } from 'node:https';
import { PooledKubeAuthentication } from '../../driver/k8s/kube-clients.js';

// client-node builds a new https.Agent (and so a new TLS connection) for every request;
// the driver's authentication hands every request one keep-alive agent instead.

function kubeConfig(ca: string, server = 'https://127.0.0.1:6443'): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server, caData: Buffer.from(ca).toString('base64') }],
    users: [{ name: 'u', token: 'sekret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return config;
}

async function agentOf(auth: PooledKubeAuthentication): Promise<{ agent: unknown; authorization: string | undefined }> {
  const context = new RequestContext('https://127.0.0.1:6443/api/v1/pods', HttpMethod.GET);
  await auth.applySecurityAuthentication(context);
  return { agent: context.getAgent(), authorization: context.getHeaders()['Authorization'] };
}

describe('PooledKubeAuthentication (one keep-alive agent for API requests)', () => {
  it('gives every request the same keep-alive HTTPS agent, with the kubeconfig\'s CA and token', async () => {
    const auth = new PooledKubeAuthentication(kubeConfig('CA ONE'));
    const first = await agentOf(auth);
    const second = await agentOf(auth);
    expect(first.agent).to.be.instanceOf(HttpsAgent);
    expect(second.agent).to.equal(first.agent);
    const options = (first.agent as HttpsAgent).options as { keepAlive?: boolean; ca?: unknown };
    expect(options.keepAlive).to.equal(true);
    expect(String(options.ca)).to.equal('CA ONE');
    expect(first.authorization).to.equal('Bearer sekret-token');
    auth.close();
  });

  it('builds a new agent when the TLS settings change, and keeps it while they do not', () => {
    const auth = new PooledKubeAuthentication(kubeConfig('CA ONE'));
    const a = auth.agentFor({ ca: Buffer.from('CA ONE') });
    expect(auth.agentFor({ ca: Buffer.from('CA ONE') })).to.equal(a);
    const b = auth.agentFor({ ca: Buffer.from('CA TWO') });
    expect(b).not.to.equal(a);
    expect(auth.agentFor({ ca: Buffer.from('CA TWO'), rejectUnauthorized: false })).not.to.equal(b);
    auth.close();
  });
});
