import type { MessageItem } from '@switchboard/core';

/** Freezes a value and everything it contains, so a stored record can be handed out without copies. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}

/**
 * Makes a stored message immutable, so that nobody can change history by
 * mutating what they appended or read. Messages are flat apart from
 * `metadata`, so freezing costs a fraction of a copy.
 */
export function freezeMessage(message: MessageItem): MessageItem {
  if (message.metadata !== undefined) deepFreeze(message.metadata);
  return Object.freeze(message);
}
