let lastMs = Number.NaN;
let lastIso = '';

/**
 * The current time as an ISO 8601 string. Every message and routing step
 * carries one, and under load many fall within the same millisecond: those
 * share one string instead of formatting and storing their own.
 */
export function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}
