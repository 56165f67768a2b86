import { defineAgent } from '@switchboard/runtime';
import { z } from 'zod';

/** The service level the router grants a customer. */
export const TierSchema = z.enum(['priority', 'standard']);

/** `priority` or `standard`. */
export type Tier = z.infer<typeof TierSchema>;

const InputSchema = z.object({ tier: TierSchema.default('standard') });

function promise(tier: Tier): string {
  return tier === 'priority'
    ? 'a specialist will reply within the hour (priority queue)'
    : 'we will reply within two working days';
}

/** Opens a billing ticket; the router passes the customer's tier as `input.tier`. */
export const billing = defineAgent({
  name: 'billing',
  description: 'Refunds, invoices, charges and payments',
  keywords: ['refund', 'invoice', 'charge', 'charged', 'payment', 'bill', 'billing'],
  run(_message, { toolCall }) {
    const { tier } = InputSchema.parse(toolCall.input ?? {});
    return `Billing: I opened a ticket about your payment; ${promise(tier)}.`;
  },
});

/** Opens a technical ticket; the router passes the customer's tier as `input.tier`. */
export const techSupport = defineAgent({
  name: 'tech-support',
  description: 'Log-in problems, errors and crashes',
  keywords: ['login', 'log', 'password', 'error', 'crash', 'crashes', 'bug'],
  run(_message, { toolCall }) {
    const { tier } = InputSchema.parse(toolCall.input ?? {});
    return `Tech support: I opened a ticket about the problem; ${promise(tier)}.`;
  },
});
