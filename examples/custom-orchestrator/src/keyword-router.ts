import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';

/** Routes on the agents' keywords, then hands the agent's answer to the user. */
export class KeywordRouter extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(reply.content, { reason: `${reply.name} answered` });

    const text = currentUserMessage(conversation).content;
    // Whole words and phrases, any case, as the built-in router: 'hi' matches "Hi!", not "this".
    const words = ` ${(text.match(/[\p{L}\p{N}]+/gu) ?? []).join(' ')} `.toLowerCase();
    const matches = (keyword: string) => words.includes(` ${keyword.toLowerCase()} `);
    const agent = conversation.agents.find((a) => a.keywords?.some(matches));
    if (agent) return toolCall(agent.name, text, { reason: `matched a keyword of ${agent.name}` });

    const names = conversation.agents.map((a) => a.name).join(', ');
    return routeToUser(`I can route to: ${names}. What would you like?`);
  }
}
