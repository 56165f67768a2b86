import { ValidationError } from '@switchboard/core';
import type { MemoryWriteOptions } from './memory-store.js';

/**
 * Serialises a memory value to JSON, so that what is stored is a copy that
 * callers cannot mutate and behaves the same in every store.
 * @throws ValidationError when the value is not JSON-serialisable.
 */
export function encodeMemoryValue(namespace: string, key: string, value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new ValidationError({
      message: `Memory value '${namespace}/${key}' is not JSON-serialisable`,
      cause: error,
    });
  }
  if (json === undefined) {
    throw new ValidationError({
      message: `Memory value '${namespace}/${key}' is not JSON-serialisable (got ${typeof value})`,
    });
  }
  return json;
}

/**
 * The time to live of a write in whole milliseconds, or `undefined` for none.
 * @throws ValidationError when `ttlSeconds` is not a positive number.
 */
export function memoryTtlMs({ ttlSeconds }: MemoryWriteOptions = {}): number | undefined {
  if (ttlSeconds === undefined) return undefined;
  if (!(ttlSeconds > 0) || !Number.isFinite(ttlSeconds)) {
    throw new ValidationError({
      message: `ttlSeconds must be a positive number of seconds, got ${ttlSeconds}`,
    });
  }
  return Math.max(1, Math.round(ttlSeconds * 1000));
}

/** A JSON copy of `update`'s default, so the update function can mutate it freely; `undefined` stays `undefined`. */
export function copyMemoryDefault<T>(namespace: string, key: string, defaultValue: T): T {
  return defaultValue === undefined
    ? defaultValue
    : (JSON.parse(encodeMemoryValue(namespace, key, defaultValue)) as T);
}
