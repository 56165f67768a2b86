/** A customer account as the simulated CRM knows it. */
export interface Account {
  customer: string;
  plan: string;
  /** Refunds paid so far, in euros. */
  refunded: number;
}

/** One recorded call to a simulated service, with its times (ms, `performance.now()`). */
export interface ServiceCall {
  service: 'crm' | 'kb' | 'payments';
  startedAt: number;
  endedAt: number;
}

const ARTICLES: ReadonlyArray<{ words: RegExp; title: string }> = [
  { words: /refund|charge|invoice|money/i, title: 'KB-12 Refunds: how and when we pay them back' },
  { words: /login|password|sign in/i, title: 'KB-31 Signing in after a password reset' },
  { words: /crash|error|slow|bug/i, title: 'KB-48 When the app crashes on start' },
];

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The desk's back office, simulated in memory: a CRM, a knowledge base and
 * a payments service, each answering after `latencyMs`. Records every call
 * (so tests see that lookups overlap and that refunds are paid once).
 */
export class SupportServices {
  readonly calls: ServiceCall[] = [];
  /** Refunds paid, by idempotency key: a refund run again after a crash is not paid twice. */
  readonly payments = new Map<string, number>();
  readonly #latencyMs: number;

  constructor({ latencyMs = 25 }: { latencyMs?: number } = {}) {
    this.#latencyMs = latencyMs;
  }

  async #timed<T>(service: ServiceCall['service'], answer: () => T): Promise<T> {
    const startedAt = performance.now();
    await wait(this.#latencyMs);
    this.calls.push({ service, startedAt, endedAt: performance.now() });
    return answer();
  }

  /** The customer's account. */
  account(customer: string): Promise<Account> {
    return this.#timed('crm', () => ({
      customer,
      plan: customer === 'acme' ? 'business' : 'personal',
      refunded: 0,
    }));
  }

  /** The titles of the articles that match the request. */
  articles(request: string): Promise<string[]> {
    return this.#timed('kb', () =>
      ARTICLES.filter((article) => article.words.test(request)).map((a) => a.title),
    );
  }

  /** Pays a refund once per idempotency key. */
  refund(amount: number, idempotencyKey: string): Promise<string> {
    return this.#timed('payments', () => {
      if (!this.payments.has(idempotencyKey)) this.payments.set(idempotencyKey, amount);
      return `refund of ${amount} EUR paid (${idempotencyKey.slice(-6)})`;
    });
  }
}
