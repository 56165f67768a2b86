/**
 * Session and memory stores: the contracts and the embedded in-memory
 * implementations. The Redis implementations live in `@switchboard/runtime/redis`.
 * @module
 */
export { InMemoryMemoryStore, type InMemoryMemoryStoreOptions } from './in-memory-memory-store.js';
export { InMemorySessionStore, type InMemorySessionStoreOptions } from './in-memory-session-store.js';
export { type BindMemoryOptions, bindMemory, type MemoryOwner, memoryNamespace } from './memory-binding.js';
export { canTouch, type MemoryStore, type MemoryWriteOptions } from './memory-store.js';
export { InMemoryRateLimiter, type RateLimiter } from './rate-limiter.js';
export {
  type AppendOptions,
  type ApprovalRecord,
  type ApprovalRisk,
  type ApprovalStatus,
  type Awaitable,
  canRelayCancels,
  type FinishedTurnStatus,
  type LeaseOptions,
  type OpenedTurn,
  type OpenTurnOptions,
  type RequestKey,
  type RouteStep,
  type SessionLease,
  type SessionStore,
  type StepCall,
  type TracePart,
  type TurnRecord,
  type TurnStatus,
} from './session-store.js';
