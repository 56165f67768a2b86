import type { RouteStep, TurnStatus } from '../stores/session-store.js';
import type { TurnEvent } from './events.js';

/** Limits and defaults of the turn loop. */
export interface TurnOptions {
  /** Routing decisions per turn before the turn fails (default 10). */
  maxHops?: number;
  /** Earlier messages the orchestrator sees besides the current turn (default 50). */
  historyWindow?: number;
  /** Default per-agent timeout in milliseconds (default 60 000). */
  agentTimeoutMs?: number;
  /** How long a message waits for a busy session before a 409 (default 10 000 ms). */
  sessionWaitMs?: number;
  /** Session lease duration; renewed while the turn runs (default 30 000 ms). */
  leaseTtlMs?: number;
  /** What the user sees when a turn fails without a `userMessage` of its own. */
  failureMessage?: string;
  /**
   * Show error messages in routing steps and turn records (`GET /v1/sessions/:id`,
   * the chat response, SSE). Off by default: error text may carry internals;
   * the codes are always shown and the full errors are always on the trace.
   */
  exposeErrorDetails?: boolean;
  /** Session memory expires after this many seconds without a turn of its session (default one day). */
  sessionIdleTtlSeconds?: number;
}

/** One user message to process. */
export interface TurnRequest {
  sessionId: string;
  message: string;
  userId?: string;
  tenantId?: string;
  requestId?: string;
  metadata?: Record<string, unknown>;
  /** Receives every event of the turn as it happens. */
  onEvent?: (event: TurnEvent) => void;
}

/** The outcome of a turn. */
export interface TurnResult {
  sessionId: string;
  turnId: string;
  /** What the user sees. */
  reply: string;
  status: TurnStatus;
  steps: RouteStep[];
  /** The OpenTelemetry trace id, when tracing is on. */
  traceId?: string;
  /** The recorded error of a failed turn. */
  error?: { code: string; message: string };
}
