import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Histogram } from 'prom-client';
import ts from 'typescript';
import { SscError, type ErrorKind } from '../../lib/errors.js';
import { createProcessRegistry } from '../../lib/process-registry.js';
import { SyncControllerMetrics } from '../../sync-controller/metrics.js';
import { recordDriverMetrics, recordProviderMetrics, shownMetrics, type ShownMetric } from '../support/exposition.js';

// docs/metrics.md lists every `error_type` (an SscError's reason) the code can put into a
// metric, and nothing else. This reads the sources with the TypeScript
// parser, so a new reason fails here until the doc names it.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Reason-less errors that never reach a metric, by file: errors binding a socket at
 * start-up, and UNIMPLEMENTED for CSI methods that record no metric.
 */
const NOT_METRICS: Readonly<Record<string, readonly string[]>> = {
  'lib/grpc/unix-socket.ts': ['InvalidArgument', 'FailedPrecondition', 'Unavailable'],
  'driver/csi/node-service.ts': ['Unimplemented'],
};

/** Shared-runtime files only the driver uses (the provider framework cancels nothing on shutdown). */
const DRIVER_ONLY: readonly string[] = ['lib/grpc/in-flight.ts'];

/**
 * Errors whose kind is computed, without a reason: toSscError's grpc-js call errors. The
 * driver's only gRPC client (the provider client) translates every error it gets first.
 */
const OPAQUE_ALLOWED = ['lib/errors.ts: new SscError(kindOfGrpcCode(err.code), err.details)'];

function sources(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'gen' ? [] : sources(path);
      return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
    });
}

function propertyName(p: ts.ObjectLiteralElementLike): string | undefined {
  return p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? p.name.text : undefined;
}

/**
 * Reasons a source file can emit: `reason:`/`errorType:` string literals, literals passed
 * to a local function's `reason` parameter, CamelCase literals returned by a `…Reason`
 * function, and the kind's default reason of `new SscError('<kind>', …)` without one.
 */
function reasonsOf(path: string, into: Set<string>, opaque: string[]): void {
  const file = relative(REPO, path);
  const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  const reasonParam = new Map<string, number>();
  const collectFns = (node: ts.Node): void => {
    if (ts.isFunctionDeclaration(node) && node.name) {
      const i = node.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === 'reason');
      if (i >= 0) reasonParam.set(node.name.text, i);
    }
    ts.forEachChild(node, collectFns);
  };
  collectFns(sf);
  const excluded = new Set(NOT_METRICS[file] ?? []);
  const add = (reason: string) => {
    if (!excluded.has(reason)) into.add(reason);
  };
  // In a `…Reason` function's return value, only CamelCase literals are reasons.
  const literalsIn = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) && /^[A-Z][A-Za-z0-9]*$/.test(node.text)) add(node.text);
    ts.forEachChild(node, literalsIn);
  };
  const visit = (node: ts.Node, inReasonFn: boolean): void => {
    if (
      ts.isPropertyAssignment(node) &&
      ['reason', 'errorType'].includes(propertyName(node) ?? '') &&
      ts.isStringLiteral(node.initializer)
    )
      add(node.initializer.text);
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && reasonParam.has(node.expression.text)) {
      const arg = node.arguments[reasonParam.get(node.expression.text) as number];
      if (arg && ts.isStringLiteral(arg)) add(arg.text);
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'SscError') {
      const [kind, , options] = node.arguments ?? [];
      const hasReason =
        options !== undefined &&
        (!ts.isObjectLiteralExpression(options) || options.properties.some((p) => propertyName(p) === 'reason'));
      if (!hasReason) {
        if (kind && ts.isStringLiteral(kind)) add(new SscError(kind.text as ErrorKind, '').reason);
        else opaque.push(`${file}: ${node.getText(sf)}`);
      }
    }
    if (inReasonFn && ts.isReturnStatement(node) && node.expression) literalsIn(node.expression);
    const reasonFn = ts.isFunctionDeclaration(node) && node.name !== undefined && node.name.text.endsWith('Reason');
    ts.forEachChild(node, (child) => visit(child, inReasonFn || reasonFn));
  };
  visit(sf, false);
}

/** The backquoted first cells of the table rows (header excluded) from `start` to the next `## ` heading. */
function documented(doc: string, start: string): Set<string> {
  const from = doc.indexOf(start);
  expect(from, `docs/metrics.md has "${start}"`).to.be.greaterThan(-1);
  const section = doc.slice(from).split(/\n## /)[0] ?? '';
  return new Set(
    [...section.matchAll(/^\| `([A-Za-z0-9_]+)` \|/gm)]
      .map((m) => m[1] as string)
      .filter((cell) => cell !== 'error_type'),
  );
}

describe('docs/metrics.md lists every error_type the code emits', () => {
  const doc = readFileSync(join(REPO, 'docs/metrics.md'), 'utf8');
  const sides: [string, string[], string][] = [
    ['driver', ['driver', 'lib'], '### `error_type` values (driver)'],
    ['provider', ['providers', 'lib'], '`error_type` values a provider can produce'],
  ];
  for (const [side, dirs, heading] of sides) {
    it(`${side}: every reason in the code is in the table, and every row is a reason`, () => {
      const emitted = new Set<string>();
      const opaque: string[] = [];
      for (const dir of dirs) {
        for (const path of sources(join(REPO, dir))) {
          if (side === 'provider' && DRIVER_ONLY.some((f) => path.endsWith(f))) continue;
          reasonsOf(path, emitted, opaque);
        }
      }
      expect(emitted.size, 'reasons found in the sources').to.be.greaterThan(side === 'driver' ? 20 : 5);
      expect(opaque, 'errors whose reason cannot be read from the source').to.deep.equal(OPAQUE_ALLOWED);
      const listed = documented(doc, heading);
      expect([...emitted].filter((r) => !listed.has(r)).sort(), 'emitted but not in docs/metrics.md').to.deep.equal([]);
      expect([...listed].filter((r) => !emitted.has(r)).sort(), 'in docs/metrics.md but never emitted').to.deep.equal(
        [],
      );
    });
  }
});

/** A table row of docs/metrics.md describing metrics: the names in its first cell, its type and the rest of the row. */
interface MetricRow {
  readonly names: readonly string[];
  readonly type: string;
  readonly labels: string;
  readonly text: string;
}

/** The rows whose second cell is a metric type; their first cells name the metrics in backquotes. */
function metricRows(doc: string): MetricRow[] {
  return doc.split('\n').flatMap((line) => {
    const cells = line.split(' | ');
    const type = cells[1]?.trim() ?? '';
    if (!line.startsWith('| `') || !['counter', 'gauge', 'histogram', 'summary'].includes(type)) return [];
    const names = [...(cells[0] as string).matchAll(/`([a-zA-Z_:][a-zA-Z0-9_:]*)`/g)].map((m) => m[1] as string);
    return [{ names, type, labels: cells[2] ?? '', text: line }];
  });
}

/** What /metrics of the driver, a provider and the sync controller show: the default metrics and every metric recorded once. */
async function served(): Promise<Map<string, ShownMetric>> {
  const driver = createProcessRegistry();
  recordDriverMetrics(driver);
  const provider = createProcessRegistry();
  recordProviderMetrics(provider);
  // A GC kind not seen yet, so that the GC histogram's buckets show.
  const gc = driver.getSingleMetric('nodejs_gc_duration_seconds');
  if (gc instanceof Histogram) gc.zero({ kind: 'weakcb' });
  const syncController = createProcessRegistry();
  const sync = new SyncControllerMetrics(syncController);
  sync.reconciled('failed', 'ProviderError', 0.1);
  sync.providerCall('file', true);
  sync.apiRequest('GET', '200');
  return new Map([
    ...shownMetrics(await syncController.metrics()),
    ...shownMetrics(await driver.metrics()),
    ...shownMetrics(await provider.metrics()),
  ]);
}

describe('docs/metrics.md describes every metric the processes serve', () => {
  const rows = metricRows(readFileSync(join(REPO, 'docs/metrics.md'), 'utf8'));
  let metrics: Map<string, ShownMetric>;
  before(async () => {
    metrics = await served();
  });

  it('each metric served has a row with its type, its labels and its buckets', () => {
    expect([...metrics.keys()], 'metrics served').to.include.members([
      'node_publish_total',
      'provider_mount_total',
      'vault_read_cache_total',
      'process_cpu_seconds_total',
      'nodejs_gc_duration_seconds',
    ]);
    for (const [name, shown] of metrics) {
      const row = rows.find((r) => r.names.includes(name));
      expect(row, `a row for ${name}`).to.not.equal(undefined);
      expect(row?.type, `type of ${name}`).to.equal(shown.type);
      for (const label of shown.labels) expect(row?.labels, `label ${label} of ${name}`).to.include(`\`${label}\``);
      if (shown.buckets.length > 0) {
        const bounds = shown.buckets.filter((b) => b !== '+Inf').join(', ');
        expect(row?.text, `buckets of ${name}`).to.include(`buckets ${bounds} s`);
      }
    }
  });

  it('each row names metrics that are served', () => {
    expect(rows.length, 'metric rows found').to.be.greaterThan(30);
    const unknown = rows.flatMap((r) => r.names).filter((name) => !metrics.has(name));
    expect(unknown, 'in docs/metrics.md but not served').to.deep.equal([]);
  });
});
