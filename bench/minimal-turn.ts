// The minimal baseline of the churn bench: the leanest turn a developer could write by hand for the same
// workload, with no framework and no record keeping. One regular expression picks the agent, the agent is
// awaited, and the user message and the reply go into the session's history in a Map. Nothing else: no ids,
// no timestamps, no turn record, no cap on sessions. bench/baseline-turn.ts is the fuller hand-written turn
// that stores what Switchboard stores; both are reported side by side.
import { AGENT_WORK, KEYWORDS } from './churn-workload.js';

interface MinimalMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** One turn of the minimal baseline: the answer to `message` in `sessionId`. */
export type MinimalTurn = (sessionId: string, message: string) => Promise<string>;

const ROUTE = new RegExp(`\\b(${KEYWORDS.join('|')})\\b`, 'i');

/** The minimal hand-written turn: regex route, async agent, 2 messages appended to a history in a `Map`. */
export function createMinimalTurn(): MinimalTurn {
  const sessions = new Map<string, MinimalMessage[]>();
  return async (sessionId, content) => {
    let history = sessions.get(sessionId);
    if (!history) {
      history = [];
      sessions.set(sessionId, history);
    }
    const keyword = ROUTE.exec(content)?.[1]?.toLowerCase() as (typeof KEYWORDS)[number] | undefined;
    const reply = keyword ? await AGENT_WORK[keyword](content) : 'Which topic do you mean?';
    history.push({ role: 'user', content }, { role: 'assistant', content: reply });
    return reply;
  };
}
