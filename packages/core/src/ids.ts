import { randomUUID } from 'node:crypto';

/**
 * Creates a unique id with an optional readable prefix, e.g. `call_1f0c…`.
 * @param prefix - a short tag such as `msg`, `call` or `turn`.
 */
export function createId(prefix?: string): string {
  const id = randomUUID().replaceAll('-', '');
  return prefix ? `${prefix}_${id}` : id;
}
