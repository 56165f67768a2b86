import { defineAgent } from '@switchboard/runtime';
import { z } from 'zod';
import { findOrder, formatAmount } from './orders.js';
import type { Payments } from './payments.js';

/** The structured input the orchestrator passes to `refunds`. */
export const RefundInput = z.object({ orderId: z.string().min(1), amount: z.number().positive() });

/** Refunds above this amount wait for a person's approval. */
export const APPROVAL_LIMIT = 100;

/** Refunds `input.amount` on `input.orderId` through `payments`; refunds over 100 wait for approval. */
export function refundsAgent(payments: Payments) {
  return defineAgent({
    name: 'refunds',
    description: 'Refunds an amount on an order',
    requiresApproval: (call) => {
      const { amount } = RefundInput.parse(call.input);
      if (amount <= APPROVAL_LIMIT) return false;
      return { required: true, risk: 'high', reason: `refund of ${amount} is over ${APPROVAL_LIMIT}` };
    },
    async run(_message, { toolCall, idempotencyKey }) {
      const { orderId, amount } = RefundInput.parse(toolCall.input);
      const order = findOrder(orderId);
      if (!order) return `There is no order ${orderId}.`;
      if (amount > order.total) {
        return `Order ${orderId} was ${formatAmount(order.total)}: I cannot refund ${formatAmount(amount)}.`;
      }
      // The same key for every run of this call: if it runs again (an approved refund whose replica died is
      // run again on recovery, at least once), nobody is paid twice.
      await payments.refund({ idempotencyKey, orderId, amount });
      return `Refunded ${formatAmount(amount)} on order ${orderId} (${order.item}).`;
    },
  });
}

/** Looks up the order whose id the orchestrator passes as `input.orderId`. */
export const ordersAgent = defineAgent({
  name: 'orders',
  description: 'Looks up an order: item, total and status',
  run(_message, { toolCall }) {
    const { orderId } = z.object({ orderId: z.string().min(1) }).parse(toolCall.input);
    const order = findOrder(orderId);
    if (!order) return `There is no order ${orderId}.`;
    return `Order ${order.id}: ${order.item}, ${formatAmount(order.total)}, ${order.status}.`;
  },
});
