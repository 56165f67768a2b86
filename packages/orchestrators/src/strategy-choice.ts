import { type Conversation, RequestContext, recordUsage } from '@switchboard/core';
import type { ChatClient } from '@switchboard/runtime';
import { askStrategyJudge, type StrategyCandidate, type StrategyJudgeOptions } from './strategy-judge.js';

/**
 * Scores one candidate reply of a {@link bestOf}: higher is better. A
 * score that is not a finite number counts as 0.
 */
export type StrategyScorer = (
  candidate: StrategyCandidate,
  context: { question: string; conversation: Conversation },
) => number | Promise<number>;

/**
 * How a best-of picks its winner among the replies that succeeded:
 * `'priority'` (the first in declared order), a scoring function, or a
 * judge model (falling back to the priority when it gives no valid verdict).
 */
export type StrategyJudge = 'priority' | StrategyScorer | StrategyJudgeOptions;

/** One candidate's score as recorded on the step. */
export interface CandidateScore {
  agent: string;
  score: number;
  reason?: string;
}

/** The winner, every candidate's score, and why the winner won. */
export interface BestChoice {
  winner: StrategyCandidate;
  scores: CandidateScore[];
  judge: 'priority' | 'function' | 'model';
  why: string;
  /** The judge model gave no valid verdict (the priority decided). */
  judgeFailed?: boolean;
}

const round = (score: number) => Math.round(score * 1000) / 1000;

/** Declared order decides: the first candidate scores 1, the last 1/n. */
export function byPriority(candidates: readonly StrategyCandidate[], note = ''): BestChoice {
  const count = candidates.length;
  const scores = candidates.map(({ agent }, index) => ({ agent, score: round((count - index) / count) }));
  const winner = candidates[0] as StrategyCandidate;
  return {
    winner,
    scores,
    judge: 'priority',
    why: `'${winner.agent}' comes first in the priority order among the ${count} that succeeded${note}`,
  };
}

/**
 * Picks the best of `candidates` (in declared order, at least one) with
 * `judge`. The highest score wins; a tie goes to the earlier candidate.
 */
export async function chooseBest(
  judge: StrategyJudge,
  client: (() => Promise<ChatClient>) | undefined,
  candidates: readonly StrategyCandidate[],
  question: string,
  conversation: Conversation,
): Promise<BestChoice> {
  if (judge === 'priority' || candidates.length === 1) return byPriority(candidates);
  if (typeof judge === 'function') {
    const scores: CandidateScore[] = [];
    for (const candidate of candidates) {
      const score = await judge(candidate, { question, conversation });
      scores.push({ agent: candidate.agent, score: Number.isFinite(score) ? round(score) : 0 });
    }
    const best = highest(scores);
    return {
      winner: candidates[best] as StrategyCandidate,
      scores,
      judge: 'function',
      why: `'${scores[best]?.agent}' has the highest score (${scores[best]?.score}) of ${candidates.length}`,
    };
  }
  // Outside the try: a missing `openai` package is a configuration error, not a case for the fallback.
  const chat = await (client as () => Promise<ChatClient>)();
  let problem: string;
  try {
    const verdict = await askStrategyJudge(chat, judge, question, candidates);
    recordUsage(conversation, verdict.usage);
    if (verdict.value) {
      const { value } = verdict;
      const scores: CandidateScore[] = candidates.map(({ agent }, index) => {
        const given = value.scores.find((entry) => entry.candidate === index + 1);
        return given ? { agent, score: round(given.score), reason: given.reason } : { agent, score: 0 };
      });
      const winner = candidates[value.best - 1] as StrategyCandidate;
      return { winner, scores, judge: 'model', why: value.reason || `chosen by the judge model` };
    }
    problem = verdict.problems.at(-1) ?? 'no answer';
  } catch (error) {
    if (RequestContext.tryCurrent()?.signal.aborted) throw error;
    problem = 'the judge model could not be reached';
  }
  return { ...byPriority(candidates, ` (the judge gave no valid verdict: ${problem})`), judgeFailed: true };
}

function highest(scores: readonly CandidateScore[]): number {
  let best = 0;
  for (let index = 1; index < scores.length; index++) {
    if ((scores[index]?.score ?? 0) > (scores[best]?.score ?? 0)) best = index;
  }
  return best;
}
