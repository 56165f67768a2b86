import type { MessageItem } from '@switchboard/core';

/** Freezes a value and everything it contains, so a stored record can be handed out without copies. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}

/**
 * Returns `text` stored as one flat string. Text built by concatenation is a
 * rope of several objects in V8 until something reads it; reading one
 * character flattens it in place, and the garbage collector then drops the
 * parts. Worth it for text kept for a session's lifetime: a short rope costs
 * two to three times the memory of the same flat text.
 */
export function flatString<T extends string | undefined>(text: T): T {
  text?.charCodeAt(0);
  return text;
}

/**
 * Makes a stored message immutable, so that nobody can change history by
 * mutating what they appended or read. Messages are flat apart from
 * `metadata`, so freezing costs a fraction of a copy.
 */
export function freezeMessage(message: MessageItem): MessageItem {
  if (message.metadata !== undefined) deepFreeze(message.metadata);
  flatString(message.content);
  return Object.freeze(message);
}
