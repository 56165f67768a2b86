import { App, type AppOptions } from '@switchboard/runtime';
import { createRedisStores } from '@switchboard/runtime/redis';
import { ordersAgent, refundsAgent } from './agents.js';
import { InMemoryPayments, type Payments } from './payments.js';
import { SupportDesk } from './support-desk.js';

/** Options of {@link buildApp}: where state lives, the payment provider, and any other {@link AppOptions}. */
export interface SupportAppOptions
  extends Omit<AppOptions, 'name' | 'agents' | 'sessionStore' | 'memoryStore'> {
  /**
   * Keep sessions, pending approvals and memory in Redis, shared by every
   * replica built with the same URL and prefix (default: in memory, one process).
   */
  redis?: { url: string; keyPrefix?: string };
  /** Where refunds are made (default: a new {@link InMemoryPayments}). */
  payments?: Payments;
  /** User ids whose every request waits for a person, whichever agent it goes to (default none). */
  accountsUnderReview?: Iterable<string>;
}

/**
 * Builds the support-desk app without starting it: the `orders` and
 * `refunds` agents, the stores, the app-wide approval policy (accounts under
 * review), and the orchestrator class to mount.
 *
 * @example
 * ```ts
 * const { app, orchestrator } = buildApp({ redis: { url: 'redis://127.0.0.1:6379' } });
 * const server = await app.start(orchestrator, { port: 3000 });
 * ```
 */
export function buildApp({
  redis,
  payments = new InMemoryPayments(),
  accountsUnderReview = [],
  ...options
}: SupportAppOptions = {}): {
  app: App;
  orchestrator: typeof SupportDesk;
  payments: Payments;
} {
  const stores = redis ? createRedisStores(redis.url, { keyPrefix: redis.keyPrefix ?? 'support-desk:' }) : {};
  const underReview = new Set(accountsUnderReview);
  const app = new App({
    name: 'support-desk',
    agents: [ordersAgent, refundsAgent(payments)],
    // Any call for an account under review waits for a person, whichever agent it goes to.
    approvalPolicy: (_call, { userId }) =>
      userId !== undefined && underReview.has(userId)
        ? { required: true, risk: 'critical', reason: `account ${userId} is under review` }
        : false,
    ...stores,
    ...options,
  });
  return { app, orchestrator: SupportDesk, payments };
}
