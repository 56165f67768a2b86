import {
  type AgentLike,
  type Conversation,
  createId,
  type Decision,
  isErrorMessage,
  isRouteToUser,
  type MessageItem,
  type Orchestrator,
  type OrchestratorOptions,
  RequestContext,
  type ToolMessage,
} from '@switchboard/core';
import type { OrchestratorInput } from '../app.js';
import { InMemoryMemoryStore } from '../stores/in-memory-memory-store.js';
import { bindMemory, memoryNamespace } from '../stores/memory-binding.js';
import type { RouteStep } from '../turns/turn-record.js';
import { agentLabel } from './dataset.js';
import { ERROR_LABEL } from './eval-report.js';
import type { RecordedSession } from './session-export.js';

/** A recorded decision the replayed orchestrator decided otherwise. */
export interface Disagreement {
  sessionId: string;
  turnId: string;
  hop: number;
  /** The user message of the turn. */
  message: string;
  /** The labels of the recorded and the replayed decision (agents joined by `+`, `(no agent)`, `(error)`). */
  recorded: string;
  replayed: string;
  recordedReason?: string;
  replayedReason?: string;
  replayedThought?: string;
}

/** What {@link replaySessions} found. */
export interface ReplayReport {
  orchestrator: string;
  sessions: number;
  /** Recorded decisions re-decided. */
  decisions: number;
  agreed: number;
  /** `agreed / decisions` (0 when there was none). */
  agreement: number;
  disagreements: Disagreement[];
}

/** Options of {@link replaySessions}. */
export interface ReplayOptions {
  /** The agents the orchestrator knows, to construct an orchestrator class with. */
  agents?: readonly AgentLike[];
  /** The name to construct an orchestrator class with (default `replay`). */
  name?: string;
  /** Earlier messages each decision sees besides its turn, as the engine's `historyWindow` (default 50). */
  historyWindow?: number;
}

function labelOf(decision: Decision): { label: string; reason?: string; thought?: string } {
  if (isErrorMessage(decision)) return { label: ERROR_LABEL };
  const calls = Array.isArray(decision) ? decision : [decision];
  const first = calls[0];
  const label =
    calls.length === 1 && first && isRouteToUser(first)
      ? agentLabel(null)
      : agentLabel(calls.map((call) => call.toolName));
  return { label, reason: first?.reason, thought: first?.thought };
}

function recordedLabel(step: RouteStep): string {
  if (step.kind === 'error') return ERROR_LABEL;
  if (step.kind === 'answer') return agentLabel(null);
  return agentLabel(step.calls.map((call) => call.agent));
}

function instantiate(
  input: OrchestratorInput,
  agents: readonly AgentLike[] = [],
  name = 'replay',
): Orchestrator {
  if (typeof input !== 'function') return input;
  const options: OrchestratorOptions = { name, agents };
  return new input(options);
}

/**
 * Re-decides every recorded decision of `sessions` with `orchestrator`, on
 * the conversation as it stood when the decision was recorded (its agents'
 * recorded replies fed back; no agent runs), and lists where the two
 * disagree. Each session gets fresh in-memory memory, so a stateful
 * orchestrator starts from nothing, as it would for a new session.
 *
 * @example
 * ```ts
 * const report = await replaySessions(new NextRouter({ name: 'next', agents }), [exported]);
 * console.log(report.agreement, report.disagreements);
 * ```
 */
export async function replaySessions(
  orchestrator: OrchestratorInput,
  sessions: readonly RecordedSession[],
  { agents, name, historyWindow = 50 }: ReplayOptions = {},
): Promise<ReplayReport> {
  const router = instantiate(orchestrator, agents, name);
  const disagreements: Disagreement[] = [];
  let decisions = 0;
  for (const session of sessions) {
    const memory = new InMemoryMemoryStore();
    const owner = { sessionId: session.sessionId, userId: session.userId };
    const context = new RequestContext({
      sessionId: session.sessionId,
      userId: session.userId,
      requestId: createId('req'),
      signal: new AbortController().signal,
      memory: (scope) => bindMemory(memory, scope, memoryNamespace(scope, owner)),
    });
    const { messages } = session;
    for (const turn of session.turns) {
      const start = messages.findIndex((message) => message.id === turn.userMessageId);
      if (start < 0) continue;
      const windowStart = Math.max(0, start - historyWindow);
      let position = start + 1;
      let lastResults: ToolMessage[] = [];
      for (const step of turn.steps) {
        if (step.kind === 'note') continue;
        const view = messages.slice(windowStart, position);
        const conversation: Conversation = {
          sessionId: session.sessionId,
          turnId: turn.turnId,
          messages: view,
          turnStart: start - windowStart,
          hop: step.hop,
          agents: router.agents,
          lastResults,
        };
        const replayed = labelOf(await RequestContext.run(context, () => router.decide(conversation)));
        const recorded = recordedLabel(step);
        decisions += 1;
        if (replayed.label !== recorded) {
          const disagreement: Disagreement = {
            sessionId: session.sessionId,
            turnId: turn.turnId,
            hop: step.hop,
            message: (messages[start] as MessageItem).content,
            recorded,
            replayed: replayed.label,
          };
          if (step.calls[0]?.reason !== undefined) disagreement.recordedReason = step.calls[0].reason;
          if (replayed.reason !== undefined) disagreement.replayedReason = replayed.reason;
          if (replayed.thought !== undefined) disagreement.replayedThought = replayed.thought;
          disagreements.push(disagreement);
        }
        // The recorded replies to this decision are what the next one saw.
        const ids = new Set(step.calls.map((call) => call.toolCallId));
        lastResults = [];
        while (position < messages.length) {
          const next = messages[position] as MessageItem;
          if (next.role !== 'tool' || !ids.has(next.toolCallId)) break;
          lastResults.push(next);
          position += 1;
        }
      }
    }
  }
  const agreed = decisions - disagreements.length;
  return {
    orchestrator: router.name,
    sessions: sessions.length,
    decisions,
    agreed,
    agreement: decisions === 0 ? 0 : agreed / decisions,
    disagreements,
  };
}
