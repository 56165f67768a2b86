import type { HrTime } from '@opentelemetry/api';

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

let origin: bigint | undefined;

/**
 * Now, for a span's start or end: one monotonic clock at nanosecond
 * precision. The OpenTelemetry SDK's default start time is `Date.now()`
 * (whole milliseconds) while its end adds a `performance.now()` duration, so
 * a child could end up to a millisecond after its parent; with both ends of
 * every span read here, each child lies within its parent to the nanosecond.
 */
export function spanTime(): HrTime {
  origin ??= originOf();
  const now = origin + process.hrtime.bigint();
  return [Number(now / NANOS_PER_SECOND), Number(now % NANOS_PER_SECOND)];
}
