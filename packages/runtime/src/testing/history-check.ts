import type { MessageItem } from '@switchboard/core';
import { isFinished, type TurnRecord } from '../turns/turn-record.js';

/**
 * What is wrong with a session's stored history, one sentence each; empty
 * when it is well formed. The rules a user (and an orchestrator reading the
 * history) relies on, whatever crashed or was retried:
 *
 * - every message belongs to a turn: the history is a series of turns, each
 *   starting with its user message, in the order of the turn records, with
 *   no message between turns and no turn missing its record;
 * - every `tool` message answers a call of its own turn's recorded steps,
 *   and no call is answered twice;
 * - every ended turn (`completed`, `failed`, `interrupted`, `blocked`) ends
 *   with exactly one `assistant` message, its last; a turn that has not
 *   ended has none, and only the last turn may be unfinished.
 *
 * @example
 * ```ts
 * const { messages, turns } = await (await fetch(`${url}/v1/sessions/${id}`)).json();
 * expect(historyProblems(messages, turns)).toEqual([]);
 * ```
 */
export function historyProblems(messages: readonly MessageItem[], turns: readonly TurnRecord[]): string[] {
  const problems: string[] = [];
  const starts = new Map<string, number>();
  messages.forEach((message, index) => {
    if (message.role === 'user') starts.set(message.id, index);
  });
  const userCount = starts.size;
  if (userCount !== turns.length) {
    problems.push(`${userCount} user messages but ${turns.length} turn records`);
  }
  if (messages.length > 0 && messages[0]?.role !== 'user') {
    problems.push(`the history starts with a ${messages[0]?.role} message, not a user message`);
  }
  let previousStart = -1;
  turns.forEach((turn, index) => {
    const start = starts.get(turn.userMessageId);
    const label = `turn ${index + 1} (${turn.turnId}, ${turn.status})`;
    if (start === undefined) {
      problems.push(`${label}: its user message ${turn.userMessageId} is not in the history`);
      return;
    }
    if (start <= previousStart) problems.push(`${label}: its user message comes before the previous turn's`);
    previousStart = start;
    let end = start + 1;
    while (end < messages.length && messages[end]?.role !== 'user') end += 1;
    const own = messages.slice(start + 1, end);
    const calls = new Set(turn.steps.flatMap((step) => step.calls.map((call) => call.toolCallId)));
    const answered = new Set<string>();
    for (const message of own) {
      if (message.role !== 'tool') continue;
      if (!calls.has(message.toolCallId)) {
        problems.push(
          `${label}: tool message ${message.id} answers ${message.toolCallId}, not a call of this turn`,
        );
      }
      if (answered.has(message.toolCallId)) {
        problems.push(`${label}: call ${message.toolCallId} is answered twice`);
      }
      answered.add(message.toolCallId);
    }
    const answers = own.filter((message) => message.role === 'assistant');
    if (isFinished(turn.status)) {
      if (answers.length !== 1) problems.push(`${label}: ended with ${answers.length} answers, not one`);
      else if (own[own.length - 1]?.role !== 'assistant')
        problems.push(`${label}: its answer is not its last message`);
    } else {
      if (answers.length > 0) problems.push(`${label}: has an answer but has not ended`);
      if (index !== turns.length - 1) problems.push(`${label}: has not ended, but a later turn started`);
    }
  });
  return problems;
}

/**
 * Throws an error listing every problem {@link historyProblems} finds.
 * @throws Error when the history is not well formed.
 */
export function assertWellFormedHistory(
  messages: readonly MessageItem[],
  turns: readonly TurnRecord[],
): void {
  const problems = historyProblems(messages, turns);
  if (problems.length > 0)
    throw new Error(`The session history is not well formed:\n- ${problems.join('\n- ')}`);
}
