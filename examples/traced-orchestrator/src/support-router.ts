import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  RequestContext,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import { observe } from '@switchboard/runtime';
import type { Tier } from './agents.js';
import { type Customer, findCustomer } from './customers.js';
import { scoreAgents } from './score-agents.js';

/**
 * A support router whose own steps show up in the trace. Each routing
 * decision is a `route <hop>` span; inside it, the `@observe`-decorated
 * methods become child spans:
 *
 * - `select-agent` records the message (input) and the chosen agent (output),
 *   with the `score-agents` helper span nested under it;
 * - `check-entitlement` receives a customer record with personal data, so
 *   its input is not captured (`captureInput: false`); only the tier is.
 */
export class SupportRouter extends AbstractOrchestrator {
  /** Picks the agent whose keywords match best, or `undefined` when none match. */
  @observe({ name: 'select-agent' })
  protected selectAgent(text: string): string | undefined {
    return scoreAgents(text, this.agents).best;
  }

  /** Decides the service tier from the customer record (async, as a real CRM call would be). */
  @observe({ name: 'check-entitlement', captureInput: false })
  protected async checkEntitlement(customer: Customer | undefined): Promise<Tier> {
    await Promise.resolve();
    if (!customer) return 'standard';
    return customer.plan === 'enterprise' || customer.openTickets >= 3 ? 'priority' : 'standard';
  }

  protected async handleMessage(conversation: Conversation): Promise<Decision> {
    const [reply] = latestToolResults(conversation);
    if (reply) {
      if (reply.status === 'ok') return routeToUser(reply.content, { reason: `${reply.name} answered` });
      return routeToUser('Sorry, support is unavailable right now. Please try again shortly.', {
        reason: `${reply.name} failed`,
      });
    }
    const text = currentUserMessage(conversation).content;
    const agent = this.selectAgent(text);
    if (!agent) {
      return routeToUser(
        'I can help with billing (refunds, invoices, payments) or technical problems (log-in, errors, crashes). What do you need?',
        {
          reason: 'no keyword matched',
        },
      );
    }
    const tier = await this.checkEntitlement(findCustomer(RequestContext.current().userId));
    return toolCall(agent, text, { input: { tier }, reason: `best keyword match; ${tier} customer` });
  }
}
