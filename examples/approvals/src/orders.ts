/** One order of the (offline) order book. */
export interface Order {
  id: string;
  item: string;
  /** What the customer paid. */
  total: number;
  status: 'processing' | 'shipped' | 'delivered';
}

/** The orders the desk knows, so that the example runs anywhere without a database. */
export const ORDERS: Readonly<Record<string, Order>> = {
  '42': { id: '42', item: 'espresso machine', total: 320, status: 'delivered' },
  '7': { id: '7', item: 'milk frother', total: 45, status: 'shipped' },
  '19': { id: '19', item: 'grinder', total: 180, status: 'processing' },
};

/** The order with this id, if there is one. */
export function findOrder(orderId: string): Order | undefined {
  return Object.hasOwn(ORDERS, orderId) ? ORDERS[orderId] : undefined;
}

/** An amount of money as the desk writes it: `250.00`. */
export function formatAmount(amount: number): string {
  return amount.toFixed(2);
}
