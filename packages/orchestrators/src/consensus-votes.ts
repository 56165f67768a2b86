/** One voter's successful answer. */
export interface ConsensusAnswer {
  /** The agent that gave it. */
  agent: string;
  /** Its reply, as the agent wrote it. */
  content: string;
}

/** How the answers spread: the groups of equal answers, largest first (ties in declared order). */
export interface VoteTally {
  /** Normalised answer → how many voters gave it, largest first. */
  votes: Record<string, number>;
  /** The answers of the largest group (the first in declared order on a tie). */
  winners: ConsensusAnswer[];
  /** The voters outside the largest group, with their normalised answers. */
  dissent: { agent: string; answer: string }[];
  /** The share of voters in the largest group, 0 to 1, two decimals. */
  agreement: number;
}

// Votes are keyed by answer: a long answer is cut so that the recorded step stays small.
const MAX_VOTE_KEY = 120;

/**
 * The form in which short answers are compared: trimmed, lower-case, inner
 * whitespace collapsed, trailing punctuation removed.
 * @example
 * ```ts
 * normaliseAnswer('  Paris. '); // 'paris'
 * ```
 */
export function normaliseAnswer(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s.,;:!?…。]+$/u, '');
}

/**
 * Groups equal answers (after {@link normaliseAnswer}) and counts them. The
 * largest group wins; on a tie, the group whose first answer comes first in
 * `answers` (declared voter order) wins.
 * @example
 * ```ts
 * tallyVotes([{ agent: 'a', content: 'Paris' }, { agent: 'b', content: 'paris.' }]).agreement; // 1
 * ```
 */
export function tallyVotes(answers: readonly ConsensusAnswer[]): VoteTally {
  const groups = new Map<string, ConsensusAnswer[]>();
  for (const answer of answers) {
    const key = normaliseAnswer(answer.content).slice(0, MAX_VOTE_KEY);
    const group = groups.get(key);
    if (group) group.push(answer);
    else groups.set(key, [answer]);
  }
  // Map order is first-appearance order and the sort is stable: ties keep declared order.
  const ranked = [...groups.entries()].sort((a, b) => b[1].length - a[1].length);
  const [winnerKey, winners = []] = ranked[0] ?? [];
  return {
    votes: Object.fromEntries(ranked.map(([key, group]) => [key, group.length])),
    winners,
    dissent: ranked
      .filter(([key]) => key !== winnerKey)
      .flatMap(([key, group]) => group.map(({ agent }) => ({ agent, answer: key }))),
    agreement: answers.length ? Math.round((winners.length / answers.length) * 100) / 100 : 0,
  };
}
