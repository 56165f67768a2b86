import {
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  RequestContext,
  type ToolMessage,
  turnMessages,
} from '@switchboard/core';
import { type RetrievalBundle, retrievalBundleOf } from '@switchboard/runtime';
import { clientResolver } from '@switchboard/runtime/internal';
import {
  askCriticJudge,
  type CriticJudgeOptions,
  type CriticReview,
  type CriticVerdict,
  CriticVerdictSchema,
} from './critic-judge.js';
import { isCriticFeedback } from './critic-state.js';

/** A function as the critic of {@link withCritic}: it returns its verdict on one answer (it may be async). */
export type CriticFunction = (review: CriticReview) => CriticVerdict | Promise<CriticVerdict>;

/** What {@link withCritic} accepts as the critic: a function, or a model as judge. */
export type Critic = CriticFunction | CriticJudgeOptions;

/** One review's result: a checked verdict, or why there is none. */
export type ReviewOutcome = { ok: true; verdict: CriticVerdict } | { ok: false; problem: string };

/** Runs one review with the configured critic; never throws, except when the turn was cancelled. */
export type Reviewer = (review: CriticReview) => Promise<ReviewOutcome>;

/** The reviewer of a critic, checked at construction time: a function, or judge options with a model. */
export function reviewerOf(owner: string, critic: Critic): { kind: 'function' | 'model'; review: Reviewer } {
  if (typeof critic === 'function')
    return { kind: 'function', review: (review) => callCritic(critic, review) };
  if (
    typeof critic !== 'object' ||
    critic === null ||
    typeof critic.model !== 'string' ||
    critic.model === ''
  ) {
    throw new ConfigurationError({
      message: `${owner}: the critic must be a function or judge options with a model name ({ model, client | apiKey })`,
    });
  }
  const client = clientResolver(`${owner} judge`, critic);
  return {
    kind: 'model',
    review: async (review) => {
      const asked = await askCriticJudge(client, critic, review);
      return asked.ok ? { ok: true, verdict: asked.value } : { ok: false, problem: asked.problem };
    },
  };
}

async function callCritic(critic: CriticFunction, review: CriticReview): Promise<ReviewOutcome> {
  let returned: unknown;
  try {
    returned = await critic(review);
  } catch (error) {
    if (RequestContext.tryCurrent()?.signal.aborted) throw error;
    return {
      ok: false,
      problem: `the critic threw: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const parsed = CriticVerdictSchema.safeParse(returned);
  if (parsed.success) return { ok: true, verdict: parsed.data };
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'verdict'}: ${issue.message}`);
  return { ok: false, problem: `the critic returned an invalid verdict (${issues.join('; ')})` };
}

/**
 * What the critic is shown of an answer: the turn's request and its agent
 * replies so far (the critic's own feedback left out), oldest first.
 */
export function reviewOf(conversation: Conversation, answer: string, attempt: number): CriticReview {
  const replies: ToolMessage[] = [];
  const add = (message: ToolMessage) => {
    if (!isCriticFeedback(message) && !replies.some((known) => known.id === message.id))
      replies.push(message);
  };
  for (const message of turnMessages(conversation)) if (message.role === 'tool') add(message);
  // The runtime always passes the latest replies in the messages too; a hand-built conversation may hold them only here.
  for (const result of latestToolResults(conversation)) add(result);
  const retrieval = replies.flatMap((reply): RetrievalBundle[] => {
    const bundle = reply.status === 'ok' ? retrievalBundleOf(reply) : undefined;
    return bundle ? [bundle] : [];
  });
  return {
    answer,
    request: currentUserMessage(conversation).content,
    replies: replies.map(({ name, status, content }) => ({ agent: name, status, content })),
    ...(retrieval.length > 0 ? { retrieval } : {}),
    attempt,
    conversation,
  };
}
