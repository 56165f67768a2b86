import type { AgentMeta } from '@switchboard/core';
import { observe } from '@switchboard/runtime';

/** How well one agent's keywords match a message. */
export interface AgentScore {
  agent: string;
  score: number;
  matched: string[];
}

/** The scores of every agent for one message. */
export interface Scoreboard {
  /** The best-scoring agent, if any keyword matched. */
  best?: string;
  /** Every agent's score, best first (ties keep the declared order). */
  scores: AgentScore[];
}

function scoreAgentsUntraced(text: string, agents: readonly AgentMeta[]): Scoreboard {
  const words = new Set(text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []);
  const scores = agents
    .map((agent) => {
      const matched = (agent.keywords ?? []).filter((keyword) => words.has(keyword.toLowerCase()));
      return { agent: agent.name, score: matched.length, matched };
    })
    .sort((a, b) => b.score - a.score);
  const [top] = scores;
  return top && top.score > 0 ? { best: top.agent, scores } : { scores };
}

/**
 * Scores every agent by the keywords of its metadata found in the message.
 * Wrapped with the function form of
 * `observe`, so each call is a `score-agents` span with its arguments as input
 * and the scores as output, nested under whatever span is active.
 *
 * @example
 * ```ts
 * scoreAgents('I was charged twice', app.agentMetas).best; // 'billing'
 * ```
 */
export const scoreAgents = observe(scoreAgentsUntraced, { name: 'score-agents' });
