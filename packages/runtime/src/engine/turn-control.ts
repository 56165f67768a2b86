import { SessionBusyError } from '@switchboard/core';
import type { AgentAbort } from './agent-abort.js';

/**
 * The stop button of one running turn, held in this process while the turn
 * holds its session's lease. A cancel, a new message with the `interrupt`
 * policy, or a lost lease stops the turn: its running agents are aborted
 * through their signals and the engine stops at its next step. Server
 * shutdown only aborts the agents (the turn then ends as usual).
 *
 * No `AbortController` is made unless someone reads {@link signal}: a turn
 * whose agents answer at once never needs one.
 */
export class TurnControl {
  readonly sessionId: string;
  turnId: string | undefined;
  /** Why the turn was stopped, once it was. */
  stopped: unknown;
  /**
   * The running agent calls: the first in a slot of its own, any others (a fan-out) in a set. A turn's
   * calls mostly run one at a time, and a set emptied by each call's end is one V8 reallocates on the
   * next (measured on the churn bench: about 200 B a turn).
   */
  #call: AgentAbort | undefined;
  #more: Set<AgentAbort> | undefined;
  #controller: AbortController | undefined;

  readonly #shutdown: AbortSignal;

  /** @param shutdown - the app's shutdown signal, which the turn's {@link signal} follows. */
  constructor(sessionId: string, shutdown: AbortSignal) {
    this.sessionId = sessionId;
    this.#shutdown = shutdown;
  }

  /** Aborted when the turn is stopped or the server gives up on it (the `RequestContext`'s signal). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      const reason = this.stopped ?? (this.#shutdown.aborted ? this.#shutdown.reason : undefined);
      if (reason !== undefined) this.#controller.abort(reason);
    }
    return this.#controller.signal;
  }

  /** True when the turn was stopped because its lease was lost: it must write nothing more. */
  get leaseLost(): boolean {
    return SessionBusyError.isInstance(this.stopped);
  }

  /** Aborts `abort` with the turn (now, if it already stopped) until {@link TurnControl.untrack}. */
  track(abort: AgentAbort): void {
    if (this.stopped !== undefined) abort.abort(this.stopped);
    if (this.#call === undefined) this.#call = abort;
    else if (this.#more) this.#more.add(abort);
    else this.#more = new Set([abort]);
  }

  /** Stops aborting `abort` with the turn: its call has ended. */
  untrack(abort: AgentAbort): void {
    if (this.#call === abort) this.#call = undefined;
    else this.#more?.delete(abort);
  }

  /** Aborts the running agents (and the signal) without stopping the turn: server shutdown. */
  abortAgents(reason: unknown): void {
    this.#call?.abort(reason);
    if (this.#more) for (const call of [...this.#more]) call.abort(reason);
    if (this.#controller && !this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  /** Stops the turn for `reason`: agents and the signal abort, and the engine stops at its next step. */
  stop(reason: unknown): void {
    if (this.stopped !== undefined) return;
    this.stopped = reason;
    this.abortAgents(reason);
  }
}
