import type { HrTime, Span } from '@opentelemetry/api';

const NANOS_PER_SECOND = 1_000_000_000n;

const ORIGIN_KEY = Symbol.for('switchboard.span-clock.origin');

/**
 * The wall-clock time (epoch nanoseconds) of `process.hrtime`'s zero, taken
 * at the first span of the process and shared by every copy of this module,
 * so that all Switchboard spans read one clock.
 */
function originOf(): bigint {
  const holder = globalThis as { [ORIGIN_KEY]?: bigint };
  let origin = holder[ORIGIN_KEY];
  if (origin === undefined) {
    origin = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();
    holder[ORIGIN_KEY] = origin;
  }
  return origin;
}

// The origin split into whole seconds and nanoseconds, so that reading the clock is plain number arithmetic.
let originSeconds: number | undefined;
let originNanos = 0;

/**
 * Now, for a span's start or end: one monotonic clock at nanosecond
 * precision. The OpenTelemetry SDK's default start time is `Date.now()`
 * (whole milliseconds) while its end adds a `performance.now()` duration, so
 * a child could end up to a millisecond after its parent; with both ends of
 * every span read here, each child lies within its parent to the nanosecond.
 */
export function spanTime(): HrTime {
  if (originSeconds === undefined) {
    const origin = originOf();
    originSeconds = Number(origin / NANOS_PER_SECOND);
    originNanos = Number(origin % NANOS_PER_SECOND);
  }
  const [seconds, nanos] = process.hrtime();
  const sum = nanos + originNanos;
  return sum >= 1e9 ? [seconds + originSeconds + 1, sum - 1e9] : [seconds + originSeconds, sum];
}

/**
 * Ends `span` at {@link spanTime}; a span that records nothing (tracing off,
 * or already ended) is ended without reading the clock.
 */
export function endSpan(span: Span): void {
  span.end(span.isRecording() ? spanTime() : undefined);
}
