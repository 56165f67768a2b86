import { z } from 'zod';

/** One span from an OTLP/HTTP JSON export, flattened: attribute values are plain JavaScript values. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  /** Absent on a trace's root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP span kind (1 internal, 2 server, 3 client, …). */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  durationMs: number;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  /** Links to other spans. */
  links: Array<{ traceId: string; spanId: string }>;
  /** The instrumentation scope name, e.g. `switchboard`. */
  scope: string;
  /** The resource attributes, e.g. `service.name`. */
  resource: Record<string, unknown>;
}

const KeyValuesSchema = z.array(z.object({ key: z.string(), value: z.unknown() })).optional();
const TimeSchema = z.union([z.string(), z.number()]).optional();

const SpanSchema = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number().optional(),
  startTimeUnixNano: TimeSchema,
  endTimeUnixNano: TimeSchema,
  attributes: KeyValuesSchema,
  status: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
  events: z.array(z.object({ name: z.string(), attributes: KeyValuesSchema })).optional(),
  links: z.array(z.object({ traceId: z.string(), spanId: z.string() })).optional(),
});

/** Schema of the parts of an OTLP/HTTP JSON `ExportTraceServiceRequest` that {@link flattenOtlpTraces} reads. */
export const ExportTraceRequestSchema = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: z.object({ attributes: KeyValuesSchema }).optional(),
        scopeSpans: z
          .array(
            z.object({
              scope: z.object({ name: z.string() }).optional(),
              spans: z.array(SpanSchema).optional(),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
});

/** Converts an OTLP `AnyValue` (`{ stringValue }`, `{ intValue }`, `{ arrayValue: { values } }`, …) to a plain value. */
export function plainValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const any = value as Record<string, unknown>;
  if ('stringValue' in any) return any.stringValue;
  if ('boolValue' in any) return any.boolValue;
  if ('intValue' in any) return Number(any.intValue);
  if ('doubleValue' in any) return Number(any.doubleValue);
  if ('bytesValue' in any) return any.bytesValue;
  if ('arrayValue' in any) {
    const values = (any.arrayValue as { values?: unknown[] } | undefined)?.values ?? [];
    return values.map(plainValue);
  }
  if ('kvlistValue' in any) {
    const values =
      (any.kvlistValue as { values?: Array<{ key: string; value: unknown }> } | undefined)?.values ?? [];
    return plainAttributes(values);
  }
  return undefined;
}

/** Converts OTLP `KeyValue`s to a plain object. */
export function plainAttributes(
  keyValues: ReadonlyArray<{ key: string; value: unknown }> | undefined,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const { key, value } of keyValues ?? []) result[key] = plainValue(value);
  return result;
}

function nanosToMs(start: string, end: string): number {
  try {
    return Number(BigInt(end) - BigInt(start)) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/**
 * Flattens an OTLP/HTTP JSON trace export (`resourceSpans` → `scopeSpans` →
 * `spans`) into a list of spans with plain attribute values, the scope name
 * and resource on each. Throws a zod error when the body is not such an export.
 */
export function flattenOtlpTraces(body: unknown): OtlpSpan[] {
  const request = ExportTraceRequestSchema.parse(body);
  const spans: OtlpSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = plainAttributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scope = scopeSpans.scope?.name ?? '';
      for (const span of scopeSpans.spans ?? []) {
        const startTimeUnixNano = String(span.startTimeUnixNano ?? '0');
        const endTimeUnixNano = String(span.endTimeUnixNano ?? '0');
        const flat: OtlpSpan = {
          traceId: span.traceId,
          spanId: span.spanId,
          name: span.name,
          kind: span.kind ?? 0,
          startTimeUnixNano,
          endTimeUnixNano,
          durationMs: nanosToMs(startTimeUnixNano, endTimeUnixNano),
          attributes: plainAttributes(span.attributes),
          status: { code: span.status?.code ?? 0 },
          events: (span.events ?? []).map((event) => ({
            name: event.name,
            attributes: plainAttributes(event.attributes),
          })),
          links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
          scope,
          resource,
        };
        if (span.parentSpanId) flat.parentSpanId = span.parentSpanId;
        if (span.status?.message) flat.status.message = span.status.message;
        spans.push(flat);
      }
    }
  }
  return spans;
}
