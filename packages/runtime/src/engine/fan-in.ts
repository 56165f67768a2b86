import { AgentTimeoutError } from '@switchboard/core';
import type { AgentAbort } from './agent-abort.js';

/** A running call waiting for its fan-in grace period to start. */
interface Follower {
  agent: string;
  graceMs: number;
  abort: AgentAbort;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * The fan-in of one fan-out: once a sibling has replied successfully, every
 * call still running that set `ToolCall.fanInGraceMs` gets that long more,
 * then is aborted with an `AgentTimeoutError` (`fanInGrace: true`). Made only
 * for a fan-out where a call asks for a grace period.
 */
export class FanIn {
  #replied = false;
  readonly #followers = new Set<Follower>();

  /** Bounds a running call by its grace period; the returned function forgets it (call it when the call ends). */
  follow(agent: string, graceMs: number, abort: AgentAbort): () => void {
    const follower: Follower = { agent, graceMs, abort };
    this.#followers.add(follower);
    if (this.#replied) this.#start(follower);
    return () => {
      clearTimeout(follower.timer);
      this.#followers.delete(follower);
    };
  }

  /** A sibling replied successfully: the grace periods of the calls still running start now. */
  replied(): void {
    if (this.#replied) return;
    this.#replied = true;
    for (const follower of this.#followers) this.#start(follower);
  }

  #start(follower: Follower): void {
    const { agent, graceMs, abort } = follower;
    follower.timer = setTimeout(
      () => abort.abort(new AgentTimeoutError({ agent, timeoutMs: graceMs, fanInGrace: true })),
      graceMs,
    );
  }
}
