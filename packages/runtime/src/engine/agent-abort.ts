/**
 * The abort state of one agent call. Its `AbortSignal` is created only when
 * asked for, so that an agent answering synchronously costs none (an
 * `AbortController` is one of the dearer objects in Node).
 */
export class AgentAbort {
  #aborted = false;
  #reason: unknown;
  #controller?: AbortController;
  /** Rejects the pending {@link AgentAbort.race}. */
  #reject?: (reason: unknown) => void;

  /** The signal handed to the agent. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts the call once; later calls are ignored. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const reject = this.#reject;
    this.#reject = undefined;
    reject?.(reason);
  }

  /**
   * Settles like `promise`, or rejects with the abort reason as soon as the
   * call is aborted. One race at a time (a call awaits its reply, or each
   * chunk of its stream, in turn): a new race replaces the one before. Two
   * promises per race, where `Promise.race` against an abort promise made five.
   */
  race<T>(promise: PromiseLike<T>): Promise<T> {
    if (this.#aborted) return Promise.reject(this.#reason);
    return new Promise<T>((resolve, reject) => {
      this.#reject = reject;
      promise.then(resolve, reject);
    });
  }

  /** Aborts this call when `signal` aborts, until the returned function is called. */
  follow(signal: AbortSignal): () => void {
    if (signal.aborted) {
      this.abort(signal.reason);
      return () => {};
    }
    const onAbort = () => this.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  }
}
