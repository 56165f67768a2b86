import {
  AbstractOrchestrator,
  type AgentLike,
  annotateStep,
  ConfigurationError,
  type Conversation,
  createId,
  currentUserMessage,
  type Decision,
  discardStreamedAnswer,
  latestToolResults,
  OrchestratorError,
  routeToUser,
  streamAnswer,
  type ToolCall,
  type ToolMessage,
  toolCall,
  turnMessages,
} from '@switchboard/core';
import type { ChatClient, LlmClientOptions } from '@switchboard/runtime';
import { clientResolver } from '@switchboard/runtime/internal';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { LlmRouterFallback } from './llm-orchestrator.js';
import { routerConversation } from './llm-route-prompt.js';
import { askForDecision, checkWholeNumbers, type DecisionAnswer } from './llm-structured-output.js';
import {
  DEFAULT_SUPERVISOR_INSTRUCTIONS,
  DEFAULT_SYNTHESIS_INSTRUCTIONS,
  decompositionPrompt,
  renderResults,
  synthesisPrompt,
} from './supervisor-prompt.js';
import {
  type SubGoal,
  type SupervisorAnswer,
  type SupervisorStage,
  supervisorSchema,
} from './supervisor-schema.js';

/** Options of {@link SupervisorOrchestrator}. */
export interface SupervisorOrchestratorOptions extends LlmClientOptions {
  /** Default `supervisor`. */
  name?: string;
  description?: string;
  /** The agents it routes to: the agents themselves (`defineAgent`, `llmAgent`, …) or their metadata (`app.agentMetas`). */
  agents: readonly AgentLike[];
  /** The supervising model, e.g. `gpt-4o-mini`. It must support JSON-schema structured output. */
  model: string;
  /** Rounds of fan-out per turn, the first included: the synthesis may ask for `maxRounds − 1` more. Default 2; a strategy profile's `maxRounds` wins. */
  maxRounds?: number;
  /** Replaces the role description of the decomposition prompt. */
  instructions?: string;
  /** Replaces the role description of the synthesis prompt. */
  synthesisInstructions?: string;
  /** How many earlier messages the model sees (the current turn is always whole). Default 12. */
  historyWindow?: number;
  /** Used when the decomposition stays invalid or the model cannot be reached. Default: an `ErrorMessage`. */
  fallback?: LlmRouterFallback;
  /** Further attempts after an invalid answer, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
  /**
   * Each branch's deadline in milliseconds (`ToolCall.timeoutMs`; an agent's
   * own shorter timeout still applies). Default: the agents' timeouts.
   */
  branchTimeoutMs?: number;
  /**
   * How long the other branches may run on once one has replied
   * (`ToolCall.fanInGraceMs`): a branch still running then is reported to the
   * synthesis as missing. Default 10 000 ms; `null` waits for every branch up
   * to its deadline.
   */
  fanInGraceMs?: number | null;
}

/**
 * Splits a request into independent sub-goals, one per agent, runs them at
 * once (one fan-out), and writes the answer from their results.
 *
 * - First decision: the model answers with strict JSON whose sub-goals name
 *   candidate agents only; an invalid answer is retried with feedback
 *   (`maxRetries`), then the `fallback` applies. With no sub-goal (a simple
 *   or unclear request) the model's own answer goes to the user directly.
 * - The fan-out step is annotated with `correlationId` (its first call's id),
 *   `expectedBranches`, `round` and the `subGoals`.
 * - After the replies the model synthesises the answer from every round's
 *   results. A branch that failed or timed out is shown to it as `MISSING`
 *   with its safe description, and it must say what is missing. It may ask
 *   for another round (a new fan-out with a new correlation id) until
 *   `maxRounds` rounds have run; at the bound it must answer, and when it
 *   still wanted more the answer says that it stops there. When the model
 *   gives no valid synthesis, the user gets the agents' replies as they are,
 *   with what is missing named.
 *
 * Rounds are counted from the current turn's agent replies, never kept on the
 * instance, so a turn may continue on another replica. Each branch has a
 * deadline (`branchTimeoutMs`, else its agent's timeout), and once one branch
 * has replied the others have `fanInGraceMs` more: a fan-in never waits on
 * its slowest branch for long. The runtime reports a timed-out branch as a
 * failed reply, which the synthesis sees as missing. The answer streams to
 * the client as the model writes it (`streamAnswer`).
 *
 * @example
 * ```ts
 * const supervisor = new SupervisorOrchestrator({
 *   agents: app.agentMetas,
 *   model: 'gpt-4o-mini',
 *   apiKey: process.env.OPENAI_API_KEY,
 *   fallback: { message: 'Sorry, I could not work out how to help with that.' },
 * });
 * ```
 */
export class SupervisorOrchestrator extends AbstractOrchestrator {
  readonly model: string;
  readonly maxRounds: number;
  readonly fallback?: LlmRouterFallback;
  /** The bounds given to every branch call (`timeoutMs`, `fanInGraceMs`). */
  readonly #bounds: { timeoutMs?: number; fanInGraceMs?: number };
  readonly #client: () => Promise<ChatClient>;
  readonly #instructions: string;
  readonly #synthesisInstructions: string;
  readonly #historyWindow: number;
  readonly #maxRetries: number;
  readonly #temperature?: number;

  constructor({
    name = 'supervisor',
    description,
    agents,
    model,
    client,
    apiKey,
    baseURL,
    maxRounds = 2,
    instructions = DEFAULT_SUPERVISOR_INSTRUCTIONS,
    synthesisInstructions = DEFAULT_SYNTHESIS_INSTRUCTIONS,
    historyWindow = 12,
    fallback,
    maxRetries = 1,
    temperature,
    branchTimeoutMs,
    fanInGraceMs = 10_000,
  }: SupervisorOrchestratorOptions) {
    super({ name, description, agents });
    const owner = `SupervisorOrchestrator '${name}'`;
    if (typeof model !== 'string' || model === '')
      throw new ConfigurationError({ message: `${owner} needs a model name` });
    checkWholeNumbers(owner, [
      ['maxRounds', maxRounds, 1],
      ['historyWindow', historyWindow, 1],
      ['maxRetries', maxRetries, 0],
      ...(branchTimeoutMs === undefined ? [] : [['branchTimeoutMs', branchTimeoutMs, 1] as const]),
      ...(fanInGraceMs === null ? [] : [['fanInGraceMs', fanInGraceMs, 0] as const]),
    ]);
    if (fallback && 'agent' in fallback && !this.agents.some((agent) => agent.name === fallback.agent)) {
      throw new ConfigurationError({
        message: `${owner}: fallback agent '${fallback.agent}' is not one of its agents: ${this.agents.map((agent) => agent.name).join(', ') || '(none)'}`,
      });
    }
    this.model = model;
    this.maxRounds = maxRounds;
    this.fallback = fallback;
    this.#bounds = {
      ...(branchTimeoutMs === undefined ? {} : { timeoutMs: branchTimeoutMs }),
      ...(fanInGraceMs === null ? {} : { fanInGraceMs }),
    };
    this.#client = clientResolver(owner, { client, apiKey, baseURL });
    this.#instructions = instructions;
    this.#synthesisInstructions = synthesisInstructions;
    this.#historyWindow = historyWindow;
    this.#maxRetries = maxRetries;
    this.#temperature = temperature;
  }

  protected handleMessage(conversation: Conversation): Promise<Decision> {
    return latestToolResults(conversation).length > 0
      ? this.#synthesise(conversation)
      : this.#decompose(conversation);
  }

  async #decompose(conversation: Conversation): Promise<Decision> {
    const system = decompositionPrompt(this.#instructions, conversation.agents);
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: system },
      ...routerConversation(conversation, this.#historyWindow),
    ];
    const asked = await this.#ask(conversation, 'decompose', messages);
    if (!asked.ok) return this.fallbackDecision(conversation, asked.problem);
    const { subGoals, answer, thought } = asked.value;
    if (subGoals.length === 0) return routeToUser(answer, { thought, reason: 'answered without agents' });
    return this.#fanOut(conversation, subGoals, 1, thought);
  }

  async #synthesise(conversation: Conversation): Promise<Decision> {
    const rounds = roundsOf(conversation);
    const done = rounds.length;
    // A strategy profile's bound wins over the option.
    const maxRounds = conversation.limits?.maxRounds ?? this.maxRounds;
    const roundsLeft = conversation.agents.length > 0 ? Math.max(0, maxRounds - done) : 0;
    const latest = rounds.at(-1) ?? [];
    const missing = latest.filter((result) => result.status !== 'ok' || result.content.trim() === '');
    const recorded = {
      correlationId: latest[0] && correlationOf(latest[0].toolCallId),
      round: done,
      missing: missing.map((result) => result.name),
    };
    const messages: ChatCompletionMessageParam[] = [
      {
        role: 'system',
        content: synthesisPrompt(this.#synthesisInstructions, conversation.agents, roundsLeft),
      },
      ...routerConversation(
        { ...conversation, messages: conversation.messages.slice(0, conversation.turnStart + 1) },
        this.#historyWindow,
      ),
      { role: 'user', content: renderResults(rounds) },
    ];
    const asked = await this.#ask(conversation, roundsLeft > 0 ? 'synthesise' : 'synthesise-final', messages);
    if (!asked.ok) {
      annotateStep(conversation, { ...recorded, synthesis: 'fallback' });
      return routeToUser(this.resultsAnswer(rounds), {
        reason: 'the model gave no valid synthesis; the agents’ replies as they are',
        thought: asked.problem,
      });
    }
    const { subGoals, answer, thought } = asked.value;
    if (subGoals.length > 0 && roundsLeft > 0) return this.#fanOut(conversation, subGoals, done + 1, thought);
    const bounded = subGoals.length > 0;
    annotateStep(conversation, { ...recorded, synthesis: 'model', ...(bounded ? { bounded: true } : {}) });
    return routeToUser(bounded ? `${answer}\n\n${this.roundLimitNote(done)}` : answer, {
      thought,
      reason: bounded
        ? `stopped at the bound of ${maxRounds} rounds`
        : `synthesised from ${done} round${done > 1 ? 's' : ''}`,
    });
  }

  #fanOut(
    conversation: Conversation,
    subGoals: readonly SubGoal[],
    round: number,
    thought?: string,
  ): ToolCall[] {
    const reason = `round ${round}: ${subGoals.length} sub-goal${subGoals.length > 1 ? 's' : ''}`;
    const correlationId = createId('fan');
    const calls = subGoals.map((goal, index) =>
      toolCall(goal.agent, goal.task, {
        ...this.#bounds,
        id: branchId(correlationId, index),
        reason,
        thought,
      }),
    );
    annotateStep(conversation, {
      correlationId,
      expectedBranches: calls.length,
      round,
      subGoals: subGoals.map(({ agent, task }) => ({ agent, task })),
    });
    return calls;
  }

  /** One structured model call: the valid answer, or what went wrong. API errors become a problem unless the request was cancelled. */
  #ask(
    conversation: Conversation,
    stage: SupervisorStage,
    messages: ChatCompletionMessageParam[],
  ): Promise<DecisionAnswer<SupervisorAnswer>> {
    const { responseFormat, check } = supervisorSchema(
      conversation.agents.map((agent) => agent.name),
      stage,
    );
    return askForDecision(conversation, {
      client: this.#client,
      model: this.model,
      temperature: this.#temperature,
      messages,
      responseFormat,
      check,
      maxRetries: this.#maxRetries,
      // The answer streams as the model writes it, once the sub-goals written before it show it is final.
      streamField: {
        name: 'answer',
        when: (before) =>
          stage === 'synthesise-final' || (Array.isArray(before.subgoals) && before.subgoals.length === 0),
        onText: (text) => streamAnswer(conversation, text),
        onDiscard: () => discardStreamedAnswer(conversation),
      },
    });
  }

  /**
   * The decision when the decomposition failed: the configured fallback (a
   * fallback agent's reply is then synthesised like a one-branch round), or
   * an `ErrorMessage` naming the problem.
   */
  protected fallbackDecision(conversation: Conversation, problem: string): Decision {
    const { fallback } = this;
    const reason = 'fallback: the model gave no valid decomposition';
    if (fallback && 'message' in fallback) return routeToUser(fallback.message, { reason, thought: problem });
    if (
      fallback &&
      'agent' in fallback &&
      conversation.agents.some((agent) => agent.name === fallback.agent)
    ) {
      const correlationId = createId('fan');
      const call = toolCall(fallback.agent, currentUserMessage(conversation).content, {
        ...this.#bounds,
        id: branchId(correlationId, 0),
        reason,
        thought: problem,
      });
      annotateStep(conversation, { correlationId, expectedBranches: 1, round: 1, fallback: true });
      return [call];
    }
    return { error: new OrchestratorError({ orchestrator: this.name, cause: new Error(problem) }) };
  }

  /** What the user reads when the model gives no valid synthesis: the replies, and what is missing. Override to change the wording. */
  protected resultsAnswer(rounds: readonly (readonly ToolMessage[])[]): string {
    const results = rounds.flat();
    const answered = results.filter((result) => result.status === 'ok' && result.content.trim() !== '');
    const missing = [
      ...new Set(results.filter((result) => !answered.includes(result)).map((result) => result.name)),
    ];
    if (answered.length === 0)
      return 'Sorry, none of the agents I asked could answer this right now. Please try again in a moment.';
    const parts = answered.map((result) => `${result.name}: ${result.content.trim()}`);
    if (missing.length > 0) parts.push(`Missing: I could not get a result from ${missing.join(', ')}.`);
    return parts.join('\n\n');
  }

  /** Appended to the answer when the model still wanted more at the round bound. Override to change the wording. */
  protected roundLimitNote(rounds: number): string {
    return `(I stopped after ${rounds} round${rounds > 1 ? 's' : ''} of asking the agents; this answer is based on what they found so far.)`;
  }
}

/**
 * A branch's call id carries its fan-out's correlation id, so the replies of
 * each round are told apart from the stored messages alone (two rounds'
 * replies are adjacent: a round's request leaves no message between them).
 */
function branchId(correlationId: string, index: number): string {
  return `${correlationId}.${index + 1}`;
}

/** The correlation id of a branch's call id (the id itself when it is not a branch's). */
function correlationOf(toolCallId: string): string {
  const dot = toolCallId.lastIndexOf('.');
  return dot > 0 ? toolCallId.slice(0, dot) : toolCallId;
}

/** The current turn's agent replies, one group per fan-out (by correlation id), oldest first. */
function roundsOf(conversation: Conversation): ToolMessage[][] {
  const rounds = new Map<string, ToolMessage[]>();
  const add = (result: ToolMessage) => {
    const key = correlationOf(result.toolCallId);
    const round = rounds.get(key) ?? [];
    if (!round.some((known) => known.id === result.id)) round.push(result);
    rounds.set(key, round);
  };
  for (const message of turnMessages(conversation)) if (message.role === 'tool') add(message);
  // The runtime always passes the latest replies; a hand-built conversation may hold them only there.
  for (const result of latestToolResults(conversation)) add(result);
  return [...rounds.values()];
}
