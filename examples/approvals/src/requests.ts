/** What a customer's message asks the desk for. */
export type SupportRequest =
  | { kind: 'refund'; orderId: string; amount: number }
  | { kind: 'order'; orderId: string }
  | { kind: 'other' };

const REFUND = /\brefund\s+(\d+(?:\.\d{1,2})?)\s+(?:on|for)\s+order\s+#?(\d+)\b/i;
const ORDER = /\border\s+#?(\d+)\b/i;

/**
 * Reads a request from a message with two patterns: a refund ("refund 250 on
 * order 42") or a question about an order ("where is order 7?").
 *
 * @example
 * ```ts
 * parseRequest('refund 250 on order 42'); // { kind: 'refund', orderId: '42', amount: 250 }
 * parseRequest('status of order #7'); // { kind: 'order', orderId: '7' }
 * ```
 */
export function parseRequest(text: string): SupportRequest {
  const refund = REFUND.exec(text);
  if (refund?.[1] && refund[2]) return { kind: 'refund', orderId: refund[2], amount: Number(refund[1]) };
  const order = ORDER.exec(text);
  if (order?.[1]) return { kind: 'order', orderId: order[1] };
  return { kind: 'other' };
}
