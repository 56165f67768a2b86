/** What the console reads from the API: only the fields it shows. */

/** An agent of `GET /v1/agents`. */
export interface AgentInfo {
  name: string;
  description: string;
  keywords?: string[];
  requiresApproval?: boolean;
}

/** An agent's recent calls on `GET /v1/agents` (`stats`), when the orchestrator keeps them. */
export interface AgentStatsInfo {
  calls: number;
  successRate: number;
  errors: Record<string, number>;
  p50Ms?: number;
  p95Ms?: number;
}

/** The workflow graph of `GET /v1/agents`, when the orchestrator is a graph. */
export interface GraphInfo {
  name: string;
  entry: string;
  nodes: Array<{ name: string; kind: string; description?: string; approval?: boolean }>;
  edges: Array<{ from: string; to: string; conditional?: boolean }>;
  mermaid: string;
}

/** A message of a session. */
export interface MessageItem {
  id: string;
  role: 'user' | 'tool' | 'assistant';
  content: string;
  createdAt: string;
  /** The agent, for `tool` messages. */
  name?: string;
  toolCallId?: string;
  status?: 'ok' | 'error';
}

/** A call of a routing step. */
export interface StepCall {
  toolCallId: string;
  agent: string;
  message?: string;
  thought?: string;
  reason?: string;
  approvalId?: string;
  status?: 'ok' | 'error';
  errorCode?: string;
}

/** A routing decision. */
export interface RouteStep {
  hop: number;
  kind: 'call' | 'fan-out' | 'answer' | 'error' | 'note';
  calls: StepCall[];
  label?: string;
  error?: string;
  decidedAt: string;
  durationMs: number;
  annotations?: Record<string, unknown>;
}

/** An approval waiting for (or resolved by) a person. */
export interface Approval {
  id: string;
  agent: string;
  message: string;
  reason?: string;
  risk: string;
  status: string;
  expiresAt: string | null;
}

/** A stored turn. */
export interface TurnRecord {
  turnId: string;
  userMessageId: string;
  status: string;
  startedAt: string;
  endedAt?: string;
  steps: RouteStep[];
  traceId?: string;
  error?: { code: string; message: string };
  approvals?: Approval[];
}

/** `GET /v1/sessions/:id`. */
export interface SessionBody {
  sessionId: string;
  messages: MessageItem[];
  turns: TurnRecord[];
  pendingApprovals: Approval[];
  activeTurn?: { turnId: string; status: string };
  /** The cursor of the page of older messages; absent on the oldest page. */
  before?: string;
}

/** An entry of `GET /v1/sessions`. */
export interface SessionSummary {
  sessionId: string;
  updatedAt?: string;
  title?: string;
  preview?: string;
  lastMessage?: string;
}

/** One Server-Sent Event of `POST /v1/chat` (only the fields the console reads). */
export interface StreamEvent {
  type: string;
  sessionId: string;
  turnId: string;
  messageId: string;
  /** Unique and increasing within the turn: where to rejoin its stream after. */
  eventId?: string;
  toolCallId?: string;
  agent?: string;
  message?: string;
  delta?: string;
  reset?: boolean;
  content?: string;
  status?: string;
  step?: RouteStep;
  code?: string;
  traceId?: string;
  approvalId?: string;
  reason?: string;
  risk?: string;
  expiresAt?: string | null;
  endOfDialog?: boolean;
  /** On `turn-start`: a stored turn continues (`approval`, `recovery`). */
  resumed?: string;
}

/** The 202 receipt of `POST /v1/chat` with `background: true`. */
export interface QueuedReceipt {
  sessionId: string;
  turnId: string;
  status: 'queued';
  /** Where the turn's events stream. */
  events: string;
}

/** An entry of `GET /v1/background-turns`. */
export interface BackgroundTurnInfo {
  sessionId: string;
  turnId: string;
  /** `queued`, `running`, `awaiting_approval`, or how the turn ended. */
  status: string;
  /** ISO 8601. */
  queuedAt?: string;
  reply?: string;
  error?: { code: string; message: string };
}

/** An entry of `GET /v1/schedules`. */
export interface ScheduleInfo {
  id: string;
  message: string;
  every?: number;
  cron?: string;
  timezone?: string;
  sessionId?: string;
}

/** One version of a config item, as the API answers it. */
export interface ConfigEntry {
  type: string;
  name: string;
  version: number;
  value?: unknown;
  deleted?: true;
  updatedAt: string;
  updatedBy?: string;
  comment?: string;
}

/** `GET /v1/config`. */
export interface ConfigListing {
  scope: 'app' | 'tenant';
  types: string[];
  version: number;
  items: ConfigEntry[];
}
