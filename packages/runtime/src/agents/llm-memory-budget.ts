import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { HistoryItem } from './llm-memory-history.js';
import {
  estimateMessageTokens,
  estimateTokens,
  TOKEN_ESTIMATE,
  truncateToTokens,
} from './llm-token-estimate.js';

/** How many of `items`, newest first, fit in `room` tokens. */
export function fitting(items: readonly HistoryItem[], room: number): number {
  let used = 0;
  let count = 0;
  for (let index = items.length - 1; index >= 0; index--) {
    const tokens = items[index]?.tokens ?? 0;
    if (used + tokens > room) break;
    used += tokens;
    count += 1;
  }
  return count;
}

/** Cuts the instructions and the task so that they fit `room` tokens together, the shorter one kept whole if it can. */
export function fitFixed(
  instructions: string,
  task: string | undefined,
  room: number,
): [string, string | undefined] {
  const system = estimateTokens(instructions);
  const user = task === undefined ? 0 : estimateTokens(task);
  if (system + user <= room) return [instructions, task];
  const half = Math.floor(room / 2);
  if (task === undefined) return [truncateToTokens(instructions, room), task];
  if (user <= half) return [truncateToTokens(instructions, room - user), task];
  if (system <= half) return [instructions, truncateToTokens(task, room - system)];
  return [truncateToTokens(instructions, half), truncateToTokens(task, room - half)];
}

/**
 * Drops the oldest history messages (those right after the system message)
 * until a request fits the budget, as an agent's tool rounds add messages;
 * returns how many history messages remain. The agent's own messages are never dropped.
 */
export function fitHistory(
  messages: ChatCompletionMessageParam[],
  historyCount: number,
  { tokenBudget, reservedTokens = 0 }: { tokenBudget: number; reservedTokens?: number },
): number {
  let size = TOKEN_ESTIMATE.tokensPerRequest + reservedTokens;
  for (const message of messages) size += estimateMessageTokens(message);
  let count = historyCount;
  while (count > 0 && size > tokenBudget) {
    const [dropped] = messages.splice(1, 1);
    if (dropped) size -= estimateMessageTokens(dropped);
    count -= 1;
  }
  return count;
}
