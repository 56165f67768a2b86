import type { MessageItem } from '@switchboard/core';
import { resultOfRecord } from '../../src/engine/turn-engine.js';
import type { SessionStore } from '../../src/stores/session-store.js';
import { historyProblems } from '../../src/testing/history-check.js';
import { isFinished, type TurnRecord } from '../../src/turns/turn-record.js';
import type { Ledger, SentMessage } from './ledger.js';

/**
 * What is wrong with the stored sessions, once everything has settled,
 * given what the clients were told: each history well formed and ended;
 * every message stored at most once, and every acknowledged one exactly
 * once, with the answer its client got; every approval decided (never left
 * or put back pending), as its one acknowledged decision said, a rejected
 * call never run and an approved one run.
 */
export async function storedProblems(
  store: SessionStore,
  ledger: Ledger,
  sessionIds: readonly string[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const sessionId of sessionIds) {
    const messages = await store.read(sessionId);
    const turns = await store.listTurns(sessionId);
    const found = (problem: string) => problems.push(`session ${sessionId}: ${problem}`);
    for (const problem of historyProblems(messages, turns)) found(problem);
    const sent = ledger.sent.get(sessionId) ?? [];
    if (!sent[sent.length - 1]?.acknowledged) found('its last message was never answered');
    for (const turn of turns)
      if (!isFinished(turn.status)) found(`turn ${turn.turnId} is still ${turn.status}`);
    for (const entry of sent)
      for (const problem of messageProblems(entry, messages, turns, sessionId)) found(problem);
    for (const problem of approvalProblems(turns, ledger)) found(problem);
  }
  return problems;
}

function messageProblems(
  { text, acknowledged }: SentMessage,
  messages: readonly MessageItem[],
  turns: readonly TurnRecord[],
  sessionId: string,
): string[] {
  const stored = messages.filter((message) => message.role === 'user' && message.content === text);
  if (stored.length > 1) return [`message ${text} is stored ${stored.length} times`];
  if (!acknowledged) return [];
  if (stored.length === 0) return [`message ${text} was answered (${acknowledged.status}) but is not stored`];
  const record = turns.filter((turn) => turn.turnId === acknowledged.turnId);
  if (record.length !== 1)
    return [`turn ${acknowledged.turnId} of message ${text} is stored ${record.length} times`];
  const turn = record[0] as TurnRecord;
  if (turn.userMessageId !== stored[0]?.id) return [`turn ${turn.turnId} is not the turn of message ${text}`];
  if (!isFinished(acknowledged.status)) return [];
  const reply = resultOfRecord(sessionId, turn, messages, '').reply;
  return reply === acknowledged.reply
    ? []
    : [`message ${text} was answered '${acknowledged.reply}', stored '${reply}'`];
}

function approvalProblems(turns: readonly TurnRecord[], ledger: Ledger): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const turn of turns) {
    for (const approval of turn.approvals ?? []) {
      const { id, status, toolCallId } = approval;
      if (seen.has(id)) problems.push(`approval ${id} is stored twice`);
      seen.add(id);
      const asks = ledger.approvals.get(id);
      const asked = status === 'approved' ? 'approve' : status === 'rejected' ? 'reject' : undefined;
      if (status === 'pending') problems.push(`approval ${id} is still pending`);
      else if (!asked || !asks?.asked.has(asked))
        problems.push(`approval ${id} is ${status}, which nobody asked`);
      const told = asks?.acknowledged ?? [];
      if (told.length > 1)
        problems.push(`approval ${id} was decided ${told.length} times (${told.join(', ')})`);
      if (told.length > 0 && told[0] !== status)
        problems.push(`approval ${id} was ${told[0]} but is stored ${status}`);
      const ran = ledger.gatedRuns.has(toolCallId);
      if (status === 'rejected' && ran) problems.push(`the call of rejected approval ${id} ran`);
      if (status === 'approved' && turn.status === 'completed' && !ran) {
        problems.push(`the call of approved approval ${id} never ran`);
      }
    }
  }
  return problems;
}
