/**
 * The abort state of one agent call. Its `AbortSignal` and its race promise
 * are created only when asked for, so that an agent answering synchronously
 * costs neither (an `AbortController` is one of the dearer objects in Node).
 */
export class AgentAbort {
  #aborted = false;
  #reason: unknown;
  #controller?: AbortController;
  #race?: Promise<never>;
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
    this.#reject?.(reason);
  }

  /** Settles like `promise`, or rejects with the abort reason as soon as the call is aborted. */
  race<T>(promise: PromiseLike<T>): Promise<T> {
    if (this.#aborted) return Promise.reject(this.#reason);
    if (!this.#race) {
      this.#race = new Promise<never>((_, reject) => {
        this.#reject = reject;
      });
      this.#race.catch(() => {});
    }
    return Promise.race([promise, this.#race]);
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
