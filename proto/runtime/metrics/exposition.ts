// Prometheus text exposition format 0.0.4, written as prom-client 15 wrote it (the
// /metrics text dashboards and tests already read): the same escaping, number spelling
// and label order. test/unit/metrics-registry.test.ts compares both byte for byte.

/** The Content-Type of /metrics. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A label set as given by the caller: its key order is the order written. */
export type Labels = Readonly<Record<string, string | number | undefined>>;

/** HELP text and metric names: backslash and newline escaped. */
export function escapeText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A label value: backslash, newline and double quote escaped; numbers as they print. */
export function escapeLabelValue(value: string | number | undefined): string {
  return typeof value === 'string' ? escapeText(value).replace(/"/g, '\\"') : String(value);
}

/** A sample value: "Nan" (sic, prom-client's spelling), "+Inf", "-Inf", or JavaScript's own number text. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'Nan';
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf';
  return `${value}`;
}

/** `a="x",b="y"` in the label set's own key order ("" for none). */
export function formatLabels(labels: Labels): string {
  let out = '';
  for (const name of Object.keys(labels)) {
    if (out !== '') out += ',';
    out += `${name}="${escapeLabelValue(labels[name])}"`;
  }
  return out;
}

/** One sample line: `name{labels} value`, or `name value` without labels. */
export function sampleLine(name: string, labels: string, value: number): string {
  return labels === '' ? `${name} ${formatValue(value)}` : `${name}{${labels}} ${formatValue(value)}`;
}
