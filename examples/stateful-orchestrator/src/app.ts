import { App, type AppOptions } from '@switchboard/runtime';
import { greeter, weather } from './agents.js';
import { OnboardingOrchestrator } from './onboarding-orchestrator.js';

/** Options of {@link buildApp}: any {@link AppOptions} but the name and agents (e.g. a Redis `memoryStore`). */
export type OnboardingAppOptions = Omit<AppOptions, 'name' | 'agents'>;

/**
 * Builds the onboarding app without starting it: the agents, and the
 * orchestrator class to mount (the app constructs it with its agents).
 *
 * @example
 * ```ts
 * const { app, orchestrator } = buildApp();
 * const server = await app.start(orchestrator, { port: 3000 });
 * ```
 */
export function buildApp(options: OnboardingAppOptions = {}): {
  app: App;
  orchestrator: typeof OnboardingOrchestrator;
} {
  const app = new App({ name: 'onboarding', agents: [greeter, weather], ...options });
  return { app, orchestrator: OnboardingOrchestrator };
}
