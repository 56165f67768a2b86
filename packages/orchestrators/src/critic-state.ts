import { createId, type MessageItem, type ToolMessage } from '@switchboard/core';
import { z } from 'zod';

/** The name the critic's feedback message carries, as if an agent called `critic` had replied. */
export const CRITIC_FEEDBACK_NAME = 'critic';

/**
 * A turn's reviews as kept in session memory, versioned: how many answers
 * were sent back, and the best-scored answer so far. Written only once an
 * answer is sent back, so a turn whose first answer passes costs one read.
 */
const StoredReviewsSchema = z.object({
  v: z.literal(1),
  turnId: z.string(),
  /** Answers sent back to the orchestrator so far in the turn. */
  sentBack: z.number().int().min(0),
  best: z.object({ answer: z.string(), score: z.number() }).optional(),
});

/** A turn's reviews, as stored. */
export type StoredReviews = z.infer<typeof StoredReviewsSchema>;

/** The stored reviews of `turnId`, or `undefined` when the value is absent, malformed or another turn's. */
export function parseStoredReviews(value: unknown, turnId: string): StoredReviews | undefined {
  const parsed = StoredReviewsSchema.safeParse(value);
  return parsed.success && parsed.data.turnId === turnId ? parsed.data : undefined;
}

/** The better of two scored answers: the higher score, the later one on a tie (it was written with feedback). */
export function betterAnswer(
  best: StoredReviews['best'],
  candidate: { answer: string; score: number },
): { answer: string; score: number } {
  return best && best.score > candidate.score ? best : candidate;
}

/**
 * The reply the orchestrator is shown when its answer is sent back: a
 * successful `tool` reply named `critic`, answering the call that carried
 * the answer, with `metadata.critic: true`. Its text quotes the answer and
 * lists the issues, so that a model-backed orchestrator rendering agent
 * replies sees both.
 */
export function feedbackMessage(
  answerCallId: string,
  answer: string,
  issues: readonly string[],
  score: number,
): ToolMessage {
  const listed = issues.length > 0 ? issues.map((issue) => `- ${issue}`).join('\n') : '- (no details given)';
  return {
    id: createId('msg'),
    role: 'tool',
    name: CRITIC_FEEDBACK_NAME,
    toolCallId: answerCallId,
    content: `A reviewer read your answer before the user saw it and found these issues:\n${listed}\n\nYour answer was:\n${answer}\n\nWrite a better answer.`,
    status: 'ok',
    createdAt: new Date().toISOString(),
    metadata: { critic: true, score, issues: [...issues] },
  };
}

/** The reply {@link feedbackMessage} builds: an agent reply named `critic`, marked `metadata.critic: true`. */
export type CriticFeedback = ToolMessage & { metadata: { critic: true; score: number; issues: string[] } };

/**
 * True when a message is the feedback of {@link withCritic}: the reply an
 * orchestrator is shown when its answer was sent back (`name: 'critic'`,
 * `metadata.critic: true`). An orchestrator that treats agent replies
 * specially can tell it apart with this.
 * @example
 * ```ts
 * const [reply] = latestToolResults(conversation);
 * if (reply && isCriticFeedback(reply)) return routeToUser(improve(reply.content));
 * ```
 */
export function isCriticFeedback(message: MessageItem): message is CriticFeedback {
  return (
    message.role === 'tool' && message.name === CRITIC_FEEDBACK_NAME && message.metadata?.critic === true
  );
}
