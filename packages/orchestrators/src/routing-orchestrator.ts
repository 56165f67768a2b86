import {
  AbstractOrchestrator,
  type Conversation,
  type Decision,
  latestToolResults,
  routeToUser,
  type ToolMessage,
} from '@switchboard/core';

/**
 * The base of the rule-based routers: on the first decision of a turn it
 * asks {@link selectAgent} where the user's message goes; once agents have
 * replied it calls {@link afterAgent}, which by default hands their answer to
 * the user. Override `afterAgent` to chain agents instead.
 *
 * @example
 * ```ts
 * class WriteThenTranslate extends KeywordOrchestrator {
 *   protected override afterAgent(conversation: Conversation, results: readonly ToolMessage[]) {
 *     const reply = results.at(-1);
 *     if (reply?.name === 'writer' && reply.status === 'ok') return toolCall('translator', reply.content);
 *     return super.afterAgent(conversation, reply ? [reply] : results);
 *   }
 * }
 * ```
 */
export abstract class RoutingOrchestrator extends AbstractOrchestrator {
  readonly #textsByAgent = new Map<string, { answered: string; failed: string; thought: string }>();

  /** Routes the user's message, or answers with the agents' replies when there are some. */
  protected handleMessage(conversation: Conversation): Decision | Promise<Decision> {
    const results = latestToolResults(conversation);
    return results.length > 0 ? this.afterAgent(conversation, results) : this.selectAgent(conversation);
  }

  /** Decides where the current user message goes; only agents in `conversation.agents` may be chosen. */
  protected abstract selectAgent(conversation: Conversation): Decision | Promise<Decision>;

  /**
   * Called with the agent replies at the end of the turn so far, in order
   * (`latestToolResults`): the replies of a fan-out, and after a chain A → B
   * both A's and B's, B's last. The default answers the user with all of
   * them; a failed agent is reported with {@link agentFailureMessage}, never
   * with its error text.
   */
  protected afterAgent(
    _conversation: Conversation,
    results: readonly ToolMessage[],
  ): Decision | Promise<Decision> {
    const [only] = results;
    if (results.length === 1 && only) {
      const texts = this.#answerTexts(only.name);
      return routeToUser(this.#replyText(only), {
        reason: only.status === 'error' ? texts.failed : texts.answered,
        thought: texts.thought,
      });
    }
    const answer = results.map((result) => this.#replyText(result)).join('\n\n');
    const failed = results.filter((result) => result.status === 'error').map((result) => result.name);
    const agents = results.map((result) => result.name).join(', ');
    return routeToUser(answer, {
      reason: failed.length ? `agent failed: ${failed.join(', ')}` : `answered by ${agents}`,
      thought: `Returning the reply of ${agents} to the user`,
    });
  }

  /** What the user sees when an agent failed or timed out. Its error detail stays in the trace. */
  protected agentFailureMessage(result: ToolMessage): string {
    return `Sorry, the ${result.name} agent ran into a problem and could not answer. Please try again in a moment.`;
  }

  /** The texts of a single agent's answer, built once per agent rather than on every turn. */
  #answerTexts(agent: string): { answered: string; failed: string; thought: string } {
    let texts = this.#textsByAgent.get(agent);
    if (texts === undefined) {
      texts = {
        answered: `answered by ${agent}`,
        failed: `agent failed: ${agent}`,
        thought: `Returning the reply of ${agent} to the user`,
      };
      // Agent names come from this orchestrator's own list, so the map stays that small.
      if (this.agents.some((meta) => meta.name === agent)) this.#textsByAgent.set(agent, texts);
    }
    return texts;
  }

  #replyText(result: ToolMessage): string {
    if (result.status === 'error') return this.agentFailureMessage(result);
    return result.content.trim() ? result.content : `The ${result.name} agent did not return an answer.`;
  }
}
