import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  AbstractOrchestrator,
  ConfigurationError,
  type Conversation,
  type Decision,
  isErrorMessage,
  isRouteToUser,
  type Memory,
  type Orchestrator,
  RequestContext,
  recordStep,
  type ToolCall,
} from '@switchboard/core';
import { observe } from '@switchboard/runtime';
import {
  groundedOutcome,
  type HallucinationCheckOptions,
  type HallucinationPolicy,
  hallucinationPolicyOf,
} from './critic-grounding.js';
import { type Critic, type Reviewer, reviewerOf, reviewOf } from './critic-review.js';
import { betterAnswer, feedbackMessage, parseStoredReviews, type StoredReviews } from './critic-state.js';
import { boundedReview, finalAnswer, judgeReview, type Review, reviewNote } from './critic-verdict.js';

/** Options of {@link withCritic}. */
export interface CriticOptions {
  /** Default: the wrapped orchestrator's name. The session-memory key is `critic:<name>`. */
  name?: string;
  /** Default: the wrapped orchestrator's. */
  description?: string;
  /** The score (0 to 1) from which an answer passes. Default 0.7. */
  threshold?: number;
  /** How many answers may be sent back to the orchestrator per turn. Default 1. */
  maxRetries?: number;
  /** At the bound, the best answer waits for a person's approval instead of going to the user. Default false. */
  escalateAtBound?: boolean;
  /** When the critic throws or gives no valid verdict: the answer passes (the default), or waits for a person. */
  onError?: 'pass' | 'escalate';
  /**
   * The hallucination check (off by default; `true` for the defaults): an
   * answer whose `hallucinationRisk` exceeds `maxRisk` (default 0.5) does
   * not pass, whatever its score. The risk is the critic's own, or, when the
   * turn used retrieval bundles, the lexical overlap of the answer with them
   * (`lexicalHallucinationRisk`), whichever is higher.
   */
  hallucination?: HallucinationCheckOptions | boolean;
}

/** What a decision knows of the turn's earlier reviews. */
interface Recalled {
  sentBack: number;
  best?: StoredReviews['best'];
  /** The store could not be read: no more answers are sent back, so that the bound holds. */
  lost?: true;
}

/**
 * The orchestrator {@link withCritic} returns: the wrapped orchestrator
 * decides, and a critic reviews each of its answers before the user reads
 * it. See {@link withCritic} for what the verdicts do.
 */
export class CriticOrchestrator extends AbstractOrchestrator {
  /** The orchestrator whose answers are reviewed. */
  readonly inner: Orchestrator;
  /** The score from which an answer passes. */
  readonly threshold: number;
  /** How many answers may be sent back per turn. */
  readonly maxRetries: number;
  /** Whether the best answer waits for a person at the bound. */
  readonly escalateAtBound: boolean;
  /** What happens to the answer when the critic fails. */
  readonly onError: 'pass' | 'escalate';
  /** Where a turn's review count and best answer live in its session memory. */
  readonly memoryKey: string;
  /** The hallucination check's settings, when it is on. */
  readonly hallucination: HallucinationPolicy | undefined;
  /** The hallucination check's bound, as the verdict policy reads it. */
  readonly maxHallucinationRisk: number | undefined;
  readonly #reviewer: { kind: 'function' | 'model'; review: Reviewer };

  /**
   * @deprecated Build it with {@link withCritic}, the one way to wrap an orchestrator: the class stays
   * exported as the type `withCritic` returns; its constructor leaves the public API in the next minor.
   */
  constructor(
    inner: Orchestrator,
    critic: Critic,
    {
      name = inner?.name,
      description,
      threshold = 0.7,
      maxRetries = 1,
      escalateAtBound = false,
      onError = 'pass',
      hallucination,
    }: CriticOptions = {},
  ) {
    super({ agents: checked(inner).agents, name, description: description ?? inner.description });
    const owner = `Critic '${this.name}'`;
    if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1))
      throw new ConfigurationError({ message: `${owner}: threshold must be a number from 0 to 1` });
    if (!Number.isInteger(maxRetries) || maxRetries < 0)
      throw new ConfigurationError({ message: `${owner}: maxRetries must be an integer of at least 0` });
    if (onError !== 'pass' && onError !== 'escalate')
      throw new ConfigurationError({ message: `${owner}: onError must be 'pass' or 'escalate'` });
    this.inner = inner;
    this.threshold = threshold;
    this.maxRetries = maxRetries;
    this.escalateAtBound = escalateAtBound;
    this.onError = onError;
    this.memoryKey = `critic:${this.name}`;
    this.hallucination = hallucinationPolicyOf(owner, hallucination);
    this.maxHallucinationRisk = this.hallucination?.maxRisk;
    this.#reviewer = reviewerOf(owner, critic);
  }

  protected async handleMessage(conversation: Conversation): Promise<Decision> {
    const quiet = withoutStreaming(conversation);
    const decision = await this.inner.decide(quiet);
    const answer = answerOf(decision);
    if (!answer) return decision;
    const memory = RequestContext.tryCurrent()?.getMemory('session');
    // Hop 0 is the turn's first decision: nothing can have been sent back yet.
    const recalled =
      conversation.hop === 0 ? { sentBack: 0 } : await this.#recall(memory, conversation.turnId);
    let { sentBack, best } = recalled;
    let call = answer;
    for (;;) {
      const review = await this.#review(conversation, call.message, sentBack, {
        mayRetry: !recalled.lost && sentBack < this.maxRetries,
      });
      if (review.score !== undefined)
        best = betterAnswer(best, { answer: call.message, score: review.score });
      recordStep(conversation, 'critic', { critic: reviewNote(review, call.message, best, recalled.lost) });
      if (review.verdict !== 'retry') return finalAnswer(call, review, best);

      sentBack++;
      const feedback = feedbackMessage(call.id, call.message, review.issues, review.score ?? 0);
      const retried = await this.inner.decide({
        ...quiet,
        messages: [...quiet.messages, feedback],
        lastResults: [feedback],
      });
      const next = answerOf(retried);
      if (next) {
        call = next;
        continue;
      }
      // The orchestrator calls agents before answering again: the count has to outlive this decision.
      const problem = isErrorMessage(retried)
        ? `the orchestrator failed after the send-back: ${retried.error.message}`
        : await this.#remember(memory, { v: 1, turnId: conversation.turnId, sentBack, best });
      if (problem === undefined) return retried;
      const bounded = boundedReview(this, sentBack, problem);
      recordStep(conversation, 'critic', { critic: reviewNote(bounded, call.message, best, recalled.lost) });
      return finalAnswer(call, bounded, best);
    }
  }

  /** Reviews one answer on its own span (`review`, a Langfuse evaluator) under the decision's span. */
  #review(
    conversation: Conversation,
    answer: string,
    attempt: number,
    { mayRetry }: { mayRetry: boolean },
  ): Promise<Review> {
    const review = reviewOf(conversation, answer, attempt);
    // The argument is only what the span records as its input.
    const run = observe(
      async (_input: { answer: string; request: string; attempt: number }) => {
        const outcome = groundedOutcome(await this.#reviewer.review(review), review, this.hallucination);
        const judged = judgeReview(this, outcome, attempt, mayRetry);
        const span = trace.getActiveSpan();
        if (span?.isRecording()) {
          span.setAttribute('switchboard.critic.kind', this.#reviewer.kind);
          span.setAttribute('switchboard.critic.verdict', judged.verdict);
          span.setAttribute('switchboard.critic.attempt', attempt);
          span.setAttribute('switchboard.critic.issues', judged.issues);
          if (judged.score !== undefined) span.setAttribute('switchboard.critic.score', judged.score);
          if (judged.hallucinationRisk !== undefined)
            span.setAttribute('switchboard.critic.hallucination_risk', judged.hallucinationRisk);
          if (judged.failed !== undefined) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: judged.failed });
            span.setAttribute('langfuse.observation.level', 'ERROR');
            span.setAttribute('langfuse.observation.status_message', judged.failed);
          }
        }
        return judged;
      },
      { name: 'review', type: 'evaluator' },
    );
    return run({ answer, request: review.request, attempt });
  }

  /** The turn's earlier reviews; a store that cannot be read leaves no send-back. */
  async #recall(memory: Memory | undefined, turnId: string): Promise<Recalled> {
    if (!memory) return { sentBack: 0 };
    const stored = await memory.getContent(this.memoryKey);
    if (!stored.success) return { sentBack: 0, lost: true };
    const state = parseStoredReviews(stored.data, turnId);
    return state ? { sentBack: state.sentBack, best: state.best } : { sentBack: 0 };
  }

  /** Keeps the count for the turn's next decisions; the problem when it cannot. */
  async #remember(memory: Memory | undefined, state: StoredReviews): Promise<string | undefined> {
    if (!memory) return undefined;
    const written = await memory.setContent(this.memoryKey, state);
    return written.success ? undefined : `the review count could not be saved: ${written.error.message}`;
  }
}

function checked(inner: Orchestrator): Orchestrator {
  if (typeof inner?.decide !== 'function' || !Array.isArray(inner.agents)) {
    throw new ConfigurationError({ message: 'withCritic: the first argument must be an orchestrator' });
  }
  return inner;
}

/** The answer a decision gives the user, if it is one (a lone `route_to_user`, alone or in an array of one). */
function answerOf(decision: Decision): ToolCall | undefined {
  if (isErrorMessage(decision)) return undefined;
  const call = Array.isArray(decision) ? (decision.length === 1 ? decision[0] : undefined) : decision;
  return call && isRouteToUser(call) ? call : undefined;
}

/**
 * The conversation the wrapped orchestrator decides on: the same, except
 * that an answer it streams goes nowhere, since the user may read only what
 * passed review.
 */
function withoutStreaming(conversation: Conversation): Conversation {
  const { recorder } = conversation;
  if (!recorder?.stream) return conversation;
  return {
    ...conversation,
    recorder: {
      annotate: (annotations) => recorder.annotate(annotations),
      note: (label, annotations) => recorder.note(label, annotations),
      usage: (usage) => recorder.usage(usage),
    },
  };
}

/**
 * Wraps an orchestrator in a critic that reviews each answer before the user
 * reads it (each `route_to_user` decision; calls to agents and errors pass
 * unreviewed). The critic is a function or a model as judge
 * (`{ model, client | apiKey, instructions? }`, strict JSON output); it is
 * shown the answer, the turn's request and its agent replies, and returns
 * `{ score, issues, rewrite?, escalate? }` with `score` from 0 to 1.
 *
 * **The verdict**, checked in this order:
 * 1. `escalate: true`: the answer (or the critic's rewrite) waits for a
 *    person's approval, with the issues as the approval's reason; approved, the
 *    user reads it; rejected, the app's `answerRejectedMessage`;
 * 2. a non-empty `rewrite`: the user reads the rewrite instead;
 * 3. `score >= threshold` (default 0.7), and with the `hallucination`
 *    check a `hallucinationRisk` of at most its `maxRisk`: the answer goes
 *    out as it is;
 * 4. below it, while the turn has send-backs left (`maxRetries`, default 1
 *    per turn): the orchestrator is asked again within the same decision,
 *    shown the answer and the issues (see below), and its new answer is
 *    reviewed in turn;
 * 5. at the bound: the best-scored answer of the turn goes out, or waits for
 *    a person with `escalateAtBound: true`.
 *
 * **A send-back** shows the orchestrator one more agent reply, appended to
 * its messages and as its `lastResults`: a successful `tool` message named
 * `critic`, answering the call that carried the answer, whose text quotes the
 * answer and lists the issues, marked `metadata.critic: true`
 * ({@link isCriticFeedback}). A router that answers with its latest replies
 * should write a better answer from it; one that calls agents first may do
 * so (the feedback is then not shown again on later decisions). The count
 * and the best answer are kept in session memory under `critic:<name>` once
 * a decision ends in a call after a send-back, so the bound holds across
 * hops and replicas; when that memory cannot be read or written, no more
 * answers are sent back. Without a request context (a hand-built
 * conversation) the bound holds within one decision.
 *
 * **A critic that fails** (throws, gives an invalid verdict, a judge that
 * cannot be reached): with `onError: 'pass'` (the default) the answer goes
 * out; with `'escalate'` it waits for a person. Either way the failure is
 * recorded. A cancelled turn is not a failure: it ends as cancelled.
 *
 * **Recorded**: every review is a `critic` note step of the decision, its
 * annotations `critic: { verdict, score, issues, attempt, hallucinationRisk? }` (`verdict` one of
 * `pass`, `retry`, `rewrite`, `escalate`, `bound`), with the reviewed `answer`
 * when the user did not read it, `bound` and `bestScore` at the bound, and
 * `failed` when the critic failed. Each review runs on its own span,
 * `review` (a Langfuse evaluator observation) under the decision's span,
 * with `switchboard.critic.score`, `.verdict`, `.issues` and `.attempt`; a
 * judge's model calls are generations under it. The wrapped orchestrator's
 * answers are not streamed: the user reads only what passed review.
 *
 * @example
 * ```ts
 * const reviewed = withCritic(
 *   new LlmOrchestrator({ agents, model: 'gpt-4o-mini', apiKey }),
 *   { model: 'gpt-4o-mini', apiKey, instructions: 'Check that every price quoted comes from an agent reply.' },
 *   { threshold: 0.8, escalateAtBound: true },
 * );
 * const polite = withCritic(router, ({ answer }) =>
 *   /stupid/i.test(answer) ? { score: 0.2, issues: ['rude wording'] } : { score: 1 },
 * );
 * ```
 */
export function withCritic(
  orchestrator: Orchestrator,
  critic: Critic,
  options?: CriticOptions,
): CriticOrchestrator {
  return new CriticOrchestrator(orchestrator, critic, options);
}
