import {
  type AgentLike,
  type AgentMeta,
  ConfigurationError,
  type ConfigView,
  type Conversation,
  currentUserMessage,
  type Decision,
  RequestContext,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import type { KeywordsItem } from '@switchboard/runtime';
import { clarifyingQuestion } from './clarification.js';
import { describeScores, KeywordMatcher, type MatchScore } from './keyword-matcher.js';
import { RoutingOrchestrator } from './routing-orchestrator.js';

/** Options of {@link KeywordOrchestrator}. */
export interface KeywordOrchestratorOptions {
  /** Default `keyword`. */
  name?: string;
  description?: string;
  /**
   * The agents to route to, in priority order: on equal scores the earlier
   * agent wins. The agents themselves (`defineAgent`, `llmAgent`, …) or their
   * metadata (`app.agentMetas`).
   */
  agents: readonly AgentLike[];
  /**
   * Keywords per agent name. An entry replaces that agent's own
   * `AgentMeta.keywords`; agents without an entry keep theirs. Naming an
   * agent that is not in `agents` fails at construction.
   */
  keywords?: Readonly<Record<string, readonly string[]>>;
  /** The agent that gets messages no keyword matched. Without one, the user is asked to clarify. */
  fallbackAgent?: string;
}

/**
 * Routes each user message to the agent whose keywords it matches best, then
 * returns that agent's answer to the user.
 *
 * Matching is case-insensitive, by whole words and phrases, and tolerant of
 * plurals and `-ing` / `-ed` forms (`convert` matches "converting" but not
 * "conversion"). Each distinct keyword found scores its number of words (¾
 * of that when found only in an inflected form), so phrases outweigh single
 * words and `time` beats `times` on "time"; ties go to the agent declared first. With no
 * match the message goes to `fallbackAgent`, or the user gets a clarifying
 * question listing what the agents do. Keywords are compiled once, at
 * construction, and once per change of the live configuration, where an
 * agent's `keywords` item replaces its keywords (see `docs/guides/configuration.md`).
 *
 * @example
 * ```ts
 * const router = new KeywordOrchestrator({
 *   agents: [calculator, clock, help],
 *   keywords: { clock: ['time', 'what time', 'date', 'today'] },
 *   fallbackAgent: 'help',
 * });
 * await app.start(router);
 * ```
 */
export class KeywordOrchestrator extends RoutingOrchestrator {
  /** The agent that gets unmatched messages, if any. */
  readonly fallbackAgent?: string;
  readonly #matcher: KeywordMatcher;
  readonly #keywords: Readonly<Record<string, readonly string[]>>;
  /** The matcher of each live configuration with `keywords` items, compiled once per configuration. */
  readonly #configured = new WeakMap<ConfigView, KeywordMatcher>();

  constructor({
    name = 'keyword',
    description,
    agents,
    keywords = {},
    fallbackAgent,
  }: KeywordOrchestratorOptions) {
    super({ name, description, agents });
    const known = this.agents.map((agent) => agent.name);
    const unknown = Object.keys(keywords).filter((agent) => !known.includes(agent));
    if (unknown.length > 0) {
      throw new ConfigurationError({
        message: `Keyword map of orchestrator '${name}' names unknown agent(s) ${unknown.map((a) => `'${a}'`).join(', ')}; known agents: ${known.join(', ') || '(none)'}`,
      });
    }
    for (const [agent, list] of Object.entries(keywords)) {
      if (!Array.isArray(list) || !list.every((keyword) => typeof keyword === 'string')) {
        throw new ConfigurationError({ message: `Keywords of agent '${agent}' must be an array of strings` });
      }
    }
    if (fallbackAgent !== undefined && !known.includes(fallbackAgent)) {
      throw new ConfigurationError({
        message: `Fallback agent '${fallbackAgent}' of orchestrator '${name}' is not one of its agents: ${known.join(', ') || '(none)'}`,
      });
    }
    this.fallbackAgent = fallbackAgent;
    this.#keywords = keywords;
    this.#matcher = this.#compile(() => undefined);
  }

  #compile(configured: (agent: string) => readonly string[] | undefined): KeywordMatcher {
    return new KeywordMatcher(
      this.agents.map((agent) => ({
        name: agent.name,
        keywords: configured(agent.name) ?? this.#keywords[agent.name] ?? agent.keywords ?? [],
      })),
    );
  }

  /**
   * The matcher of the turn's live configuration: an agent's `keywords`
   * item replaces its keywords (the constructor's, else its own).
   */
  #matcherNow(): KeywordMatcher {
    const config = RequestContext.tryCurrent()?.config;
    const items = config?.items('keywords');
    if (!config || !items || items.size === 0) return this.#matcher;
    let matcher = this.#configured.get(config);
    if (!matcher) {
      try {
        matcher = this.#compile((agent) => (items.get(agent) as KeywordsItem | undefined)?.keywords);
      } catch {
        // A keyword without a word in it cannot match anything: the router keeps to its own keywords.
        matcher = this.#matcher;
      }
      this.#configured.set(config, matcher);
    }
    return matcher;
  }

  /** The agents whose keywords match `text`, best first (ties in declared order). */
  score(text: string, candidates?: readonly AgentMeta[]): MatchScore[] {
    // The engine passes this.agents itself unless a turn narrows the candidates: no set to build then.
    const narrowed = candidates && candidates !== this.agents;
    return this.#matcherNow().score(
      text,
      narrowed ? new Set(candidates.map((agent) => agent.name)) : undefined,
    );
  }

  protected selectAgent(conversation: Conversation): Decision | Promise<Decision> {
    const message = currentUserMessage(conversation).content;
    const scores = this.score(message, conversation.agents);
    const best = scores[0];
    if (best) {
      return toolCall(best.name, message, {
        reason: `matched keywords: ${best.matched.join(', ')}`,
        thought: `Keyword scores: ${describeScores(scores)}; chose ${best.name}`,
      });
    }
    const fallback = this.fallbackAgent;
    if (fallback !== undefined && conversation.agents.some((agent) => agent.name === fallback)) {
      return toolCall(fallback, message, {
        reason: 'no keyword matched; fallback agent',
        thought: `No agent's keywords matched the message, so it goes to the fallback agent ${fallback}`,
      });
    }
    return this.clarify(conversation);
  }

  /** Asks the user what they need, naming what the candidate agents do. Override to change the wording. */
  protected clarify(conversation: Conversation): Decision | Promise<Decision> {
    return routeToUser(clarifyingQuestion(conversation.agents), {
      reason: 'no keyword matched',
      thought:
        "No agent's keywords matched the message and there is no usable fallback agent, so ask the user",
    });
  }
}
