/**
 * How an `App` closes: it stops taking work (listening, recovering,
 * taking background jobs), waits for the turns under way (aborting them
 * once `closeGraceMs` is over), then closes everything it holds.
 *
 * @module
 */
import { ServerShutdownError } from '@switchboard/core';
import type { Agent } from './agents/agent.js';
import type { AppOptions } from './app-options.js';
import type { AppParts } from './app-parts.js';
import type { BackgroundTurns } from './background/background-turns.js';
import type { TurnEngine } from './engine/turn-engine.js';
import type { TurnSweeper } from './engine/turn-sweeper.js';

/** What the app's close stops, waits for and closes, besides its parts. */
export interface Closing {
  options: AppOptions;
  agents: readonly Agent[];
  /** Aborted once the grace period is over: every running turn listens to it. */
  shutdown: AbortController;
  /** Work in flight (turns that had to wait, recoveries, callbacks): waited for. */
  inFlight: ReadonlySet<PromiseLike<unknown>>;
  /** Settles once the `chat()` turns under way have ended (undefined when none is); asked once no recovery runs. */
  chatTurns: () => Promise<void> | undefined;
  /** Recovers abandoned turns, when the app listens. */
  sweeper: TurnSweeper | undefined;
  /** The engine, once mounted (asked when it is closed). */
  engine: () => TurnEngine | undefined;
  /** The background turns, once mounted (asked when they are stopped, and again when closed). */
  background: () => BackgroundTurns | undefined;
}

/**
 * Closes the app: resolves once its turns have ended and its stores, tracing,
 * metrics and agents are closed (a failure to close one does not stop the others).
 */
export async function closeApp(
  parts: AppParts,
  closing: Closing,
  stopListening: (() => Promise<void>) | undefined,
): Promise<void> {
  const { options } = closing;
  const listening = stopListening?.();
  // No new recoveries; one under way is a turn in flight like any other.
  const sweeping = closing.sweeper?.stop();
  // No new background jobs (a drain): those not taken stay queued for other replicas.
  const draining = closing.background()?.stop();
  const { closeGraceMs = 10_000 } = options;
  const grace = setTimeout(() => closing.shutdown.abort(new ServerShutdownError()), closeGraceMs);
  await sweeping;
  const chatTurns = closing.chatTurns();
  await Promise.allSettled([...closing.inFlight, chatTurns, draining]);
  clearTimeout(grace);
  closing.engine()?.close();
  parts.configCache.close();
  // Followers of turns' streams end now, or the server would wait for them to stop listening.
  const events = parts.events?.close?.();
  await listening;
  await Promise.allSettled([
    parts.sessions.close?.(),
    parts.memory.close?.(),
    parts.rateLimiter.close?.(),
    options.budgetCounters?.close?.(),
    parts.configStore.close?.(),
    events,
    closing.background()?.close(options.closeGraceMs),
    options.tracing?.shutdown(),
    parts.metrics?.shutdown(),
    // Their connections (MCP servers, say) are no longer needed once no turn runs.
    ...closing.agents.map((agent) => agent.close?.()),
  ]);
}
