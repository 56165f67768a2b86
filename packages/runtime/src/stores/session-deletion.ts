/**
 * Deleting what the stores hold of a session (its messages, turns and
 * session-scoped memory) once no turn runs on it, and of a user (every
 * session the user started, and the user's memory): `app.deleteSession`,
 * `app.deleteUser`.
 *
 * @module
 */
import { memoryNamespace, userSessionsNamespace } from './memory-binding.js';
import type { MemoryStore } from './memory-store.js';
import type { SessionStore } from './session-store.js';
import { tenantSessions } from './tenant-sessions.js';

/**
 * Deletes a session's messages, turns and session-scoped memory, waiting
 * (up to `sessionWaitMs`) for its lease first. With a tenant, only that
 * tenant's session. Resolves to whether the session existed.
 */
export async function deleteSessionData(
  store: SessionStore,
  memory: MemoryStore,
  sessionId: string,
  tenantId: string | undefined,
  { leaseTtlMs = 30_000, sessionWaitMs = 10_000 }: { leaseTtlMs?: number; sessionWaitMs?: number },
): Promise<boolean> {
  const sessions = tenantId === undefined ? store : tenantSessions(store, tenantId);
  const lease = await sessions.acquireLease(sessionId, { ttlMs: leaseTtlMs, waitMs: sessionWaitMs });
  try {
    const existed = await sessions.delete(sessionId);
    await memory.clear(memoryNamespace('session', { sessionId, tenantId }));
    return existed;
  } finally {
    await Promise.resolve(lease.release()).catch(() => {});
  }
}

/**
 * Deletes a user's data: every session the user started, with
 * `deleteSession`, then the user's memory. Resolves to how many sessions
 * were deleted.
 */
export async function deleteUserData(
  memory: MemoryStore,
  userId: string,
  tenantId: string | undefined,
  deleteSession: (sessionId: string, tenantId: string | undefined) => Promise<boolean>,
): Promise<{ deletedSessions: number }> {
  const index = userSessionsNamespace(userId, tenantId);
  const ids = ((await memory.get(index, 'ids')) as string[] | undefined) ?? [];
  let deletedSessions = 0;
  for (const sessionId of ids) if (await deleteSession(sessionId, tenantId)) deletedSessions += 1;
  await memory.clear(memoryNamespace('user', { sessionId: '', userId, tenantId }));
  await memory.clear(index);
  return { deletedSessions };
}
