import { trace } from '@opentelemetry/api';
import {
  AbstractOrchestrator,
  type AgentLike,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  OrchestratorError,
  RequestContext,
  ROUTE_TO_USER,
  recordUsage,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import type { ChatClient, LlmClientOptions } from '@switchboard/runtime';
import { clientResolver } from '@switchboard/runtime/internal';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { CandidateCache } from './llm-candidate-cache.js';
import { DEFAULT_ROUTER_INSTRUCTIONS, routerConversation, routerSystemPrompt } from './llm-route-prompt.js';
import { type RouteAnswer, type RouteSchema, routeSchema } from './llm-route-schema.js';
import { askForStructuredAnswer, type StructuredAnswer } from './llm-structured-output.js';

/**
 * What an {@link LlmOrchestrator} does when the model gives no valid decision:
 * answer the user with a fixed `message`, or send the user's message to an
 * `agent` (after agents have replied, their replies go to the user instead).
 */
export type LlmRouterFallback = { message: string } | { agent: string };

/** Options of {@link LlmOrchestrator}. */
export interface LlmOrchestratorOptions extends LlmClientOptions {
  /** Default `llm`. */
  name?: string;
  description?: string;
  /** The agents it routes to: the agents themselves (`defineAgent`, `llmAgent`, …) or their metadata (`app.agentMetas`). */
  agents: readonly AgentLike[];
  /** The routing model, e.g. `gpt-4o-mini`. It must support JSON-schema structured output. */
  model: string;
  /** Replaces the router's role description at the top of the system prompt. */
  instructions?: string;
  /** How many recent messages the model sees (the current turn is always whole). Default 12. */
  historyWindow?: number;
  /** Used when the model's answers stay invalid, or the model cannot be reached. Default: an `ErrorMessage`. */
  fallback?: LlmRouterFallback;
  /** Further attempts after an invalid answer, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
}

interface RouteEntry extends RouteSchema {
  system: string;
}

function checkOptions(
  name: string,
  {
    model,
    historyWindow,
    maxRetries,
    fallback,
    agents,
  }: Required<Pick<LlmOrchestratorOptions, 'model' | 'historyWindow' | 'maxRetries' | 'agents'>> &
    Pick<LlmOrchestratorOptions, 'fallback'>,
): void {
  const owner = `LlmOrchestrator '${name}'`;
  if (typeof model !== 'string' || model === '')
    throw new ConfigurationError({ message: `${owner} needs a model name` });
  if (!Number.isInteger(historyWindow) || historyWindow < 1) {
    throw new ConfigurationError({
      message: `${owner}: historyWindow must be a positive integer, got ${historyWindow}`,
    });
  }
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new ConfigurationError({ message: `${owner}: maxRetries must be 0 or more, got ${maxRetries}` });
  }
  if (fallback === undefined) return;
  if ('agent' in fallback) {
    if (!agents.some((agent) => agent.name === fallback.agent)) {
      throw new ConfigurationError({
        message: `${owner}: fallback agent '${fallback.agent}' is not one of its agents: ${agents.map((agent) => agent.name).join(', ') || '(none)'}`,
      });
    }
  } else if (typeof fallback?.message !== 'string' || fallback.message.trim() === '') {
    throw new ConfigurationError({
      message: `${owner}: fallback must be { message: '…' } or { agent: '<agent name>' }`,
    });
  }
}

/**
 * Routes with a language model through the `openai` client (any
 * OpenAI-compatible endpoint). For each decision the model sees a compact
 * prompt — the candidate agents' names and descriptions and the recent
 * messages — and answers with strict JSON whose `agent` is one of the
 * candidates or `route_to_user`. The answer is validated; an invalid one is
 * retried with feedback (`maxRetries`), then the `fallback` applies. After an
 * agent replies the model decides again: answer the user, or call another
 * agent. Candidates, choice, reason, retries and token usage are recorded on
 * the decision span, and each model call is a generation span under it.
 *
 * @example
 * ```ts
 * const router = new LlmOrchestrator({
 *   agents: app.agentMetas,
 *   model: 'gpt-4o-mini',
 *   apiKey: process.env.OPENAI_API_KEY,
 *   fallback: { message: 'Sorry, I could not work out how to help with that.' },
 * });
 * await app.start(router, { port: 3000 });
 * ```
 */
export class LlmOrchestrator extends AbstractOrchestrator {
  readonly model: string;
  readonly fallback?: LlmRouterFallback;
  readonly #client: () => Promise<ChatClient>;
  readonly #instructions: string;
  readonly #historyWindow: number;
  readonly #maxRetries: number;
  readonly #temperature?: number;
  readonly #routes: CandidateCache<RouteEntry>;

  constructor({
    name = 'llm',
    description,
    agents,
    model,
    client,
    apiKey,
    baseURL,
    instructions = DEFAULT_ROUTER_INSTRUCTIONS,
    historyWindow = 12,
    fallback,
    maxRetries = 1,
    temperature,
  }: LlmOrchestratorOptions) {
    super({ name, description, agents });
    checkOptions(name, { model, historyWindow, maxRetries, fallback, agents: this.agents });
    this.model = model;
    this.fallback = fallback;
    this.#client = clientResolver(`LlmOrchestrator '${name}'`, { client, apiKey, baseURL });
    this.#instructions = instructions;
    this.#historyWindow = historyWindow;
    this.#maxRetries = maxRetries;
    this.#temperature = temperature;
    this.#routes = new CandidateCache((names) => {
      const candidates = names.flatMap(
        (candidate) => this.agents.find((agent) => agent.name === candidate) ?? [],
      );
      return { ...routeSchema(names), system: routerSystemPrompt(this.#instructions, candidates) };
    });
  }

  protected async handleMessage(conversation: Conversation): Promise<Decision> {
    const span = trace.getActiveSpan();
    const route = this.#routes.get(conversation.agents, (agent) => agent.name);
    if (span?.isRecording()) span.setAttribute('switchboard.route.candidates', [...route.names]);
    // Outside the try: a missing `openai` package is a configuration error, not a case for the fallback.
    const client = await this.#client();
    let answer: StructuredAnswer<RouteAnswer>;
    try {
      answer = await askForStructuredAnswer({
        client,
        model: this.model,
        temperature: this.#temperature,
        messages: this.routingMessages(conversation, route.system),
        responseFormat: route.responseFormat,
        check: route.check,
        maxRetries: this.#maxRetries,
      });
    } catch (error) {
      if (this.fallback === undefined || RequestContext.tryCurrent()?.signal.aborted) throw error;
      const detail = `the model could not be reached: ${error instanceof Error ? error.message : String(error)}`;
      return this.fallbackDecision(conversation, detail);
    }
    recordUsage(conversation, answer.usage);
    span?.setAttributes({
      'switchboard.route.retries': answer.retries,
      // Not gen_ai.usage.*: Langfuse would add these to the generations' own usage and count the tokens twice.
      'switchboard.route.usage.input_tokens': answer.usage.inputTokens,
      'switchboard.route.usage.output_tokens': answer.usage.outputTokens,
    });
    if (answer.problems.length > 0) span?.setAttribute('switchboard.route.problems', answer.problems);
    const { value } = answer;
    if (value === undefined) {
      const attempts = answer.retries + 1;
      return this.fallbackDecision(
        conversation,
        `no valid routing answer after ${attempts} attempt${attempts > 1 ? 's' : ''}: ${answer.problems.at(-1) ?? 'no answer'}`,
      );
    }
    span?.setAttribute('switchboard.route.choice', value.agent);
    if (value.reason) span?.setAttribute('switchboard.route.reason', value.reason);
    const explanation = { thought: value.thought, reason: value.reason };
    return value.agent === ROUTE_TO_USER
      ? routeToUser(value.message, explanation)
      : toolCall(value.agent, value.message, explanation);
  }

  /**
   * The messages of one routing request: the system prompt (candidates and
   * rules), then the recent conversation. Override to add context.
   */
  protected routingMessages(conversation: Conversation, system: string): ChatCompletionMessageParam[] {
    return [{ role: 'system', content: system }, ...routerConversation(conversation, this.#historyWindow)];
  }

  /**
   * The decision when the model gave none: the configured fallback, or an
   * `ErrorMessage` naming the problem (the user sees the runtime's safe message).
   */
  protected fallbackDecision(conversation: Conversation, problem: string): Decision {
    const { fallback } = this;
    const span = trace.getActiveSpan();
    span?.setAttribute('switchboard.route.fallback', true);
    const reason = 'fallback: the model gave no valid decision';
    if (fallback && 'message' in fallback) {
      span?.setAttribute('switchboard.route.choice', ROUTE_TO_USER);
      return routeToUser(fallback.message, { reason, thought: problem });
    }
    if (fallback && 'agent' in fallback) {
      const results = latestToolResults(conversation);
      if (results.length > 0) {
        span?.setAttribute('switchboard.route.choice', ROUTE_TO_USER);
        const replies = results.map((result) =>
          result.status === 'ok'
            ? result.content
            : `Sorry, the ${result.name} agent could not answer. Please try again.`,
        );
        return routeToUser(replies.join('\n\n'), {
          reason,
          thought: `${problem}; returning the agents' replies`,
        });
      }
      if (conversation.agents.some((agent) => agent.name === fallback.agent)) {
        span?.setAttribute('switchboard.route.choice', fallback.agent);
        return toolCall(fallback.agent, currentUserMessage(conversation).content, {
          reason,
          thought: problem,
        });
      }
    }
    return { error: new OrchestratorError({ orchestrator: this.name, cause: new Error(problem) }) };
  }
}
