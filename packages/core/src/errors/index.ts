/**
 * Every error Switchboard throws, one class a file: the base
 * (`SwitchboardError`, split into `UserError` and `SystemError`, recognised
 * across copies of the package by `isInstance()`), then one file per error.
 * `docs/reference/error-codes.md` lists their codes (`pnpm docs:errors`).
 *
 * @module
 */
export { AgentError } from './agent-error.js';
export { AgentStoppedError } from './agent-stopped-error.js';
export { AgentTimeoutError } from './agent-timeout-error.js';
export { ApprovalExpiredError } from './approval-expired-error.js';
export { ApprovalPendingError } from './approval-pending-error.js';
export { ApprovalResolvedError } from './approval-resolved-error.js';
export { CallDepthExceededError } from './call-depth-exceeded-error.js';
export { ConfigurationError } from './configuration-error.js';
export { ContextMissingError } from './context-missing-error.js';
export { CorruptRecordError } from './corrupt-record-error.js';
export { describeError } from './describe-error.js';
export { FanOutNotAllowedError } from './fan-out-not-allowed-error.js';
export { GuardrailBlockedError } from './guardrail-blocked-error.js';
export { IdempotencyKeyReusedError } from './idempotency-key-reused-error.js';
export { InvalidDecisionError } from './invalid-decision-error.js';
export { MaxHopsExceededError } from './max-hops-exceeded-error.js';
export { NotFoundError } from './not-found-error.js';
export { OrchestratorError } from './orchestrator-error.js';
export { PendingApprovalsLimitError } from './pending-approvals-limit-error.js';
export { ServerShutdownError } from './server-shutdown-error.js';
export { SessionBusyError, type SessionBusyErrorOptions } from './session-busy-error.js';
export { type StoreOutcome, StoreUnavailableError } from './store-unavailable-error.js';
export { type ErrorKind, SwitchboardError, type SwitchboardErrorOptions } from './switchboard-error.js';
export { SystemError } from './system-error.js';
export { TurnAbandonedError } from './turn-abandoned-error.js';
export { TurnDeadlineError } from './turn-deadline-error.js';
export { TurnInterruptedError } from './turn-interrupted-error.js';
export { TurnNotActiveError } from './turn-not-active-error.js';
export { UnknownAgentError } from './unknown-agent-error.js';
export { UserError } from './user-error.js';
export { ValidationError } from './validation-error.js';
