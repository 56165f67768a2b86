import {
  AbstractOrchestrator,
  type AgentLike,
  annotateStep,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  RequestContext,
  recordUsage,
  routeToUser,
  type StepAnnotations,
  type ToolCall,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import type { ChatClient } from '@switchboard/runtime';
import { clientResolver } from '@switchboard/runtime/internal';
import { askJudge, type ConsensusJudgeOptions } from './consensus-judge.js';
import { type ConsensusAnswer, tallyVotes, type VoteTally } from './consensus-votes.js';

/** What an aggregator returns: the answer the user reads, or that with a short reason for the trace. */
export type ConsensusVerdict = string | { answer: string; reason?: string };

/**
 * Turns the voters' answers into one. `answers` holds the successful ones in
 * declared voter order (never empty); `tally` is the majority count over them.
 */
export type ConsensusAggregator = (
  answers: readonly ConsensusAnswer[],
  context: { question: string; tally: VoteTally; conversation: Conversation },
) => ConsensusVerdict | Promise<ConsensusVerdict>;

/** Options of {@link ConsensusOrchestrator}. */
export interface ConsensusOrchestratorOptions {
  /** Default `consensus`. */
  name?: string;
  description?: string;
  /** The agents it routes to: the agents themselves (`defineAgent`, `llmAgent`, …) or their metadata (`app.agentMetas`). */
  agents: readonly AgentLike[];
  /** The agents asked, in order (ties go to the earlier one). Default: every agent. At least two. */
  voters?: readonly string[];
  /**
   * How the answers become one: `'majority'` (default) votes over
   * normalised short answers; a function decides itself; judge options
   * (`{ model, client | apiKey, … }`) ask a model, falling back to the
   * majority when the model gives no valid verdict.
   */
  aggregate?: 'majority' | ConsensusAggregator | ConsensusJudgeOptions;
}

/**
 * Asks several agents the same question at once (one fan-out) and answers
 * with what they agree on. Failed voters are left out and counted; when all
 * fail, the user is told that no agent could answer.
 *
 * The fan-out step is annotated with `correlationId` (its first call's id)
 * and `expectedBranches`; the answer step with the same `correlationId`, the
 * `votes` (normalised answer → count), `agreement` (0–1), `dissent` (the
 * voters outside the majority), `failed` voters and the `aggregate` used.
 * Nothing is kept on the instance between decisions.
 *
 * @example
 * ```ts
 * const panel = new ConsensusOrchestrator({
 *   agents: app.agentMetas,
 *   voters: ['gpt', 'claude', 'rules'],
 *   aggregate: { model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY }, // or 'majority', or a function
 * });
 * ```
 */
export class ConsensusOrchestrator extends AbstractOrchestrator {
  /** The agents asked, in order. */
  readonly voters: readonly string[];
  readonly #aggregate: 'majority' | ConsensusAggregator | ConsensusJudgeOptions;
  readonly #client?: () => Promise<ChatClient>;

  constructor({
    name = 'consensus',
    description,
    agents,
    voters,
    aggregate = 'majority',
  }: ConsensusOrchestratorOptions) {
    super({ name, description, agents });
    const known = this.agents.map((agent) => agent.name);
    const chosen = voters ?? known;
    const owner = `ConsensusOrchestrator '${name}'`;
    const unknown = chosen.filter((voter) => !known.includes(voter));
    if (unknown.length > 0) {
      throw new ConfigurationError({
        message: `${owner}: voters ${unknown.map((voter) => `'${voter}'`).join(', ')} are not among its agents: ${known.join(', ') || '(none)'}`,
      });
    }
    if (new Set(chosen).size !== chosen.length) {
      throw new ConfigurationError({
        message: `${owner}: each voter may be named once, got ${chosen.join(', ')}`,
      });
    }
    if (chosen.length < 2) {
      throw new ConfigurationError({ message: `${owner} needs at least two voters, got ${chosen.length}` });
    }
    if (typeof aggregate === 'object' && aggregate !== null) {
      if (typeof aggregate.model !== 'string' || aggregate.model === '') {
        throw new ConfigurationError({ message: `${owner}: the judge needs a model name` });
      }
      this.#client = clientResolver(`${owner} judge`, aggregate);
    } else if (aggregate !== 'majority' && typeof aggregate !== 'function') {
      throw new ConfigurationError({
        message: `${owner}: aggregate must be 'majority', a function, or judge options { model, … }`,
      });
    }
    this.voters = Object.freeze([...chosen]);
    this.#aggregate = aggregate;
  }

  protected handleMessage(conversation: Conversation): Decision | Promise<Decision> {
    const results = latestToolResults(conversation);
    return results.length > 0 ? this.#conclude(conversation, results) : this.#ask(conversation);
  }

  /** The fan-out: the user's message to every voter among the candidates. */
  #ask(conversation: Conversation): Decision {
    const offered = new Set(conversation.agents.map((agent) => agent.name));
    const voters = this.voters.filter((voter) => offered.has(voter));
    if (voters.length === 0) {
      return routeToUser('Sorry, none of the agents that could answer this are available right now.', {
        reason: 'no voter among the candidate agents',
      });
    }
    const question = currentUserMessage(conversation).content;
    const reason = `asking ${voters.length} agents for consensus`;
    const calls: ToolCall[] = voters.map((voter) => toolCall(voter, question, { reason }));
    annotateStep(conversation, { correlationId: calls[0]?.id, expectedBranches: calls.length });
    return calls;
  }

  /** The fan-in: aggregates the successful answers and records how far they agree. */
  async #conclude(conversation: Conversation, results: readonly ToolMessage[]): Promise<Decision> {
    const answers = results
      .filter((result) => result.status === 'ok' && result.content.trim() !== '')
      .map(({ name, content }) => ({ agent: name, content: content.trim() }));
    const failed = results.filter((result) => !answers.some((answer) => answer.agent === result.name));
    const base: StepAnnotations = {
      correlationId: results[0]?.toolCallId,
      voters: results.length,
      failed: failed.map((result) => result.name),
    };
    if (answers.length === 0) {
      annotateStep(conversation, { ...base, votes: {}, agreement: 0, dissent: [] });
      return routeToUser(this.noAnswerMessage(results.length), { reason: 'every voter failed' });
    }
    const tally = tallyVotes(answers);
    const { votes, agreement, dissent } = tally;
    const question = currentUserMessage(conversation).content;
    const recorded = { ...base, votes, agreement, dissent };
    const majority = tally.winners[0]?.content ?? '';
    const aggregate = this.#aggregate;
    if (aggregate === 'majority') {
      annotateStep(conversation, { ...recorded, aggregate: 'majority' });
      return routeToUser(majority, {
        reason: `majority: ${tally.winners.length} of ${answers.length} agree`,
        thought: `Votes: ${JSON.stringify(votes)}`,
      });
    }
    if (typeof aggregate === 'function') {
      const verdict = await aggregate(answers, { question, tally, conversation });
      const { answer, reason } =
        typeof verdict === 'string' ? { answer: verdict, reason: undefined } : verdict;
      annotateStep(conversation, { ...recorded, aggregate: 'function' });
      return routeToUser(answer, { reason: reason ?? 'aggregated by the configured function' });
    }
    return this.#judge(conversation, aggregate, question, answers, recorded, majority);
  }

  async #judge(
    conversation: Conversation,
    options: ConsensusJudgeOptions,
    question: string,
    answers: readonly ConsensusAnswer[],
    recorded: StepAnnotations,
    majority: string,
  ): Promise<Decision> {
    // Outside the try: a missing `openai` package is a configuration error, not a case for the fallback.
    const client = await (this.#client as () => Promise<ChatClient>)();
    let problem: string;
    try {
      const verdict = await askJudge(client, options, question, answers);
      recordUsage(conversation, verdict.usage);
      if (verdict.value) {
        annotateStep(conversation, { ...recorded, aggregate: 'judge' });
        return routeToUser(verdict.value.answer, {
          reason: verdict.value.reason ?? 'chosen by the judge model',
        });
      }
      problem = verdict.problems.at(-1) ?? 'no answer';
    } catch (error) {
      if (RequestContext.tryCurrent()?.signal.aborted) throw error;
      problem = `the judge model could not be reached: ${error instanceof Error ? error.message : String(error)}`;
    }
    annotateStep(conversation, { ...recorded, aggregate: 'majority', judgeFailed: true });
    return routeToUser(majority, {
      reason: 'the judge gave no valid verdict; majority answer',
      thought: problem,
    });
  }

  /** What the user sees when no voter answered. Override to change the wording. */
  protected noAnswerMessage(voters: number): string {
    return `Sorry, none of the ${voters} agents I asked could answer this. Please try again in a moment.`;
  }
}
