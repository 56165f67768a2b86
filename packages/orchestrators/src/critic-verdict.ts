import type { JsonValue, ToolCall } from '@switchboard/core';
import type { ReviewOutcome } from './critic-review.js';
import type { StoredReviews } from './critic-state.js';

/** What became of a reviewed answer (the `verdict` of a `critic` note step). */
export type CriticVerdictKind = 'pass' | 'retry' | 'rewrite' | 'escalate' | 'bound';

/** The settings of {@link withCritic} that turn a critic's verdict into an outcome. */
export interface VerdictPolicy {
  readonly threshold: number;
  /** Set by the hallucination check: an answer whose risk exceeds it does not pass. */
  readonly maxHallucinationRisk?: number;
  readonly escalateAtBound: boolean;
  readonly onError: 'pass' | 'escalate';
}

/** One review as the critic orchestrator acts on it, and records it. */
export interface Review {
  verdict: CriticVerdictKind;
  attempt: number;
  score?: number;
  issues: string[];
  hallucinationRisk?: number;
  rewrite?: string;
  /** Why the critic gave no verdict, or why the send-back could not go on. */
  failed?: string;
  /** The bound was reached: the best-scored answer goes out (or waits for a person). */
  bound?: true;
}

/** What the critic's verdict means under `policy`: the checks run in the order {@link withCritic} documents. */
export function judgeReview(
  policy: VerdictPolicy,
  outcome: ReviewOutcome,
  attempt: number,
  mayRetry: boolean,
): Review {
  if (!outcome.ok) {
    const verdict = policy.onError === 'escalate' ? 'escalate' : 'pass';
    return { verdict, attempt, issues: [], failed: outcome.problem };
  }
  const { score, issues = [], rewrite, escalate, hallucinationRisk } = outcome.verdict;
  const review: Review = { verdict: 'pass', attempt, score, issues: [...issues] };
  if (hallucinationRisk !== undefined) review.hallucinationRisk = hallucinationRisk;
  const grounded =
    policy.maxHallucinationRisk === undefined || (hallucinationRisk ?? 0) <= policy.maxHallucinationRisk;
  const rewritten = rewrite?.trim();
  if (rewritten) review.rewrite = rewritten;
  if (escalate) review.verdict = 'escalate';
  else if (rewritten) review.verdict = 'rewrite';
  else if (score >= policy.threshold && grounded) review.verdict = 'pass';
  else if (mayRetry) review.verdict = 'retry';
  else {
    review.verdict = policy.escalateAtBound ? 'escalate' : 'bound';
    review.bound = true;
  }
  return review;
}

/** The bound reached early: the send-back could not go on (`problem` says why). */
export function boundedReview(policy: VerdictPolicy, attempt: number, problem: string): Review {
  const verdict = policy.escalateAtBound ? 'escalate' : 'bound';
  return { verdict, attempt, issues: [], failed: problem, bound: true };
}

/** The answer the user reads (or a person approves first) after a final verdict. */
export function finalAnswer(call: ToolCall, review: Review, best: StoredReviews['best']): ToolCall {
  switch (review.verdict) {
    case 'pass':
    case 'retry':
      return call;
    case 'rewrite':
      return { ...call, message: review.rewrite ?? call.message, reason: 'critic: rewrote the answer' };
    case 'bound':
      return { ...call, message: best?.answer ?? call.message, reason: boundReason(review) };
    case 'escalate': {
      const message = review.bound ? (best?.answer ?? call.message) : (review.rewrite ?? call.message);
      return { ...call, message, requiresApproval: true, reason: escalationReason(review) };
    }
  }
}

/** The annotations of a review's `critic` note step. */
export function reviewNote(
  review: Review,
  answer: string,
  best: StoredReviews['best'],
  stateUnavailable: true | undefined,
): { [key: string]: JsonValue } {
  const note: { [key: string]: JsonValue } = {
    verdict: review.verdict,
    attempt: review.attempt,
    issues: review.issues,
  };
  if (review.score !== undefined) note.score = review.score;
  if (review.hallucinationRisk !== undefined) note.hallucinationRisk = review.hallucinationRisk;
  // The texts the user never reads are kept on the record.
  if (review.verdict === 'retry' || review.verdict === 'rewrite') note.answer = answer;
  if (review.bound) {
    note.bound = true;
    if (best) note.bestScore = best.score;
  }
  if (review.failed !== undefined) note.failed = review.failed;
  if (stateUnavailable) note.stateUnavailable = true;
  return note;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function boundReason({ attempt, failed }: Review): string {
  return failed !== undefined
    ? 'critic: the send-back could not go on; the best-scored answer so far'
    : `critic: below the threshold after ${plural(attempt, 'send-back')}; the best-scored answer`;
}

/** The approval's reason, which the approver (and the turn's client) reads: the critic's issues, never an error's text. */
function escalationReason({ bound, failed, issues, attempt }: Review): string {
  if (bound) return `critic: still below the threshold after ${plural(attempt, 'send-back')}`;
  if (failed !== undefined) return 'critic: the review failed, so a person checks the answer';
  return `critic: ${issues.join('; ') || 'a person must approve this answer'}`;
}
