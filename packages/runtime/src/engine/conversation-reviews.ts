import type { ConversationReview } from '../guardrails/guardrail.js';
import { type Steps, settled } from './steps.js';
import type { TurnState } from './turn-state.js';
import { noteReview } from './turn-telemetry.js';

/**
 * The periodic reviews due at the start of a turn: each runs once `every`
 * messages (default 10) came since it last ran, over the recent messages.
 * Where it stopped is kept in session memory (`review:<name>`). `warn` and
 * `escalate` are recorded as a `review` note step; `escalate` makes the
 * answer wait for a person. A review that throws is recorded as a warning:
 * it does not hold up the conversation.
 */
export function* review(reviews: readonly ConversationReview[], turn: TurnState): Steps<void> {
  const { requestContext } = turn.runtime;
  const memory = requestContext.getMemory('session');
  const { messages } = turn;
  for (const review of reviews) {
    const every = review.every ?? 10;
    const key = `review:${review.name}`;
    const stored = yield* settled(memory.getContent(key));
    const last = stored.success
      ? (stored.data as { lastMessageId?: unknown } | undefined)?.lastMessageId
      : undefined;
    const at = typeof last === 'string' ? messages.findIndex((message) => message.id === last) : -1;
    const since = messages.length - (at + 1);
    if (since < every) continue;
    let verdict: Awaited<ReturnType<ConversationReview['review']>>;
    try {
      verdict = yield* settled(review.review(messages, { request: requestContext }));
    } catch (error) {
      verdict = {
        verdict: 'warn',
        reason: `the review failed (${error instanceof Error ? error.name : 'error'})`,
      };
    }
    yield* settled(memory.setContent(key, { lastMessageId: messages[messages.length - 1]?.id }));
    if (verdict.verdict === 'pass') continue;
    turn.recorder.note('review', { review: review.name, verdict: verdict.verdict, reason: verdict.reason });
    noteReview(turn, review.name, verdict.verdict);
    if (verdict.verdict === 'escalate') turn.escalation = `review '${review.name}': ${verdict.reason}`;
  }
}
