/** True for a promise or any other thenable: a value to wait for rather than use as it is. */
export function isPromiseLike<T = unknown>(value: unknown): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
