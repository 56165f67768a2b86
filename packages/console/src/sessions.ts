import type { Api } from './api.js';
import type { SessionSummary } from './types.js';

const STORAGE = 'switchboard.console.sessions';
const KEEP = 50;

/** The sessions opened in this browser, newest first. */
function stored(): SessionSummary[] {
  try {
    const value = JSON.parse(localStorage.getItem(STORAGE) ?? '[]') as unknown;
    return Array.isArray(value)
      ? value.filter((entry): entry is SessionSummary => typeof entry?.sessionId === 'string')
      : [];
  } catch {
    return [];
  }
}

/** Keeps a session in this browser's list (its first message as its title). */
export function rememberSession(sessionId: string, title?: string): void {
  const sessions = stored();
  const known = sessions.find((entry) => entry.sessionId === sessionId);
  const entry: SessionSummary = { sessionId, updatedAt: new Date().toISOString() };
  const kept = known?.title ?? title;
  if (kept) entry.title = kept;
  const rest = sessions.filter((other) => other.sessionId !== sessionId);
  localStorage.setItem(STORAGE, JSON.stringify([entry, ...rest].slice(0, KEEP)));
}

/**
 * Recent sessions: the server's list (`GET /v1/sessions`) when it has one,
 * titled from this browser's list; otherwise the sessions opened here.
 */
export async function recentSessions(api: Api): Promise<SessionSummary[]> {
  const local = stored();
  const remote = await api.sessions();
  if (!remote) return local;
  const titles = new Map(local.map((entry) => [entry.sessionId, entry.title]));
  return remote.map((entry) => {
    const title = titles.get(entry.sessionId) ?? entry.title ?? entry.preview ?? entry.lastMessage;
    return title ? { ...entry, title } : entry;
  });
}
