import {
  AbstractOrchestrator,
  type AgentMeta,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  toolCall,
  turnMessages,
} from '@switchboard/core';
import { isCriticFeedback, perceptionOf } from '@switchboard/orchestrators';

/** What the desk says when a stage failed: never the agent's error text. */
const FAILED: Record<string, string> = {
  perception: 'I can only research questions of 3 to 5 000 characters, asked plainly. Please rephrase.',
  research: 'Neither the web nor the library could be searched just now. Please try again in a moment.',
  drafts: 'I found sources but could not write an answer from them. Please try again.',
};

/**
 * The research desk's own router, a pipeline of three stages, each an agent:
 * `perception` reads the request (its snapshot decides whether to go on),
 * `research` finds sources (a fallback chain: the web, then the library),
 * `drafts` writes the answer from them (a best-of of two writers, judged by
 * a model). An answer the critic sends back is drafted again from the same
 * sources. Where the turn stands is read from its latest reply, so the desk
 * keeps nothing between decisions.
 */
export class ResearchDesk extends AbstractOrchestrator {
  constructor({ agents }: { agents: readonly AgentMeta[] }) {
    super({ name: 'research-desk', description: 'Answers research questions with sources', agents });
  }

  protected handleMessage(conversation: Conversation): Decision {
    const question = currentUserMessage(conversation).content;
    const [reply] = latestToolResults(conversation);
    if (!reply) return toolCall('perception', question, { reason: 'read the request before acting on it' });
    if (isCriticFeedback(reply)) {
      // The critic sent the answer back: draft again from the same sources, with its issues.
      const found = turnMessages(conversation).findLast(
        (message) => message.role === 'tool' && message.name === 'research' && message.status === 'ok',
      );
      if (!found)
        return routeToUser('I could not find a well-supported answer. Please rephrase your question.');
      const issues = reply.metadata.issues.join('; ');
      return toolCall('drafts', `Question: ${question}\n\n${found.content}\n\nA reviewer found: ${issues}`, {
        reason: 'the critic sent the answer back',
      });
    }
    if (reply.status === 'error') return routeToUser(FAILED[reply.name] ?? 'Something went wrong.');
    switch (reply.name) {
      case 'perception': {
        const snapshot = perceptionOf(reply);
        if (!snapshot || snapshot.confidence < 0.5)
          return routeToUser('Could you say a little more about what you want to know?');
        return toolCall('research', question, {
          reason: `intent: ${snapshot.intent}; sub-goals: ${snapshot.subGoals.join('; ') || 'none'}`,
        });
      }
      case 'research':
        return toolCall('drafts', `Question: ${question}\n\n${reply.content}`, {
          reason: 'write the answer from the sources found',
        });
      default:
        return routeToUser(reply.content, { reason: 'the judged best draft' });
    }
  }
}
