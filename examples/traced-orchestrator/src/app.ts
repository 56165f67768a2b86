import { App, type AppOptions } from '@switchboard/runtime';
import { billing, techSupport } from './agents.js';
import { SupportRouter } from './support-router.js';

/** Options of {@link buildApp}: any {@link AppOptions} but the name and agents, e.g. `tracing`. */
export type SupportAppOptions = Omit<AppOptions, 'name' | 'agents'>;

/**
 * Builds the support app without starting it. Pass the handle of
 * `setupTracing()` as `tracing`, so `close()` flushes the last spans.
 *
 * @example
 * ```ts
 * const { app, orchestrator } = buildApp({ tracing: setupTracing() });
 * await app.start(orchestrator, { port: 3000 });
 * ```
 */
export function buildApp(options: SupportAppOptions = {}): { app: App; orchestrator: typeof SupportRouter } {
  const app = new App({ name: 'support', agents: [billing, techSupport], ...options });
  return { app, orchestrator: SupportRouter };
}
