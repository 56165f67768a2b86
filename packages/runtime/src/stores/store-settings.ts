import { StoreUnavailableError } from '@switchboard/core';
import type { Logger } from '../logging/logger.js';
import type { MemoryStore } from './memory-store.js';
import type { SessionStore } from './session-store.js';

/**
 * @internal Runs the stores' `checkConfiguration` (a Redis that may evict
 * keys throws `ConfigurationError`) and returns their warnings, each once.
 */
export async function storeWarnings(sessions: SessionStore, memory: MemoryStore): Promise<string[]> {
  const found = await Promise.all([sessions.checkConfiguration?.(), memory.checkConfiguration?.()]);
  return [...new Set(found.flatMap((warnings) => warnings ?? []))];
}

/**
 * @internal The stores' check at the app's start: a setting that would lose
 * data ends the start-up (the `ConfigurationError` is thrown), warnings are
 * logged once. A store that does not answer yet is left to `/readyz`, which
 * checks again, so that a server may start before its Redis.
 */
export async function checkStoresAtStart(
  sessions: SessionStore,
  memory: MemoryStore,
  logger: Logger,
): Promise<void> {
  let warnings: string[];
  try {
    warnings = await storeWarnings(sessions, memory);
  } catch (error) {
    if (!StoreUnavailableError.isInstance(error)) throw error;
    logger.warn("the store's settings could not be checked (it does not answer yet): /readyz checks them");
    return;
  }
  for (const warning of warnings) logger.warn(warning);
}

/**
 * @internal The stores' part of `/readyz`: resolves to their warnings (see
 * {@link storeWarnings}) once both answer a ping; rejects when one does not.
 */
export async function storesReady(sessions: SessionStore, memory: MemoryStore): Promise<readonly string[]> {
  const [warnings] = await Promise.all([storeWarnings(sessions, memory), sessions.ping?.(), memory.ping?.()]);
  return warnings;
}
