/**
 * Session and memory stores: the contracts and the embedded in-memory
 * implementations. The Redis implementations live in `@switchboard/runtime/redis`.
 * @module
 */

export { InMemoryMemoryStore, type InMemoryMemoryStoreOptions } from './in-memory-memory-store.js';
export { InMemorySessionStore, type InMemorySessionStoreOptions } from './in-memory-session-store.js';
export {
  DEFAULT_MAX_LOGGED_EVENTS,
  InMemoryTurnEventLog,
  type InMemoryTurnEventLogOptions,
} from './in-memory-turn-event-log.js';
export type { MemoryStore, MemoryWriteOptions } from './memory-store.js';
export { InMemoryRateLimiter, type RateLimiter } from './rate-limiter.js';
export {
  type AppendOptions,
  type ApprovalRecord,
  type ApprovalRisk,
  type ApprovalStatus,
  type Awaitable,
  canListSessions,
  canReadPages,
  canRelayCancels,
  type FinishedTurnStatus,
  type HistoryPage,
  type HistoryPosition,
  type LeaseOptions,
  type ListSessionsOptions,
  type OpenedTurn,
  type OpenTurnOptions,
  type ReadPageOptions,
  type RequestKey,
  type RouteStep,
  type SessionLease,
  type SessionListPage,
  type SessionStore,
  type SessionSummary,
  type StepCall,
  type TracePart,
  type TurnRecord,
  type TurnStatus,
} from './session-store.js';
export {
  DEFAULT_EVENT_RETENTION_MS,
  DEFAULT_MAX_TURN_EVENTS,
  type EventLogRetention,
  type EventReplay,
  type TurnEventLog,
  type TurnLogKey,
} from './turn-event-log.js';
