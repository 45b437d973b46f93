// A test-only way to reach a Key Vault and Entra stand-in under the real host names.
// `--test-only-connect-to=login.microsoftonline.com:443=127.0.0.1:41234` makes the
// provider open its TCP connection to 127.0.0.1:41234 whenever it would connect to
// login.microsoftonline.com:443, like curl's --connect-to. Everything else stays as in
// production: the URL, the Host header, TLS SNI and certificate verification for the
// real name, and the Key Vault challenge's resource check. No real Azure host is ever
// redirected unless this flag names it; production DaemonSets never set it.
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import { quoted } from '../../lib/untrusted-text.js';

/** One `host:port=address:port` rule. */
export interface ConnectToRule {
  readonly host: string;
  readonly port: number;
  readonly toHost: string;
  readonly toPort: number;
}

const HOST = /^[A-Za-z0-9.-]{1,253}$|^\[[0-9A-Fa-f:.]{2,45}\]$/;

function endpoint(text: string, rule: string): { host: string; port: number } {
  const colon = text.lastIndexOf(':');
  const host = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  const port = Number(portText);
  if (colon <= 0 || !HOST.test(host) || !/^[0-9]{1,5}$/.test(portText) || port < 1 || port > 65535) {
    throw new Error(`--test-only-connect-to: ${quoted(rule, 120)} is not host:port=address:port`);
  }
  return { host: host.replace(/^\[|\]$/g, '').toLowerCase(), port };
}

/** Parses a comma-separated list of `host:port=address:port` rules ("" is none). */
export function parseConnectTo(text: string): ConnectToRule[] {
  const rules: ConnectToRule[] = [];
  for (const rule of text
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '')) {
    const eq = rule.indexOf('=');
    if (eq < 0) throw new Error(`--test-only-connect-to: ${quoted(rule, 120)} is not host:port=address:port`);
    const from = endpoint(rule.slice(0, eq), rule);
    const to = endpoint(rule.slice(eq + 1), rule);
    rules.push({ host: from.host, port: from.port, toHost: to.host, toPort: to.port });
  }
  return rules;
}

/** Where a connection to `host:port` goes: the first matching rule's target, else itself. */
export function connectTarget(
  rules: readonly ConnectToRule[],
  host: string,
  port: number,
): { host: string; port: number } {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  const rule = rules.find((r) => r.host === h && r.port === port);
  return rule ? { host: rule.toHost, port: rule.toPort } : { host, port };
}

interface ConnectOptions {
  host?: string | null;
  port?: number | string | null;
  servername?: string;
  [key: string]: unknown;
}

/**
 * An HTTPS agent that applies connect-to rules when it opens a socket. SNI and the
 * name the certificate must carry stay the URL's host. Keep-alive: the SDK clients of
 * one identity reuse their connections.
 */
export class ConnectToAgent extends HttpsAgent {
  constructor(
    private readonly rules: readonly ConnectToRule[],
    options: AgentOptions = {},
  ) {
    super({ keepAlive: true, ...options });
  }

  override createConnection(options: ConnectOptions, callback?: (err: Error | null, socket: Duplex) => void): Duplex {
    const host = String(options.host ?? 'localhost');
    const port = Number(options.port ?? 443);
    const target = connectTarget(this.rules, host, port);
    const servername = options.servername ?? host;
    const create = HttpsAgent.prototype.createConnection as unknown as (
      this: HttpsAgent,
      o: ConnectOptions,
      cb?: typeof callback,
    ) => Duplex;
    return create.call(this, { ...options, host: target.host, port: target.port, servername }, callback);
  }
}
