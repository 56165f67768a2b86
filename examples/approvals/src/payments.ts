/** A refund the payment provider made. */
export interface Refund {
  /** The key the refund was requested with: a retry with the same key makes no second refund. */
  idempotencyKey: string;
  orderId: string;
  amount: number;
}

/**
 * The payment provider the `refunds` agent talks to. Like real payment APIs,
 * it takes an idempotency key: a request repeated with the same key returns
 * the first refund instead of paying twice.
 */
export interface Payments {
  refund(request: Refund): Promise<Refund>;
}

/**
 * An in-memory payment provider that records every request and every refund,
 * so that a test (or the demo's log) can see that a refund was made exactly once.
 */
export class InMemoryPayments implements Payments {
  /** Every refund request received, repeated ones included. */
  readonly requests: Refund[] = [];
  readonly #refunds = new Map<string, Refund>();

  /** The refunds made, one per idempotency key. */
  get refunds(): Refund[] {
    return [...this.#refunds.values()];
  }

  async refund(request: Refund): Promise<Refund> {
    this.requests.push({ ...request });
    const made = this.#refunds.get(request.idempotencyKey) ?? { ...request };
    this.#refunds.set(request.idempotencyKey, made);
    return made;
  }
}
