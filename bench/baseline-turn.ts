// The fair baseline of the churn bench: the turn a developer would write by hand for the same work as
// Switchboard's keyword turn, with no framework. It stores what Switchboard stores (the user message, the
// agent's reply, the answer, a turn record per turn, in a per-session history kept in a Map, the least
// recently written session forgotten past the same cap), routes on the same keywords and awaits the same agents.
import { AGENT_WORK, KEYWORDS } from './churn-workload.js';

interface BaselineMessage {
  id: string;
  role: 'user' | 'tool' | 'assistant';
  content: string;
  createdAt: string;
  /** The agent that produced a `tool` message. */
  name?: string;
}

interface BaselineTurnRecord {
  turnId: string;
  status: 'running' | 'completed';
  agent: string;
  startedAt: string;
  endedAt?: string;
}

interface BaselineSession {
  messages: BaselineMessage[];
  turns: BaselineTurnRecord[];
}

/** One turn of the baseline: the answer to `message` in `sessionId`. */
export type BaselineTurn = (sessionId: string, message: string) => Promise<string>;

const ROUTES = KEYWORDS.map((keyword) => ({ keyword, pattern: new RegExp(`\\b${keyword}\\b`, 'i') }));

/**
 * A hand-written turn: append the user message and a running turn record,
 * pick the agent by keyword, await it, append its reply and the answer, mark
 * the record completed. Keeps at most `maxSessions` sessions (the in-memory
 * store's default cap), forgetting the least recently written.
 */
export function createBaselineTurn({ maxSessions = 10_000 } = {}): BaselineTurn {
  const sessions = new Map<string, BaselineSession>();
  let counter = 0;
  const id = (kind: string) => `${kind}_${(counter++).toString(36)}`;
  return async (sessionId, content) => {
    let session = sessions.get(sessionId);
    if (session) {
      sessions.delete(sessionId);
    } else {
      session = { messages: [], turns: [] };
      if (sessions.size >= maxSessions) sessions.delete(sessions.keys().next().value as string);
    }
    sessions.set(sessionId, session);
    const route = ROUTES.find(({ pattern }) => pattern.test(content));
    const agent = route?.keyword ?? 'none';
    const turn: BaselineTurnRecord = {
      turnId: id('turn'),
      status: 'running',
      agent,
      startedAt: new Date().toISOString(),
    };
    session.turns.push(turn);
    session.messages.push({ id: id('msg'), role: 'user', content, createdAt: turn.startedAt });
    const reply = route ? await AGENT_WORK[route.keyword](content) : 'Which topic do you mean?';
    const now = new Date().toISOString();
    session.messages.push({ id: id('msg'), role: 'tool', name: agent, content: reply, createdAt: now });
    session.messages.push({ id: id('msg'), role: 'assistant', content: reply, createdAt: now });
    turn.status = 'completed';
    turn.endedAt = now;
    return reply;
  };
}
