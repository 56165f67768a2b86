import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';

/** Sends every message to its only agent and answers with `<status>: <reply>` (the error text on a failure). */
export class Relay extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(`${reply.status}: ${reply.content}`);
    return toolCall(conversation.agents[0]!.name, currentUserMessage(conversation).content);
  }
}
