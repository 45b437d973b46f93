// Test helpers to point the real Azure SDK clients at the Azure Key Vault / Entra ID stand-in
// (no real Key Vault or Entra can run here, see docs/conformance.md): the connect-to agent
// that keeps the real host names, SNI and certificate checks (trusting only the stand-in's
// test CA), and a raw HTTPS request for the REST-level checks the SDKs would hide.
import { request, type Agent } from 'node:https';
import { ConnectToAgent, parseConnectTo } from '../../../providers/azure/connect-to.js';

/** An agent that reaches the stand-in under the real names and trusts only `caPem`. */
export function standInAgent(connectTo: string, caPem: string): ConnectToAgent {
  return new ConnectToAgent(parseConnectTo(connectTo), { ca: caPem });
}

/** A raw HTTPS answer. */
export interface RawReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: unknown;
}

/** Sends one HTTPS request through `agent` and parses a JSON body (text otherwise). */
export function rawRequest(
  agent: Agent,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { agent, method: options.method ?? 'GET', headers: options.headers ?? {}, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(options.body);
  });
}
