/**
 * A turn's plan in session memory: written after each round and before the
 * answer, read back on the turn's later decisions, on any replica.
 *
 * @module
 */
import { trace } from '@opentelemetry/api';
import { type Conversation, RequestContext } from '@switchboard/core';
import { parseStoredPlan, type StoredPlan } from './plan-state.js';

/** Where the orchestrator keeps a turn's plan (its `memoryKey`). */
export interface PlanKeys {
  memoryKey(turnId: string): string;
}

/** The turn's plan as stored, or undefined when there is none, or it cannot be read. */
export async function recallPlan(
  keys: PlanKeys,
  conversation: Conversation,
): Promise<StoredPlan | undefined> {
  const memory = RequestContext.tryCurrent()?.getMemory('session');
  const stored = memory ? await memory.getContent(keys.memoryKey(conversation.turnId)) : undefined;
  return stored?.success ? parseStoredPlan(stored.data, conversation.turnId) : undefined;
}

/** Stores the turn's plan; a write that fails is marked on the decision span. */
export async function rememberPlan(keys: PlanKeys, state: StoredPlan): Promise<void> {
  const memory = RequestContext.tryCurrent()?.getMemory('session');
  const written = memory ? await memory.setContent(keys.memoryKey(state.turnId), state) : undefined;
  if (!written?.success) trace.getActiveSpan()?.setAttribute('switchboard.plan.remembered', false);
}
