import type { MessageItem, RequestContext } from '@switchboard/core';

/**
 * What a guardrail says about one text:
 * - `undefined` or `{ action: 'allow' }`: leave it as it is;
 * - `{ action: 'rewrite', text }`: use `text` instead (a redaction is a
 *   rewrite); what follows (storage, traces, logs, the next guardrails) only
 *   ever sees `text`;
 * - `{ action: 'block', reason, message? }`: refuse it. `reason` is recorded
 *   (turn, step, span) for operators; `message` is what the user reads
 *   (a safe default otherwise).
 */
export type GuardVerdict =
  | undefined
  | { action: 'allow' }
  | { action: 'rewrite'; text: string; reason?: string }
  | { action: 'block'; reason: string; message?: string };

/** Where a guardrail runs. */
export type GuardStage = 'input' | 'output' | 'toolInput' | 'toolOutput';

/** What a guardrail is told beside the text. */
export interface GuardContext {
  stage: GuardStage;
  /** The request: session, user, tenant. */
  request: RequestContext;
  /** For `toolInput` and `toolOutput`: the agent called. */
  agent?: string;
}

/** A check that may answer at once or later. */
export type GuardCheck = (text: string, context: GuardContext) => GuardVerdict | Promise<GuardVerdict>;

/**
 * A guardrail: checks that may rewrite (redact) or block text at the points
 * where it enters or leaves the system. Each hook is optional.
 *
 * - `input`: the user's message, before it is stored, traced, streamed
 *   (`turn-start`) or routed: a redaction here means the original never
 *   reaches the store, the logs or the traces. A block ends the turn in
 *   state `blocked` (HTTP 200, `status: 'blocked'`).
 * - `output`: the answer, before it is stored and sent. With an `output`
 *   hook, text is not streamed as it is written (deltas could leak what the
 *   hook would have removed): clients get the checked answer whole.
 * - `toolInput`: an agent call's task text, before it is recorded and the
 *   agent runs; a block refuses the call (the orchestrator sees an error
 *   reply with code `blocked`).
 * - `toolOutput`: an agent's reply, before it is stored, traced or seen by
 *   the orchestrator; a block replaces it with an error reply.
 *
 * `agents` limits `toolInput`/`toolOutput` to some agents (default: all).
 *
 * @example
 * ```ts
 * const noSecrets: Guardrail = {
 *   name: 'no-secrets',
 *   input: (text) => (/sk-[A-Za-z0-9]{20,}/.test(text) ? { action: 'block', reason: 'an API key in the message' } : undefined),
 * };
 * new App({ name: 'desk', agents, guardrails: [noSecrets] });
 * ```
 */
export interface Guardrail {
  /** Recorded with every rewrite and block it makes. */
  name: string;
  input?: GuardCheck;
  output?: GuardCheck;
  toolInput?: GuardCheck;
  toolOutput?: GuardCheck;
  /** The agents `toolInput` and `toolOutput` apply to (default: every agent). */
  agents?: readonly string[];
}

/** What a periodic review of the conversation concludes. */
export type ReviewVerdict =
  | { verdict: 'pass' }
  | { verdict: 'warn'; reason: string }
  | { verdict: 'escalate'; reason: string };

/**
 * A periodic compliance review: every `every` messages of a session
 * (default 10), `review` reads the recent conversation. `warn` is recorded
 * on the turn (a `review` note step and the span); `escalate` makes the
 * turn's answer wait for a person's approval before the user sees it.
 */
export interface ConversationReview {
  name: string;
  /** How many messages between two reviews (default 10). */
  every?: number;
  review(
    messages: readonly MessageItem[],
    context: { request: RequestContext },
  ): ReviewVerdict | Promise<ReviewVerdict>;
}
