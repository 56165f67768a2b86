/**
 * An app's background turns and schedules, made when it mounts its
 * orchestrator: the queue (in process unless given), the callback sender,
 * and the turn engine they run on.
 *
 * @module
 */
import { publicErrorOf } from '../backend/public-error.js';
import type { CallbackSenderOptions } from '../callbacks/callback-options.js';
import { CallbackSender } from '../callbacks/callback-sender.js';
import type { TurnEngine } from '../engine/turn-engine.js';
import type { ConcurrencyPolicy, TurnResult } from '../engine/turn-types.js';
import type { Logger } from '../logging/logger.js';
import { isPromiseLike } from '../promise-like.js';
import { unexpectedErrorLog } from '../server/request-log.js';
import type { MemoryStore } from '../stores/memory-store.js';
import { userSessions } from '../stores/user-sessions.js';
import type { BackgroundMetrics } from './background-metrics.js';
import { type BackgroundOptions, BackgroundTurns, type CallbackDelivery } from './background-turns.js';
import { InMemoryTurnQueue } from './in-memory-turn-queue.js';
import { Schedules, type SchedulesOptions } from './schedules.js';

/** The app's `background` option. */
export type AppBackgroundOptions = BackgroundOptions & {
  /** Signs and sends callbacks: a `CallbackSender`'s options (its `secret` above all), or one. */
  callbacks?: CallbackSenderOptions | CallbackDelivery;
  /** Bounds of schedules. */
  schedules?: SchedulesOptions;
};

/** What the app's background turns run on. */
export interface AppBackgroundParts {
  engine: TurnEngine;
  memory: MemoryStore;
  logger: Logger;
  /** Keeps a turn in flight until it settles (the app's close waits for it). */
  track: (turn: Promise<TurnResult>) => Promise<TurnResult>;
  exposeErrorDetails: boolean | undefined;
  concurrency: ConcurrencyPolicy;
  /** Counts what happens to background turns and callbacks (absent: nothing records). */
  metrics?: BackgroundMetrics;
}

/** Makes and starts an app's background turns and schedules (none with `background: false`). */
export function appBackground(
  options: AppBackgroundOptions | false | undefined,
  { engine, memory, logger, track, exposeErrorDetails, concurrency, metrics }: AppBackgroundParts,
): { turns: BackgroundTurns; schedules: Schedules } | undefined {
  if (options === false) return undefined;
  const queue = options?.queue ?? new InMemoryTurnQueue();
  const log = unexpectedErrorLog(logger);
  const turns = new BackgroundTurns(
    {
      queue,
      memory,
      run: (request) => {
        const turn = engine.run(request);
        return isPromiseLike(turn) ? track(Promise.resolve(turn)) : Promise.resolve(turn);
      },
      readTurn: (store, sessionId, turnId) => engine.readTurn(store, sessionId, turnId),
      sessionsOf: (tenantId, userId) => {
        const view = engine.sessionsOf(tenantId);
        return userId === undefined ? view : userSessions(view, userId);
      },
      publicError: (error) => {
        const { code, message } = publicErrorOf(error, (failure) => log(failure), exposeErrorDetails);
        return { code, message };
      },
      logger,
      concurrency,
      callbacks: callbackSenderOf(options?.callbacks, logger),
      metrics,
    },
    options,
  );
  turns.start();
  return { turns, schedules: new Schedules(memory, queue, options?.schedules) };
}

/** The app's callback sender: the one given, or one made from its options (attempts logged without their URL). */
function callbackSenderOf(
  callbacks: CallbackSenderOptions | CallbackDelivery | undefined,
  logger: Logger,
): CallbackDelivery | undefined {
  if (callbacks === undefined || 'send' in callbacks) return callbacks;
  return new CallbackSender({
    onAttempt: (attempt) => logger.debug({ callback: attempt }, 'callback attempt'),
    ...callbacks,
  });
}
