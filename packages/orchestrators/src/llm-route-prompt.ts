import { type AgentMeta, type Conversation, type MessageItem, ROUTE_TO_USER } from '@switchboard/core';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** The router's role, used when no `instructions` are given. */
export const DEFAULT_ROUTER_INSTRUCTIONS =
  "You are the router of a multi-agent assistant. You decide who handles each step of the user's request.";

/**
 * The system prompt of a routing decision: the role, the candidate agents
 * (names and descriptions only) and the rules of the answer.
 *
 * @example
 * ```ts
 * const system = routerSystemPrompt(DEFAULT_ROUTER_INSTRUCTIONS, conversation.agents);
 * ```
 */
export function routerSystemPrompt(instructions: string, agents: readonly AgentMeta[]): string {
  const list = agents
    .map((agent) => `- ${agent.name}: ${agent.description.replace(/\s+/g, ' ').trim()}`)
    .join('\n');
  return `${instructions}

Decide the next step of the conversation. Either call one of the agents below with a task (agent = its name, message = the task, written so that the agent can act on it without the conversation), or answer the user (agent = "${ROUTE_TO_USER}", message = exactly what the user will read).

Agents:
${list || '(none: answer the user)'}

Rules:
- When an agent's reply answers the request, choose "${ROUTE_TO_USER}" and write the final answer from that reply.
- When an agent failed, try another suitable agent, or tell the user it could not be done right now. Never reveal internal errors.
- When the request is unclear or no agent fits, ask the user a short clarifying question with "${ROUTE_TO_USER}".
- Only the agents listed above exist.

Answer with a JSON object with the fields thought, agent, message and reason.`;
}

function render(message: MessageItem, current: boolean): ChatCompletionMessageParam | undefined {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant':
      return { role: 'assistant', content: message.content };
    case 'tool':
      // Earlier turns' agent replies are summed up by the answer the user got.
      if (!current) return undefined;
      return {
        role: 'user',
        content:
          message.status === 'ok'
            ? `[Agent "${message.name}" replied]\n${message.content}`
            : `[Agent "${message.name}" failed; the error is not shown]`,
      };
  }
}

/**
 * The conversation as the router sees it: the last `historyWindow` messages
 * (never cutting into the current turn), agent replies of the current turn
 * as bracketed notes, and no error details of failed agents.
 *
 * @example
 * ```ts
 * const messages = [{ role: 'system', content: system }, ...routerConversation(conversation, 12)];
 * ```
 */
export function routerConversation(
  conversation: Conversation,
  historyWindow: number,
): ChatCompletionMessageParam[] {
  const { messages, turnStart } = conversation;
  const start = Math.min(turnStart, Math.max(0, messages.length - historyWindow));
  const rendered: ChatCompletionMessageParam[] = [];
  for (let index = start; index < messages.length; index++) {
    const message = messages[index];
    const item = message && render(message, index >= turnStart);
    if (item) rendered.push(item);
  }
  return rendered;
}
