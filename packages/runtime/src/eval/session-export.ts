import { type MessageItem, MessageItemSchema, ValidationError } from '@switchboard/core';
import { z } from 'zod';
import type { SessionStore } from '../stores/session-store.js';
import { publicTurn, type TurnRecord } from '../turns/turn-record.js';
import { TurnRecordSchema } from '../turns/turn-schemas.js';

/** A recorded session: its messages and turns, as `GET /v1/sessions/:id/export` gives them. */
export interface RecordedSession {
  sessionId: string;
  messages: MessageItem[];
  turns: TurnRecord[];
  /** The user who started it, when known. */
  userId?: string;
}

/** The version of the export format, on each session's first line. */
export const SESSION_EXPORT_VERSION = 1;

const HeaderSchema = z.object({
  type: z.literal('session'),
  version: z.literal(SESSION_EXPORT_VERSION),
  sessionId: z.string().min(1),
  userId: z.string().optional(),
});
const MessageLineSchema = z.object({ type: z.literal('message'), message: MessageItemSchema });
const TurnLineSchema = z.object({ type: z.literal('turn'), turn: TurnRecordSchema });
const LineSchema = z.discriminatedUnion('type', [HeaderSchema, MessageLineSchema, TurnLineSchema]);

/**
 * A session as JSONL: a `session` line (id, format version, owner), then
 * one `message` line per message and one `turn` line per turn (their
 * approvals without agents' saved state), oldest first.
 */
export function sessionExportLines(session: RecordedSession, exportedAt = new Date()): string {
  const header: Record<string, unknown> = {
    type: 'session',
    version: SESSION_EXPORT_VERSION,
    sessionId: session.sessionId,
    exportedAt: exportedAt.toISOString(),
  };
  if (session.userId !== undefined) header.userId = session.userId;
  const lines = [JSON.stringify(header)];
  for (const message of session.messages) lines.push(JSON.stringify({ type: 'message', message }));
  for (const turn of session.turns) lines.push(JSON.stringify({ type: 'turn', turn: publicTurn(turn) }));
  return `${lines.join('\n')}\n`;
}

/**
 * Reads exported sessions (several may follow each other in one text).
 *
 * @throws ValidationError naming the first bad line.
 */
export function parseSessionExport(text: string, source = 'export'): RecordedSession[] {
  const sessions: RecordedSession[] = [];
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] as string).trim();
    if (line === '') continue;
    const where = `${source}:${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new ValidationError({ message: `${where}: not JSON (${(error as Error).message})` });
    }
    const parsed = LineSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ValidationError({
        message: `${where}: ${issue?.path.join('.') || 'line'}: ${issue?.message}`,
      });
    }
    const item = parsed.data;
    if (item.type === 'session') {
      const session: RecordedSession = { sessionId: item.sessionId, messages: [], turns: [] };
      if (item.userId !== undefined) session.userId = item.userId;
      sessions.push(session);
      continue;
    }
    const current = sessions.at(-1);
    if (!current) throw new ValidationError({ message: `${where}: a ${item.type} before any session line` });
    if (item.type === 'message') current.messages.push(item.message);
    else current.turns.push(item.turn as TurnRecord);
  }
  return sessions;
}

/**
 * A session as a store holds it, ready for `replaySessions` (undefined when
 * the store has no such session).
 *
 * @example
 * ```ts
 * const recorded = await readRecordedSession(app.sessions, 'ses_123');
 * ```
 */
export async function readRecordedSession(
  sessions: SessionStore,
  sessionId: string,
): Promise<RecordedSession | undefined> {
  const [messages, turns] = await Promise.all([sessions.read(sessionId), sessions.listTurns(sessionId)]);
  if (messages.length === 0) return undefined;
  const session: RecordedSession = { sessionId, messages, turns: turns.map(publicTurn) };
  const userId = turns[0]?.userId;
  if (userId !== undefined) session.userId = userId;
  return session;
}
