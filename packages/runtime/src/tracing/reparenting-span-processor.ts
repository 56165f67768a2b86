import type { Attributes, Context, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TRACER_NAME } from './spans.js';

/** Decides whether a span is exported. Must be side-effect free; it may run before and after the span ends. */
export type SpanPredicate = (span: ReadableSpan) => boolean;

/** The attribute a re-parented span carries: the span id of the dropped parent it was moved away from. */
export const ORIGINAL_PARENT_ATTRIBUTE = 'switchboard.original_parent_span_id';

// Langfuse marks spans whose parent it expects to drop as application roots; a re-parented span has a kept parent.
const LANGFUSE_APP_ROOT_ATTRIBUTE = 'langfuse.internal.is_app_root';

// Built once: the filter runs several times per span.
const SCOPE_PREFIX = `${TRACER_NAME}.`;

/**
 * True for spans of Switchboard's instrumentation scopes: `switchboard` (turns,
 * routing decisions, agent calls) and `switchboard.*` (e.g. `observe` spans).
 */
export function isSwitchboardSpan(span: Pick<ReadableSpan, 'instrumentationScope'>): boolean {
  const scope = span.instrumentationScope.name;
  return scope === TRACER_NAME || scope.startsWith(SCOPE_PREFIX);
}

interface SpanNode {
  readonly spanContext: SpanContext;
  readonly parent?: SpanContext;
  /** The span while it runs; undefined once it ended. */
  live?: ReadableSpan;
  /** Whether the span was exported, once it ended. */
  kept?: boolean;
  /** Children that started and have not ended: the node is needed until they end. */
  openChildren: number;
}

function withParent(span: ReadableSpan, parent: SpanContext | undefined): ReadableSpan {
  const attributes: Attributes = {
    ...span.attributes,
    [ORIGINAL_PARENT_ATTRIBUTE]: span.parentSpanContext?.spanId,
  };
  if (parent) delete attributes[LANGFUSE_APP_ROOT_ATTRIBUTE];
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: parent,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes,
    links: span.links,
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/** Options of {@link ReparentingSpanProcessor}. */
export interface ReparentingSpanProcessorOptions {
  /** Receives every span (it should drop the same ones, e.g. through the same predicate); kept spans re-parented. */
  processor: SpanProcessor;
  /** Which spans are exported. */
  keep: SpanPredicate;
}

/**
 * Keeps a filtered export free of orphans. When a filter drops some spans
 * (Langfuse drops scopes it does not know, such as HTTP server spans), a kept
 * span whose parent is dropped would point at a span the backend never
 * receives. This processor hands such a span to the inner processor with its
 * parent replaced by the nearest kept ancestor — or none, making it a root —
 * and the dropped parent's id in `switchboard.original_parent_span_id`.
 * Parents outside this process (remote) are left alone.
 *
 * Whether an ancestor is kept is judged on the ancestor as it is when the
 * child ends (ancestors usually end last), so the predicate should not depend
 * on attributes set late; scope-based predicates are exact.
 */
export class ReparentingSpanProcessor implements SpanProcessor {
  readonly #inner: SpanProcessor;
  readonly #keep: SpanPredicate;
  readonly #nodes = new Map<string, SpanNode>();

  constructor({ processor, keep }: ReparentingSpanProcessorOptions) {
    this.#inner = processor;
    this.#keep = keep;
  }

  /** Tracks the span's parent, then forwards it. */
  onStart(span: Span, parentContext: Context): void {
    const spanContext = span.spanContext();
    const parent = span.parentSpanContext;
    if (parent) {
      const parentNode = this.#nodes.get(parent.spanId);
      if (parentNode) parentNode.openChildren++;
    }
    this.#nodes.set(spanContext.spanId, { spanContext, parent, live: span, openChildren: 0 });
    this.#inner.onStart(span, parentContext);
  }

  /** Forwards the span's ending to the inner processor. */
  onEnding(span: Span): void {
    this.#inner.onEnding?.(span);
  }

  /** Forwards the ended span, re-parented when its parent is not exported. */
  onEnd(span: ReadableSpan): void {
    const spanId = span.spanContext().spanId;
    const kept = this.#isKept(span);
    let exported = span;
    const parent = span.parentSpanContext;
    if (kept && parent) {
      const target = this.#nearestKept(parent);
      if (target?.spanId !== parent.spanId) exported = withParent(span, target);
    }
    const node = this.#nodes.get(spanId);
    if (node) {
      node.live = undefined;
      node.kept = kept;
      this.#release(spanId, node);
    }
    this.#inner.onEnd(exported);
  }

  /** Flushes the inner processor. */
  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  /** Shuts the inner processor down. */
  shutdown(): Promise<void> {
    this.#nodes.clear();
    return this.#inner.shutdown();
  }

  /** The number of spans tracked (running, or ended with running children). */
  get trackedSpans(): number {
    return this.#nodes.size;
  }

  #isKept(span: ReadableSpan): boolean {
    try {
      return this.#keep(span);
    } catch {
      return false;
    }
  }

  #nearestKept(parent: SpanContext): SpanContext | undefined {
    let current: SpanContext | undefined = parent;
    while (current) {
      const node = this.#nodes.get(current.spanId);
      // Not started here (a remote parent, or one from before this processor): keep the link.
      if (!node) return current;
      if (node.live ? this.#isKept(node.live) : node.kept === true) return current;
      current = node.parent;
    }
    return undefined;
  }

  #release(spanId: string, node: SpanNode): void {
    let currentId = spanId;
    let current: SpanNode | undefined = node;
    while (current && current.live === undefined && current.openChildren === 0) {
      this.#nodes.delete(currentId);
      const parentId = current.parent?.spanId;
      if (parentId === undefined) return;
      current = this.#nodes.get(parentId);
      if (current) current.openChildren--;
      currentId = parentId;
    }
  }
}
