import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

function startOf(span: ReadableSpan): number {
  const [seconds, nanoseconds] = span.startTime;
  return seconds * 1e9 + nanoseconds;
}

/**
 * The spans of one trace drawn as the tree a trace viewer (Langfuse, Jaeger)
 * shows: span names, children under their parent in the order they started,
 * with `├─`, `└─` and `│` connectors. A span whose parent was not recorded
 * is drawn as a root.
 *
 * @example
 * ```ts
 * spanTree(recording.spans, traceId);
 * // travel-desk
 * // ├─ route 0
 * // │  └─ chat gpt-4o-mini
 * // └─ agent flights
 * ```
 */
export function spanTree(spans: readonly ReadableSpan[], traceId: string): string {
  const inTrace = spans.filter((span) => span.spanContext().traceId === traceId);
  const ids = new Set(inTrace.map((span) => span.spanContext().spanId));
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const span of inTrace) {
    const parentId = span.parentSpanContext?.spanId;
    const key = parentId !== undefined && ids.has(parentId) ? parentId : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const draw = (span: ReadableSpan, prefix: string, connector: string, childPrefix: string) => {
    lines.push(`${prefix}${connector}${span.name}`);
    const below = [...(children.get(span.spanContext().spanId) ?? [])].sort(
      (a, b) => startOf(a) - startOf(b),
    );
    below.forEach((child, index) => {
      const last = index === below.length - 1;
      draw(child, prefix + childPrefix, last ? '└─ ' : '├─ ', last ? '   ' : '│  ');
    });
  };
  for (const root of [...(children.get(undefined) ?? [])].sort((a, b) => startOf(a) - startOf(b))) {
    draw(root, '', '', '');
  }
  return lines.join('\n');
}

/**
 * The tree a markdown text shows in the fenced block whose first line starts
 * with `root`, without the comments written after the span names (two or
 * more spaces, then anything), in the form {@link spanTree} draws.
 *
 * @example
 * ```ts
 * expect(readmeTree(readme, 'travel-desk')).toBe(spanTree(recording.spans, traceId));
 * ```
 */
export function readmeTree(markdown: string, root: string): string | undefined {
  const block = [...markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .find((text) => text.startsWith(root));
  return block
    ?.trimEnd()
    .split('\n')
    .map((line) => /^([│├└─\s]*)(\S.*?)(?:\s{2,}.*)?$/.exec(line)!.slice(1, 3).join(''))
    .join('\n');
}
