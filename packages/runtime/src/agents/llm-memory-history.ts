import type { Conversation, MessageItem } from '@switchboard/core';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { estimateMessageTokens } from './llm-token-estimate.js';

/** One message of the conversation as a model sees it, verbatim or in a summary. */
export interface HistoryItem {
  /** The id of the stored message. */
  id: string;
  /** Its index in `conversation.messages`. */
  index: number;
  /** Whether it belongs to the current turn. */
  current: boolean;
  /** As a chat message, when sent verbatim. */
  chat: ChatCompletionMessageParam;
  /** As a line of a transcript, when summarised. */
  line: string;
  /** The estimated tokens of `chat`. */
  tokens: number;
}

function render(message: MessageItem, current: boolean): Pick<HistoryItem, 'chat' | 'line'> | undefined {
  switch (message.role) {
    case 'user':
      return { chat: { role: 'user', content: message.content }, line: `User: ${message.content}` };
    case 'assistant':
      return {
        chat: { role: 'assistant', content: message.content },
        line: `Assistant: ${message.content}`,
      };
    case 'tool': {
      // An earlier turn's agent replies are summed up by the answer the user got.
      if (!current) return undefined;
      // A note from the orchestrator's side, not the model's own words, so that it does not imitate the brackets.
      const content =
        message.status === 'ok'
          ? `[Agent "${message.name}" replied]\n${message.content}`
          : `[Agent "${message.name}" failed; the error is not shown]`;
      return { chat: { role: 'user', content }, line: content };
    }
  }
}

/**
 * The conversation as an LLM agent sees it, oldest first: the user's messages
 * as `user` messages, the answers the user got as `assistant` messages, and
 * the current turn's agent replies as bracketed `user` notes
 * (`[Agent "name" replied]`; a failed one without its error). Earlier turns'
 * agent replies are left out: the answer the user got sums them up. When
 * `task` repeats the current turn's user message (an orchestrator passing
 * the message on), that message is left out too: the task carries it.
 */
export function historyItems(conversation: Conversation, task?: string): HistoryItem[] {
  const { messages, turnStart } = conversation;
  const items: HistoryItem[] = [];
  messages.forEach((message, index) => {
    if (index === turnStart && message.role === 'user' && message.content === task) return;
    const rendered = render(message, index >= turnStart);
    if (!rendered) return;
    const current = index >= turnStart;
    items.push({ id: message.id, index, current, ...rendered, tokens: estimateMessageTokens(rendered.chat) });
  });
  return items;
}
