import type { AgentMeta } from '@switchboard/core';
import { END, stateGraph } from '@switchboard/orchestrators';
import { z } from 'zod';
import type { SupportServices } from './services.js';

/** Refunds above this many euros wait for a person's approval. */
export const REFUND_APPROVAL_THRESHOLD = 100;

/** The ticket the graph works on: its zod schema, checked after every node. */
export const Ticket = z.object({
  request: z.string().min(1),
  customer: z.string().default('guest'),
  category: z.enum(['billing', 'technical']).optional(),
  refund: z.number().nonnegative().default(0),
  plan: z.string().optional(),
  articles: z.array(z.string()).default([]),
  outcome: z.string().optional(),
  reply: z.string().optional(),
});

/** The ticket's state. */
export type TicketState = z.infer<typeof Ticket>;

/**
 * The support desk as a graph: classify (a model) → billing or technical →
 * look the account and the knowledge base up at once → review (pays a
 * refund; over the threshold a person approves first) → respond (a model
 * writes the reply).
 */
export function supportGraph(services: SupportServices, agents: readonly AgentMeta[]) {
  return stateGraph({
    name: 'support',
    description: 'A support desk that classifies, looks up, reviews refunds and replies',
    state: Ticket,
    reducers: { articles: 'append' },
    input: (message) => ({ request: message, customer: /\bacme\b/i.test(message) ? 'acme' : 'guest' }),
  })
    .agentNode('classify', {
      agent: 'classifier',
      task: (ticket) => ticket.request,
      update: (reply) => ({ category: /billing/i.test(reply) ? 'billing' : 'technical' }),
    })
    .node('billing', (ticket) => ({ refund: Number(/(\d+)\s*(?:eur|€)/i.exec(ticket.request)?.[1] ?? 0) }), {
      description: 'Reads the refund asked for',
    })
    .node('technical', () => ({ refund: 0 }), { description: 'A technical question: no refund' })
    .node('account', async (ticket) => ({ plan: (await services.account(ticket.customer)).plan }), {
      description: 'Looks the customer up in the CRM',
    })
    .node('knowledge', async (ticket) => ({ articles: await services.articles(ticket.request) }), {
      description: 'Searches the knowledge base',
    })
    .node(
      'review',
      async (ticket, context) =>
        ticket.refund > 0
          ? { outcome: await services.refund(ticket.refund, context.idempotencyKey) }
          : { outcome: 'no refund needed' },
      {
        description: `Pays the refund; over ${REFUND_APPROVAL_THRESHOLD} EUR a person approves first`,
        task: (ticket) =>
          ticket.refund > 0 ? `refund ${ticket.refund} EUR to ${ticket.customer}` : 'no refund',
        approval: (ticket) =>
          ticket.refund > REFUND_APPROVAL_THRESHOLD
            ? `a refund of ${ticket.refund} EUR is over ${REFUND_APPROVAL_THRESHOLD} EUR`
            : false,
        onError: (_ticket, failure) => ({
          outcome: failure.rejected ? 'refund declined by a reviewer' : 'refund failed',
        }),
      },
    )
    .agentNode('respond', {
      agent: 'writer',
      task: (ticket) =>
        [
          `Request: ${ticket.request}`,
          `Category: ${ticket.category}`,
          `Plan: ${ticket.plan ?? 'unknown'}`,
          `Articles: ${ticket.articles.join('; ') || 'none'}`,
          `Outcome: ${ticket.outcome ?? 'none'}`,
        ].join('\n'),
      into: 'reply',
    })
    .entry('classify')
    .conditionalEdge('classify', (ticket) => (ticket.category === 'billing' ? 'billing' : 'technical'), [
      'billing',
      'technical',
    ])
    .edge('billing', ['account', 'knowledge'])
    .edge('technical', ['account', 'knowledge'])
    .edge('account', 'review')
    .edge('knowledge', 'review')
    .edge('review', 'respond')
    .edge('respond', END)
    .respond((ticket) => ticket.reply ?? ticket.outcome ?? 'Done.')
    .compile({ agents });
}
