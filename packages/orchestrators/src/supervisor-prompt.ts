import type { AgentMeta, ToolMessage } from '@switchboard/core';

/** The marker that tells the synthesis model a branch gave no result. */
export const MISSING_MARKER = 'MISSING';

/** The supervisor's role when decomposing, used when no `instructions` are given. */
export const DEFAULT_SUPERVISOR_INSTRUCTIONS =
  "You are the supervisor of a team of agents. You split the user's request into independent sub-goals and give each to the agent best suited to it; the agents work at the same time.";

/** The supervisor's role when synthesising, used when no `synthesisInstructions` are given. */
export const DEFAULT_SYNTHESIS_INSTRUCTIONS =
  "You are the supervisor of a team of agents. The agents have worked on parts of the user's request; write the answer the user reads from their results.";

function agentList(agents: readonly AgentMeta[]): string {
  return agents
    .map((agent) => `- ${agent.name}: ${agent.description.replace(/\s+/g, ' ').trim()}`)
    .join('\n');
}

/**
 * The system prompt of the decomposition: the role, the candidate agents and
 * the rules of the answer.
 * @example
 * ```ts
 * const system = decompositionPrompt(DEFAULT_SUPERVISOR_INSTRUCTIONS, conversation.agents);
 * ```
 */
export function decompositionPrompt(instructions: string, agents: readonly AgentMeta[]): string {
  return `${instructions}

Agents:
${agentList(agents)}

Rules:
- Give each sub-goal to one agent, at most one sub-goal per agent; write each task so that the agent can act on it without the conversation. Sub-goals must not depend on each other.
- When the request is simple, needs no agent, or is unclear, give no sub-goals and write the answer (or a short clarifying question) in "answer".
- Only the agents listed above exist.

Answer with a JSON object with the fields thought, subgoals and answer.`;
}

/**
 * The system prompt of the synthesis. `roundsLeft` is how many more rounds of
 * sub-goals may be asked for; at 0 the answer must be written now.
 * @example
 * ```ts
 * const system = synthesisPrompt(DEFAULT_SYNTHESIS_INSTRUCTIONS, conversation.agents, 1);
 * ```
 */
export function synthesisPrompt(
  instructions: string,
  agents: readonly AgentMeta[],
  roundsLeft: number,
): string {
  const more =
    roundsLeft > 0
      ? `- Only when an essential part cannot be answered from the results, give new sub-goals (at most one per agent) instead of an answer, and leave "answer" empty. ${roundsLeft} more round${roundsLeft > 1 ? 's are' : ' is'} possible.`
      : '- No more agents can be asked: give no sub-goals and write the answer from what is known, saying what is still open.';
  return `${instructions}

Agents:
${agentList(agents)}

Rules:
- Use only the results below; never add facts no agent gave.
- A result marked ${MISSING_MARKER} is a part no agent could deliver: say plainly in the answer what is missing, never invent it.
${more}

Answer with a JSON object with the fields thought, subgoals and answer.`;
}

/**
 * The agents' results of the current turn as the synthesis model reads them,
 * round by round; a failed or timed-out branch is marked {@link MISSING_MARKER}
 * with its safe description (never the error's own text).
 * @example
 * ```ts
 * const block = renderResults([[okReply, failedReply]]);
 * ```
 */
export function renderResults(rounds: readonly (readonly ToolMessage[])[]): string {
  return rounds
    .map((results, index) => {
      const lines = results.map((result) =>
        result.status === 'ok' && result.content.trim() !== ''
          ? `[Agent "${result.name}" replied]\n${result.content}`
          : `[${MISSING_MARKER}: agent "${result.name}" gave no result (${result.content.trim() || 'empty reply'})]`,
      );
      return `Round ${index + 1} results:\n\n${lines.join('\n\n')}`;
    })
    .join('\n\n');
}
