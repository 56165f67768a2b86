import type { Orchestrator } from '@switchboard/core';
import type { Agent } from '../agents/agent-contract.js';
import type { Budgets } from '../budgets/budgets.js';
import type { Logger } from '../logging/logger.js';
import type { EngineMetrics } from '../metrics/engine-metrics.js';
import type { SessionStore } from '../stores/session-store.js';
import type { TurnEventLog } from '../stores/turn-event-log.js';
import type { ApprovalGate } from './approvals.js';
import type { Guards } from './guards.js';
import type { Profiles } from './profiles.js';
import type { TraceNaming } from './trace-labels.js';
import type { TurnOptions } from './turn-types.js';

/** The engine's options with their defaults applied (the parts the loop and its helpers read). */
export type LoopOptions = Required<
  Omit<TurnOptions, 'approvalPolicy' | 'guardrails' | 'profiles' | 'profile' | 'reviews' | 'requestProfiles'>
>;

/** What the turn loop and the modules it calls need from their app, fixed for the engine's lifetime. */
export interface LoopParts {
  orchestrator: Orchestrator;
  agents: ReadonlyMap<string, Agent>;
  sessions: SessionStore;
  gate: ApprovalGate;
  /** The app's guardrails, by stage. */
  guards: Guards;
  /** The app's strategy profiles. */
  profiles: Profiles;
  options: LoopOptions;
  /** Where a failed turn's error and detail go (clients get only a safe message). */
  logger?: Logger;
  /** Where turn and agent-call metrics are recorded. */
  metrics?: EngineMetrics;
  /** Names and tags each turn's trace. */
  naming: TraceNaming;
  /** Where each turn's events are kept for clients that rejoin its stream (none: only the request hears them). */
  eventLog?: TurnEventLog;
  /** The app's spending budgets, when it has any: they meter each turn's model calls. */
  budgets?: Budgets;
}
