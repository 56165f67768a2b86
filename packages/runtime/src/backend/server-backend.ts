import type { AgentMeta, AgentStatsTable } from '@switchboard/core';
import type { Context } from 'hono';
import type { PublishedGraph } from '../agents/published-graph.js';
import type { BackgroundTurns, TurnStatusView } from '../background/background-turns.js';
import type { Schedules } from '../background/schedules.js';
import type { ApprovalResolution, CancelRequest, TurnRequest, TurnResult } from '../engine/turn-types.js';
import type { Logger } from '../logging/logger.js';
import type { SessionStore } from '../stores/session-store.js';
import type { TurnEventLog } from '../stores/turn-event-log.js';
import type { ConversationIndex } from './conversation-index.js';
import type { AuthOptions, Principal } from './principal.js';

/** A request with the credential it came with (absent without auth), for the access checks. */
export interface Authenticated {
  principal?: Principal;
}

/**
 * What every protocol the app speaks needs from the App: its HTTP API, A2A
 * and MCP run turns, resolve approvals and read sessions through it alone,
 * so none of them depends on another (or on the routes that mount them).
 */
export interface ServerBackend {
  name: string;
  /** The orchestrator's name: the model of the OpenAI-compatible routes (default: `name`). */
  orchestratorName?: string;
  agents: readonly AgentMeta[];
  /** The workflow graph the orchestrator runs, when it publishes one (`GET /v1/agents`). */
  graph?: PublishedGraph;
  /** The agents' stats as a tenant sees them, when the orchestrator keeps them (`GET /v1/agents`). */
  agentStats?(tenantId: string | undefined): Promise<AgentStatsTable>;
  sessions: SessionStore;
  /** Runs a turn: its result at once when no step had to wait. */
  chat(request: TurnRequest & Authenticated): TurnResult | Promise<TurnResult>;
  /** Resolves an approval; the turn continues when it was the last one pending. */
  resolveApproval(resolution: ApprovalResolution & Authenticated): Promise<TurnResult>;
  /** Stops a running or paused turn. */
  cancelTurn(request: CancelRequest & Authenticated): Promise<TurnResult>;
  /** Derives the session id of a first message sent with an `Idempotency-Key` and no session id. */
  sessionIdForKey(idempotencyKey: string, tenantId?: string): string;
  /** Finds the session of a client that resends the whole conversation and names none (absent: never found). */
  conversations?: ConversationIndex;
  /**
   * The session store as a tenant sees it (the store itself without one);
   * with `userId` (a user-bound key's), for reads, as that user sees it: only
   * the sessions the user started.
   */
  sessionsOf(tenantId: string | undefined, userId?: string): SessionStore;
  deleteSession(sessionId: string, tenantId?: string): Promise<boolean>;
  /** Background turns: queued, read and cancelled by id (absent with `background: false`). */
  background?: BackgroundTurns;
  /** Messages run as background turns on a timer (absent with `background: false`). */
  schedules?: Schedules;
  /** Where a turn stands (queued, running, ended) and its result once it has one; undefined for an unknown turn. */
  turnStatus(
    sessionId: string,
    turnId: string,
    tenantId: string | undefined,
    userId?: string,
  ): Promise<TurnStatusView | undefined>;
  /** Where the turns' events are kept for rejoining clients (none: a turn's events reach its own request only). */
  events?: TurnEventLog;
  /** Deletes a user's sessions and memory (within a tenant). */
  deleteUser(userId: string, tenantId?: string): Promise<{ deletedSessions: number }>;
  /** With auth: who may call (the A2A card then names the Bearer scheme). */
  auth?: AuthOptions;
  /** Throws when the app cannot serve (a store is down or refuses writes, the app is closing); resolves to warnings. */
  checkReady(): Promise<readonly string[]>;
  /** True once `close()` was called: new turns are refused. */
  isClosing(): boolean;
  /** Logs an unexpected error, with the request it happened in. */
  log(error: unknown, c?: Context): void;
  /** Where the request lines go. */
  logger: Logger;
}

/** Who a request acts for, as the routes work it out from its credential, headers and body. */
export interface Caller {
  tenantId?: string;
  keyName?: string;
  userId?: string;
  /** The credential's principal (with auth): what the access checks go by. */
  principal?: Principal;
  requestId: string;
  /** How deep in a chain of Switchboard servers calling each other the request is (absent at the top). */
  depth?: number;
}
