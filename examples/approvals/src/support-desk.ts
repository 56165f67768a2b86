import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import { parseRequest } from './requests.js';

const HELP = 'I can refund an order ("refund 30 on order 7") or look one up ("where is order 42?").';

/**
 * Routes refund requests to `refunds` with `{ orderId, amount }` as input,
 * order questions to `orders`, and hands the agent's reply to the user. A
 * refund a person rejected reaches it as an error reply, which it explains.
 */
export class SupportDesk extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation): Decision {
    const [reply] = latestToolResults(conversation);
    if (reply) return answerWith(reply);

    const text = currentUserMessage(conversation).content;
    const request = parseRequest(text);
    switch (request.kind) {
      case 'refund': {
        const { orderId, amount } = request;
        return toolCall('refunds', text, {
          input: { orderId, amount },
          reason: 'the customer asked for a refund',
        });
      }
      case 'order':
        return toolCall('orders', text, {
          input: { orderId: request.orderId },
          reason: 'a question about an order',
        });
      default:
        return routeToUser(HELP, { reason: 'not a refund or an order question' });
    }
  }
}

/** What the user reads once the agent replied, was refused, or failed. */
export function answerWith(reply: ToolMessage): Decision {
  if (reply.status === 'ok') return routeToUser(reply.content, { reason: `${reply.name} answered` });
  switch (reply.metadata?.errorCode) {
    case 'approval_rejected':
      return routeToUser(`The refund was not made (${reply.content}).`, { reason: 'a person rejected it' });
    case 'approval_expired':
      return routeToUser('The refund was not made: nobody approved it in time.', {
        reason: 'approval expired',
      });
    case 'approval_withdrawn':
      return routeToUser(`The refund was not made (${reply.content}).`, { reason: 'the request moved on' });
    default:
      return routeToUser(`Sorry, the ${reply.name} agent could not answer right now.`, {
        reason: `${reply.name} failed`,
      });
  }
}
