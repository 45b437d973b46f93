// The pki provider's SecretProviderClass parameters, parsed and checked without I/O:
// what certificate a Mount asks for. Templates are expanded first (templates.ts), then
// each value is checked as what it becomes (a DNS name, an IP address, a URI), so a
// pod name that makes a bad DNS name is refused naming the parameter.
import { isIPv4, isIPv6 } from 'node:net';
import { parseGoDuration } from '../../lib/duration.js';
import { quoted } from '../../lib/untrusted-text.js';
import { invalidParameter } from './pki-errors.js';
import { expandTemplate } from './templates.js';

/** The key algorithms a leaf key can have. */
export const KEY_ALGORITHMS = ['ECDSA-P256', 'RSA-2048', 'RSA-4096', 'Ed25519'] as const;
/** One of KEY_ALGORITHMS. */
export type KeyAlgorithm = (typeof KEY_ALGORITHMS)[number];
/** What a certificate is for: TLS server (serverAuth) and/or client (clientAuth). */
export type Usage = 'server' | 'client';

/** The longest `duration`: one year. */
export const MAX_DURATION_S = 365 * 24 * 3600;
/** The default `duration`. */
export const DEFAULT_DURATION = '24h';
/** Most entries in each of `dnsNames`, `ipAddresses` and `uris`. */
export const MAX_NAMES = 100;
/** Longest commonName (RFC 5280 ub-common-name). */
const MAX_COMMON_NAME = 64;
const MAX_URI = 1024;

/** A parsed request for one certificate. */
export interface CertificateRequest {
  readonly commonName: string;
  readonly dnsNames: readonly string[];
  /** 4 or 16 octets each. */
  readonly ipAddresses: readonly Buffer[];
  readonly uris: readonly string[];
  readonly usages: readonly Usage[];
  readonly keyAlgorithm: KeyAlgorithm;
  /** Validity in whole seconds. */
  readonly durationSeconds: number;
  /** Mode of tls.key; undefined: the request's permission, as every other file. */
  readonly keyFilePermission: number | undefined;
}

/** Process-wide bounds from the flags. */
export interface ParameterLimits {
  /** The shortest `duration` a class may ask for (--min-duration), in seconds. */
  readonly minDurationSeconds: number;
}

const DNS_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/** Whether `name` is a DNS name for a dNSName SAN: labels of letters, digits and inner hyphens, an optional leading `*.`. */
export function isDnsName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (labels[0] === '*' && labels.length > 1) labels.shift();
  return labels.every((l) => DNS_LABEL.test(l));
}

/** The octets of an IPv4 or IPv6 address in text form (no zone); undefined when it is neither. */
export function ipAddressBytes(text: string): Buffer | undefined {
  if (isIPv4(text)) return Buffer.from(text.split('.').map(Number));
  if (!isIPv6(text) || text.includes('%')) return undefined;
  let head = text;
  let v4: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    v4 = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    head = `${text.slice(0, lastColon + 1)}${v4.length > 0 ? '0:0' : ''}`;
  }
  const [left, right] = head.includes('::') ? (head.split('::') as [string, string]) : [head, undefined];
  const words = (part: string) => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));
  const l = words(left);
  const r = right === undefined ? [] : words(right);
  const all = right === undefined ? l : [...l, ...new Array<number>(8 - l.length - r.length).fill(0), ...r];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, i * 2));
  if (v4.length === 4) Buffer.from(v4).copy(out, 12);
  return out;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function listParameter(name: string, attributes: Readonly<Record<string, string>>): string[] {
  const entries = list(attributes[name]);
  if (entries.length > MAX_NAMES)
    throw invalidParameter(`${name} lists ${entries.length} entries; at most ${MAX_NAMES}`);
  return entries.map((e, i) => expandTemplate(e, `${name}[${i}]`, attributes));
}

function duration(raw: string, limits: ParameterLimits): number {
  let ms: number;
  try {
    ms = parseGoDuration(raw);
  } catch {
    throw invalidParameter(`duration ${quoted(raw, 40)} is not a Go duration such as 24h or 720h`);
  }
  const seconds = Math.floor(ms / 1000);
  if (seconds < limits.minDurationSeconds || seconds > MAX_DURATION_S) {
    throw invalidParameter(
      `duration ${quoted(raw, 40)} must be between ${limits.minDurationSeconds}s (--min-duration) and 8760h (one year)`,
    );
  }
  return seconds;
}

function usages(raw: string | undefined): Usage[] {
  const words = list(raw ?? 'server');
  if (words.length === 0) throw invalidParameter('usages is empty; use server, client or server,client');
  const out: Usage[] = [];
  for (const w of words) {
    if (w !== 'server' && w !== 'client')
      throw invalidParameter(`usages: unknown usage ${quoted(w, 40)} (server or client)`);
    if (!out.includes(w)) out.push(w);
  }
  return out;
}

function keyAlgorithm(raw: string | undefined): KeyAlgorithm {
  const value = raw ?? 'ECDSA-P256';
  const found = KEY_ALGORITHMS.find((a) => a === value);
  if (!found) throw invalidParameter(`keyAlgorithm ${quoted(value, 40)} is not one of ${KEY_ALGORITHMS.join(', ')}`);
  return found;
}

function keyFilePermission(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^0?[0-7]{3}$/.test(raw))
    throw invalidParameter(`keyFilePermission ${quoted(raw, 40)} must be an octal mode such as 0640`);
  return parseInt(raw, 8);
}

/**
 * The certificate a Mount asks for, from its attributes (class parameters and pod
 * information). Throws SscErrors naming the parameter: INVALID_ARGUMENT for a bad value,
 * FAILED_PRECONDITION (PodInfoMissing) when a template needs pod information the Mount lacks.
 */
export function parseCertificateRequest(
  attributes: Readonly<Record<string, string>>,
  limits: ParameterLimits,
): CertificateRequest {
  const rawCommonName = attributes['commonName'];
  if (rawCommonName === undefined || rawCommonName.trim() === '')
    throw invalidParameter('commonName is required (e.g. "${POD_NAME}.${POD_NAMESPACE}")');
  const commonName = expandTemplate(rawCommonName.trim(), 'commonName', attributes);
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if ([...commonName].length > MAX_COMMON_NAME || /[\u0000-\u001f\u007f]/.test(commonName)) {
    throw invalidParameter(
      `commonName ${quoted(commonName, 80)} must be at most ${MAX_COMMON_NAME} characters without control characters`,
    );
  }
  const dnsNames = listParameter('dnsNames', attributes);
  dnsNames.forEach((n, i) => {
    if (!isDnsName(n)) throw invalidParameter(`dnsNames[${i}] ${quoted(n, 80)} is not a valid DNS name`);
  });
  const ipAddresses = listParameter('ipAddresses', attributes).map((ip, i) => {
    const bytes = ipAddressBytes(ip);
    if (!bytes) throw invalidParameter(`ipAddresses[${i}] ${quoted(ip, 80)} is not an IPv4 or IPv6 address`);
    return bytes;
  });
  const uris = listParameter('uris', attributes);
  uris.forEach((u, i) => {
    let ok = u.length <= MAX_URI && /^[A-Za-z][A-Za-z0-9+.-]*:[\x21-\x7e]+$/.test(u);
    try {
      if (ok) new URL(u);
    } catch {
      ok = false;
    }
    if (!ok)
      throw invalidParameter(
        `uris[${i}] ${quoted(u, 80)} is not an absolute URI of printable ASCII (at most ${MAX_URI} characters)`,
      );
  });
  return {
    commonName,
    dnsNames,
    ipAddresses,
    uris,
    usages: usages(attributes['usages']),
    keyAlgorithm: keyAlgorithm(attributes['keyAlgorithm']),
    durationSeconds: duration(attributes['duration'] ?? DEFAULT_DURATION, limits),
    keyFilePermission: keyFilePermission(attributes['keyFilePermission']),
  };
}
