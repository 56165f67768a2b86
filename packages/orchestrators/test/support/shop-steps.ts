import {
  AbstractOrchestrator,
  type AgentMeta,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  type ToolMessage,
  toolCall,
} from '@switchboard/core';
import type { StepRule } from '../../src/index.js';

/** The agents of a small shop. */
export const SHOP: AgentMeta[] = ['catalog', 'cart', 'address', 'payment', 'confirm', 'support'].map(
  (name) => ({
    name,
    description: `The ${name} agent`,
  }),
);

/** A shop: browse freely, then a checkout that must go address → payment → confirm, then only support. */
export const SHOP_STEPS: StepRule[] = [
  {
    name: 'after-sale',
    description: 'The order is placed: only support',
    conditions: [{ type: 'sequence_match', sequence: ['address', 'payment', 'confirm'] }],
    allowed: ['support'],
  },
  {
    name: 'checkout',
    description: 'Address, payment and confirmation, in this order',
    conditions: [
      { type: 'sequence_match', sequence: ['cart'], description: 'something was just put in the cart' },
    ],
    sequence: ['address', 'payment', 'confirm'],
    allowed: ['cart', 'support'],
  },
  {
    name: 'browse',
    description: 'Looking around',
    isDefault: true,
    denied: ['address', 'payment', 'confirm'],
  },
];

/** The agent a message like `cart: red shoes` names. */
export function named(conversation: Conversation): { agent: string; task: string } {
  const text = currentUserMessage(conversation).content;
  const [agent = '', task = text] = text.split(/:\s*/, 2);
  return { agent, task };
}

/** Answers the user with the agents' replies. */
export function answer(results: readonly ToolMessage[]): Decision {
  return routeToUser(results.map((result) => result.content).join('\n'));
}

/**
 * Calls the agent the message names when it is a candidate, else the first
 * candidate; then answers with the reply. Records the candidates of each decision.
 */
export class ObedientRouter extends AbstractOrchestrator {
  readonly candidates: string[][] = [];
  constructor(agents: readonly AgentMeta[]) {
    super({ name: 'shop', agents });
  }
  protected handleMessage(conversation: Conversation): Decision {
    this.candidates.push(conversation.agents.map((agent) => agent.name));
    const results = latestToolResults(conversation);
    if (results.length > 0) return answer(results);
    const { agent, task } = named(conversation);
    const pick = conversation.agents.find((candidate) => candidate.name === agent) ?? conversation.agents[0];
    return pick ? toolCall(pick.name, task) : routeToUser('Nothing can be done right now.');
  }
}
