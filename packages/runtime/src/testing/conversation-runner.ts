import type { MessageItem } from '@switchboard/core';
import type { Agent } from '../agents/agent.js';
import { App, type AppOptions, type OrchestratorInput } from '../app.js';
import type { TurnEvent } from '../engine/events.js';
import type { TurnResult } from '../engine/turn-engine.js';

/** Options of {@link runConversation}. */
export interface RunConversationOptions extends Partial<Omit<AppOptions, 'agents'>> {
  orchestrator: OrchestratorInput;
  agents: readonly Agent[];
  /** The user messages, sent one turn after the other. */
  messages: readonly string[];
  sessionId?: string;
  userId?: string;
}

/** What {@link runConversation} observed. */
export interface ConversationRun {
  /** One result per user message, in order. */
  turns: TurnResult[];
  /** Every event of every turn, in order. */
  events: TurnEvent[];
  /** The stored session history after the last turn. */
  history: MessageItem[];
  /** The app, for further turns; call `app.close()` when done. */
  app: App;
}

/**
 * Runs a conversation through an orchestrator in-process — the real turn
 * engine and stores, no HTTP — and returns the replies, events and history.
 *
 * @example
 * ```ts
 * const run = await runConversation({ orchestrator: MyRouter, agents: [calculator], messages: ['2 + 2?'] });
 * expect(run.turns[0].reply).toContain('4');
 * await run.app.close();
 * ```
 */
export async function runConversation({
  orchestrator,
  agents,
  messages,
  sessionId = `test-${Date.now().toString(36)}`,
  userId,
  name = 'test',
  ...options
}: RunConversationOptions): Promise<ConversationRun> {
  const app = new App({ name, agents, ...options }).mount(orchestrator);
  const turns: TurnResult[] = [];
  const events: TurnEvent[] = [];
  for (const message of messages) {
    turns.push(await app.chat({ sessionId, userId, message, onEvent: (event) => events.push(event) }));
  }
  return { turns, events, history: await app.sessions.read(sessionId), app };
}
