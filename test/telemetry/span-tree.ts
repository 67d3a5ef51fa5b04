import type { ReceivedSpan } from '../helpers/otlp-receiver.js';

/** The spans of one trace as an indented text tree, children by start time, with each span's milliseconds. */
export function spanTree(spans: readonly ReceivedSpan[]): string {
  const children = new Map<string, ReceivedSpan[]>();
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) {
    const parent = ids.has(span.parentSpanId) ? span.parentSpanId : '';
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string, depth: number) => {
    const sorted = [...(children.get(parent) ?? [])].sort((a, b) => Number(a.startNanos - b.startNanos));
    for (const span of sorted) {
      const ms = Number(span.endNanos - span.startNanos) / 1e6;
      lines.push(`${'  '.repeat(depth)}${span.name}  ${ms.toFixed(0)} ms${span.statusCode === 2 ? '  (error)' : ''}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk('', 0);
  return lines.join('\n');
}
