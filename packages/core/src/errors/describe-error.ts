/** A readable description of any thrown value, without ever throwing itself. */
export function describeError(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  try {
    return String(cause);
  } catch {
    return Object.prototype.toString.call(cause);
  }
}
