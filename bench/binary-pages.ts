import { execFile } from 'node:child_process';
import { open, readFile, readlink } from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * Where a process's resident pages of its own program file are (most of the driver's idle
 * RSS is pages of the node binary: bench/README.md, "Where the driver's memory is"). Each resident page of the
 * binary (/proc/<pid>/pagemap's present bit) is named by the ELF symbol it falls in
 * (`nm`, `readelf` from binutils) and put in a component: V8's compilers, V8's runtime,
 * OpenSSL, ICU, node's own code, the JS sources of node's built-in modules, the startup
 * snapshot. `node dist/bench/binary-pages.js <pid>... [--bare]` prints it (bench/README.md).
 */

const execFileAsync = promisify(execFile);
const PAGE = 4096;

/** A component of the node binary and how to recognise its symbols (first match wins). */
const COMPONENTS: readonly [string, RegExp][] = [
  ['ICU', /icudt|^icu_|icu::|^u(loc|res|data|cnv|case|str|set|char)_/],
  ['V8 TurboFan / Turboshaft (optimising compiler)', /compiler::|turboshaft/],
  ['V8 Maglev (mid-tier compiler)', /maglev/],
  ['V8 Sparkplug (baseline compiler)', /v8::internal::baseline/],
  ['V8 WebAssembly', /wasm/i],
  ['V8 embedded builtins', /^Builtins_|embedded_blob/],
  ['V8 runtime, heap, parser, interpreter', /v8::|^V8|cppgc/],
  [
    'OpenSSL',
    /^(SSL|EVP|OPENSSL|CRYPTO|X509|BN|EC|RSA|ASN1|PEM|BIO|ERR|OBJ|PKCS|RAND|DH|DSA|ECDSA|CMS|OSSL|HMAC|SHA|MD5|AES|ENGINE|CONF|OCSP|TLS|DTLS|UI)_|^(ossl|ssl|tls|dtls|ec|bn|x509|asn1|evp|v3|sha\d*|aes|rsa|dh|ecp|chacha|poly1305|gcm|x25519|ed25519|curve25519|md5|rand|kdf|hmac)_/i,
  ],
  ['nghttp2 (HTTP/2)', /nghttp2/],
  ['libuv', /^uv_|uv__/],
  [
    'node core (C++)',
    /node::|^node_|napi_|llhttp|ada::|simdutf|simdjson|ncrypto|nbytes|uvwasi|cares|ares_|brotli|Brotli|zstd|ZSTD|deflate|inflate|crc32|zlib|sqlite3/,
  ],
  ['C++ standard library', /std::|__cxa|__gnu|abi::|GLIBCXX/],
];

/**
 * The component of a (demangled) symbol name, judged by its qualified name alone: the
 * parameter list and template arguments (a node binding taking
 * `v8::FunctionCallbackInfo<…>`) say nothing about where the code belongs. `other code`
 * when nothing matches.
 */
export function componentOf(symbol: string): string {
  const name = qualifiedName(symbol);
  for (const [component, pattern] of COMPONENTS) if (pattern.test(name)) return component;
  return 'other code';
}

/** `ns::Class<T>::method(args) const` → `ns::Class::method`: template arguments and parameters dropped. */
export function qualifiedName(symbol: string): string {
  const ANON = '(anonymous namespace)';
  let out = '';
  let depth = 0;
  for (let i = 0; i < symbol.length; i++) {
    const c = symbol[i]!;
    if (c === '<') depth++;
    else if (c === '>') depth = Math.max(0, depth - 1);
    else if (depth > 0) continue;
    else if (c === '(') {
      // `(anonymous namespace)` is part of a name; any other `(` starts the parameters.
      if (!symbol.startsWith(ANON, i)) break;
      out += ANON;
      i += ANON.length - 1;
    } else out += c;
  }
  return out.trim();
}

/** Named for unsymbolised read-only data: JS sources are text, the startup snapshot and code cache are not. */
export function unnamedDataComponent(page: Buffer): string {
  let printable = 0;
  for (const b of page) if (b === 0x0a || b === 0x09 || (b >= 0x20 && b < 0x7f)) printable++;
  return printable >= page.length * 0.9
    ? "JS sources of node's built-in modules"
    : 'startup snapshot, code cache (unnamed data)';
}

interface Symbol {
  readonly address: number;
  readonly end: number;
  readonly name: string;
}
interface Segment {
  readonly offset: number;
  readonly address: number;
  readonly size: number;
}
interface Section {
  readonly name: string;
  readonly address: number;
  readonly size: number;
}
interface ElfIndex {
  readonly segments: Segment[];
  readonly sections: Section[];
  readonly symbols: Symbol[];
}

const indexes = new Map<string, Promise<ElfIndex>>();

async function elfIndex(binary: string): Promise<ElfIndex> {
  let found = indexes.get(binary);
  if (!found) {
    found = readElfIndex(binary);
    indexes.set(binary, found);
  }
  return found;
}

async function readElfIndex(binary: string): Promise<ElfIndex> {
  const big = { maxBuffer: 512 * 1024 * 1024 };
  const [headers, sectionTable, nm] = await Promise.all([
    execFileAsync('readelf', ['-lW', binary], big),
    execFileAsync('readelf', ['-SW', binary], big),
    execFileAsync('nm', ['-C', '--defined-only', '-S', '-n', binary], big),
  ]);
  const segments: Segment[] = [];
  for (const m of headers.stdout.matchAll(/^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)/gm)) {
    segments.push({ offset: Number(m[1]), address: Number(m[2]), size: Number(m[3]) });
  }
  const sections: Section[] = [];
  for (const m of sectionTable.stdout.matchAll(
    /^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)/gm,
  )) {
    const address = parseInt(m[2]!, 16);
    if (address > 0) sections.push({ name: m[1]!, address, size: parseInt(m[3]!, 16) });
  }
  const symbols: Symbol[] = [];
  for (const line of nm.stdout.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) \S (.*)$/.exec(line);
    if (!m) continue;
    const address = parseInt(m[1]!, 16);
    const size = parseInt(m[2]!, 16);
    // TLS and absolute symbols (small addresses) are not in a loaded segment.
    if (size > 0 && segments.some((s) => address >= s.address && address < s.address + s.size))
      symbols.push({ address, end: address + size, name: m[3]! });
  }
  symbols.sort((a, b) => a.address - b.address);
  return { segments, sections, symbols };
}

/** The symbol whose extent holds `address`, by binary search over start addresses. */
function symbolAt(symbols: readonly Symbol[], address: number): Symbol | undefined {
  let lo = 0;
  let hi = symbols.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (symbols[mid]!.address <= address) lo = mid + 1;
    else hi = mid - 1;
  }
  // Nested and overlapping symbols: look back a little for one that covers the address.
  for (let i = hi; i >= 0 && i > hi - 64; i--) if (symbols[i]!.end > address) return symbols[i];
  return undefined;
}

/** Resident KiB of `pid`'s program file by component (and by ELF section), with the total. */
export interface BinaryPages {
  readonly binary: string;
  readonly totalKiB: number;
  readonly byComponent: Map<string, number>;
  readonly bySection: Map<string, number>;
}

/** Reads which pages of `pid`'s executable are resident and names them (Linux, root or the same user; needs binutils). */
export async function binaryPages(pid: number): Promise<BinaryPages> {
  const binary = await readlink(`/proc/${pid}/exe`);
  const [index, maps] = await Promise.all([elfIndex(binary), readFile(`/proc/${pid}/maps`, 'utf8')]);
  const byComponent = new Map<string, number>();
  const bySection = new Map<string, number>();
  const add = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + PAGE / 1024);
  const pagemap = await open(`/proc/${pid}/pagemap`, 'r');
  const file = await open(binary, 'r');
  let totalKiB = 0;
  try {
    for (const line of maps.split('\n')) {
      const f = line.split(/\s+/);
      if (f[5] !== binary) continue;
      const [start, end] = f[0]!.split('-').map((x) => parseInt(x, 16)) as [number, number];
      const fileOffset = parseInt(f[2]!, 16);
      const pages = (end - start) / PAGE;
      const entries = Buffer.alloc(pages * 8);
      await pagemap.read(entries, 0, entries.length, (start / PAGE) * 8);
      for (let i = 0; i < pages; i++) {
        if (entries.readBigUInt64LE(i * 8) >> 63n !== 1n) continue;
        totalKiB += PAGE / 1024;
        const offset = fileOffset + i * PAGE;
        const segment = index.segments.find((s) => offset >= s.offset && offset < s.offset + s.size);
        const address = segment ? segment.address + offset - segment.offset : -1;
        const section =
          index.sections.find((s) => address >= s.address && address < s.address + s.size)?.name ?? '(none)';
        add(bySection, section);
        const symbol = symbolAt(index.symbols, address);
        let component: string;
        if (symbol) component = componentOf(symbol.name);
        else if (section === '.rodata') {
          const page = Buffer.alloc(PAGE);
          await file.read(page, 0, PAGE, offset);
          component = unnamedDataComponent(page);
        } else
          component =
            section.startsWith('.dyn') || section.startsWith('.gnu') || section.startsWith('.rela')
              ? 'dynamic symbol tables'
              : `unnamed ${section}`;
        add(byComponent, component);
      }
    }
  } finally {
    await pagemap.close();
    await file.close();
  }
  return { binary, totalKiB, byComponent, bySection };
}
