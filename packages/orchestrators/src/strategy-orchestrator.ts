import {
  AbstractOrchestrator,
  type AgentLike,
  annotateStep,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  type ToolCall,
  type ToolMessage,
  toolCall,
  turnMessages,
} from '@switchboard/core';
import type { ChatClient } from '@switchboard/runtime';
import { clientResolver } from '@switchboard/runtime/internal';
import { type BestChoice, chooseBest, type StrategyJudge } from './strategy-choice.js';
import type { StrategyCandidate } from './strategy-judge.js';

/** How a strategy runs its agents for one turn. */
export type StrategyMode = 'first' | 'fallback' | 'best-of';

/** Which mode each profile selects: `conservative` the first agent only, `exploratory` best-of, `fallback` the chain. */
export const DEFAULT_STRATEGY_MODES: Readonly<Record<string, StrategyMode>> = Object.freeze({
  conservative: 'first',
  exploratory: 'best-of',
  fallback: 'fallback',
});

/**
 * Whether an ok reply counts as a success (a failed reply never does).
 * Default: any ok reply with text.
 */
export type StrategyUntil = (reply: ToolMessage, conversation: Conversation) => boolean;

/** Options of {@link fallbackChain} and {@link bestOf}. */
export interface StrategyOptions {
  /** Default `fallback-chain` or `best-of`. */
  name?: string;
  description?: string;
  /** When an ok reply is a success. Default: it has text. */
  until?: StrategyUntil;
  /** How a best-of picks its winner. Default `'priority'` (declared order). */
  judge?: StrategyJudge;
  /**
   * The mode each profile selects, over {@link DEFAULT_STRATEGY_MODES}; a
   * profile not listed (or no profile) runs the executor's own mode.
   */
  modes?: Readonly<Record<string, StrategyMode>>;
}

const SUCCEEDED: StrategyUntil = (reply) => reply.content.trim() !== '';

/**
 * The orchestrator {@link fallbackChain} and {@link bestOf} return. Each
 * attempt is an engine call of its own (a span, a recorded step, the
 * profile's retries and timeouts); a best-of is one engine fan-out.
 * Nothing is kept on the instance or in memory: where a turn stands is read
 * from its replies, so a resumed turn goes on where it stopped.
 */
export class StrategyOrchestrator extends AbstractOrchestrator {
  /** The mode a turn without a mapped profile runs. */
  readonly mode: StrategyMode;
  /** The agents, in priority order. */
  readonly order: readonly string[];
  /** The mode each profile selects. */
  readonly modes: Readonly<Record<string, StrategyMode>>;
  readonly #until: StrategyUntil;
  readonly #judge: StrategyJudge;
  readonly #client?: () => Promise<ChatClient>;

  constructor(
    mode: StrategyMode,
    agents: readonly AgentLike[],
    { name, description, until = SUCCEEDED, judge = 'priority', modes = {} }: StrategyOptions = {},
  ) {
    const label = name ?? (mode === 'best-of' ? 'best-of' : 'fallback-chain');
    super({ name: label, description, agents: (agents ?? []).map(checkedAgent) });
    const owner = `Strategy '${label}'`;
    this.order = this.agents.map((agent) => agent.name);
    if (this.order.length === 0)
      throw new ConfigurationError({ message: `${owner} needs at least one agent` });
    if (typeof until !== 'function')
      throw new ConfigurationError({
        message: `${owner}: until must be a function (reply, conversation) => boolean`,
      });
    if (typeof judge === 'object' && judge !== null) {
      if (typeof judge.model !== 'string' || judge.model === '')
        throw new ConfigurationError({ message: `${owner}: the judge needs a model name` });
      this.#client = clientResolver(`${owner} judge`, judge);
    } else if (judge !== 'priority' && typeof judge !== 'function') {
      throw new ConfigurationError({
        message: `${owner}: judge must be 'priority', a scoring function, or judge options { model, … }`,
      });
    }
    const allModes = { ...DEFAULT_STRATEGY_MODES, ...modes };
    for (const [profile, chosen] of Object.entries(allModes)) {
      if (chosen !== 'first' && chosen !== 'fallback' && chosen !== 'best-of')
        throw new ConfigurationError({
          message: `${owner}: profile '${profile}' maps to '${String(chosen)}', not one of first, fallback, best-of`,
        });
    }
    this.mode = mode;
    this.modes = Object.freeze(allModes);
    this.#until = until;
    this.#judge = judge;
  }

  /** The mode this decision runs: the active profile's, else the executor's own (a best-of without fan-out is a chain). */
  modeOf(conversation: Conversation): StrategyMode {
    const { limits } = conversation;
    const mode = (limits && this.modes[limits.profile]) ?? this.mode;
    return mode === 'best-of' && limits?.allowFanOut === false ? 'fallback' : mode;
  }

  protected handleMessage(conversation: Conversation): Decision | Promise<Decision> {
    const mode = this.modeOf(conversation);
    const offered = new Set(conversation.agents.map((agent) => agent.name));
    const available = this.order.filter((agent) => offered.has(agent));
    const mine = new Set(this.order);
    const results = latestToolResults(conversation).filter((reply) => mine.has(reply.name));
    const tried = new Set<string>();
    for (const message of turnMessages(conversation))
      if (message.role === 'tool' && mine.has(message.name)) tried.add(message.name);
    const untried = available.filter((agent) => !tried.has(agent));

    if (results.length > 1) return this.#conclude(conversation, results, mode);
    const last = results[0];
    if (last && this.#succeeded(last, conversation)) {
      annotateStep(conversation, { strategy: mode, winner: last.name, attempts: tried.size });
      return routeToUser(last.content, { reason: `'${last.name}' succeeded (attempt ${tried.size})` });
    }
    const previous = last
      ? { agent: last.name, outcome: last.status === 'ok' ? 'rejected' : 'failed' }
      : undefined;
    if (untried.length === 0 || (last && mode === 'first')) return this.#exhausted(conversation, mode, tried);
    const question = currentUserMessage(conversation).content;
    if (mode === 'best-of' && untried.length > 1) {
      const calls: ToolCall[] = untried.map((agent) =>
        toolCall(agent, question, { reason: 'best-of candidate' }),
      );
      annotateStep(conversation, {
        strategy: mode,
        correlationId: calls[0]?.id,
        expectedBranches: calls.length,
        ...(previous ? { previous } : {}),
      });
      return calls;
    }
    const next = untried[0] as string;
    const attempt = tried.size + 1;
    annotateStep(conversation, {
      strategy: mode,
      attempt,
      of: mode === 'first' ? 1 : tried.size + untried.length,
      ...(previous ? { previous } : {}),
    });
    const reason = previous
      ? `'${previous.agent}' ${previous.outcome}; trying '${next}'`
      : `trying '${next}' first`;
    return toolCall(next, question, { reason });
  }

  #succeeded(reply: ToolMessage, conversation: Conversation): boolean {
    return reply.status === 'ok' && this.#until(reply, conversation) === true;
  }

  /** The fan-in of a best-of: scores the replies that succeeded and answers with the winner. */
  async #conclude(
    conversation: Conversation,
    results: readonly ToolMessage[],
    mode: StrategyMode,
  ): Promise<Decision> {
    const candidates: StrategyCandidate[] = [];
    const failed: { agent: string; outcome: string }[] = [];
    for (const agent of this.order) {
      const reply = results.find((result) => result.name === agent);
      if (!reply) continue;
      if (this.#succeeded(reply, conversation)) candidates.push({ agent, content: reply.content.trim() });
      else failed.push({ agent, outcome: reply.status === 'ok' ? 'rejected' : 'failed' });
    }
    const correlationId = results[0]?.toolCallId;
    if (candidates.length === 0) {
      annotateStep(conversation, { strategy: mode, correlationId, candidates: [], failed, winner: null });
      return this.#noAnswer(results.map((result) => result.name));
    }
    const question = currentUserMessage(conversation).content;
    const choice: BestChoice = await chooseBest(
      this.#judge,
      this.#client,
      candidates,
      question,
      conversation,
    );
    annotateStep(conversation, {
      strategy: mode,
      correlationId,
      judge: choice.judge,
      candidates: choice.scores.map((score) => ({ ...score })),
      failed,
      winner: choice.winner.agent,
      why: choice.why,
      ...(choice.judgeFailed ? { judgeFailed: true } : {}),
    });
    return routeToUser(choice.winner.content, { reason: choice.why });
  }

  /** Every agent was tried (or the mode allows no more): the best reply that was ok, or no answer. */
  #exhausted(conversation: Conversation, mode: StrategyMode, tried: ReadonlySet<string>): Decision {
    const mine = new Set(this.order);
    let fallback: ToolMessage | undefined;
    for (const message of turnMessages(conversation)) {
      if (message.role !== 'tool' || !mine.has(message.name) || message.status !== 'ok') continue;
      if (message.content.trim() === '') continue;
      if (!fallback || this.order.indexOf(message.name) < this.order.indexOf(fallback.name))
        fallback = message;
    }
    annotateStep(conversation, {
      strategy: mode,
      attempts: tried.size,
      winner: null,
      ...(fallback ? { partial: fallback.name } : {}),
    });
    if (fallback) {
      return routeToUser(fallback.content.trim(), {
        reason: `no agent met the success condition; the first ok reply by priority ('${fallback.name}')`,
      });
    }
    return this.#noAnswer([...tried]);
  }

  #noAnswer(agents: readonly string[]): Decision {
    return routeToUser(this.noAnswerMessage(agents.length), {
      reason:
        agents.length > 0 ? `every agent failed: ${agents.join(', ')}` : 'none of its agents is available',
    });
  }

  /** What the user reads when no agent succeeded. Override to change the wording. */
  protected noAnswerMessage(tried: number): string {
    return tried === 0
      ? 'Sorry, none of the agents that could answer this are available right now.'
      : `Sorry, none of the ${tried} agents I tried could answer this. Please try again in a moment.`;
  }
}

function checkedAgent(agent: AgentLike): AgentLike {
  if (typeof agent !== 'object' || agent === null || typeof agent.name !== 'string')
    throw new ConfigurationError({
      message: 'A strategy takes agents (or their AgentMeta: { name, description })',
    });
  return agent;
}

/**
 * Runs `agents` in order until one succeeds (an ok reply with text, or
 * `until`), each attempt an engine call of its own (a span, a recorded step
 * annotated with `attempt`, `of` and the `previous` agent's outcome). When
 * none succeeds, the first ok reply by priority answers (a partial one), or
 * a message saying no agent could. Under the `exploratory` profile it runs
 * as a best-of, under `conservative` it calls the first agent only.
 * @example
 * ```ts
 * const research = fallbackChain([tool, rag, web], { until: (reply) => reply.content.length > 40 });
 * app.mount(research); // or nest it: orchestratorAgent({ name: 'research', orchestrator: research, agents: [tool, rag, web], … })
 * ```
 */
export function fallbackChain(agents: readonly AgentLike[], options?: StrategyOptions): StrategyOrchestrator {
  return new StrategyOrchestrator('fallback', agents, options);
}

/**
 * Runs `agents` in parallel (one engine fan-out) and answers with the best
 * reply that succeeded, picked by `judge`: the priority (declared order, the
 * default), a scoring function, or a judge model with structured output.
 * The answer step records every candidate's score, the failed ones, the
 * `winner` and `why`. Under the `fallback` profile it runs as a chain,
 * under `conservative` it calls the first agent only.
 * @example
 * ```ts
 * const drafts = bestOf([formal, friendly], { judge: { model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY } });
 * ```
 */
export function bestOf(agents: readonly AgentLike[], options?: StrategyOptions): StrategyOrchestrator {
  return new StrategyOrchestrator('best-of', agents, options);
}
