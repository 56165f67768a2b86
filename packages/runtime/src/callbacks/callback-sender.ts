import { ValidationError } from '@switchboard/core';
import {
  type AttemptResult,
  attemptDelivery,
  type CallbackAttemptOutcome,
  retryDelay,
} from './callback-attempt.js';
import { CallbackRefusedError } from './callback-errors.js';
import {
  type CallbackAttempt,
  type CallbackSenderOptions,
  type CallbackSettings,
  callbackSettings,
} from './callback-options.js';
import { CALLBACK_HEADERS, signCallback } from './callback-signature.js';
import { resolvesToPublicAddresses, validateCallbackUrl } from './callback-url.js';

/** One callback to deliver, given to {@link CallbackSender.send}. */
export interface CallbackMessage {
  /** Where to POST it; checked again against the sender's policy (it may come from a stored job). */
  url: string;
  /**
   * The delivery id (`webhook-id`), 1 to 128 of `A-Z a-z 0-9 _ : -`: the
   * same on every attempt and for every send of the same result (a job that
   * runs twice sends it twice), so receivers deduplicate on it.
   */
  deliveryId: string;
  /** The event's type, e.g. `turn.completed`: a letter, then up to 63 of `A-Z a-z 0-9 . _ -`. */
  event: string;
  /** The event's data, sent as `data` in `{ type, timestamp, data }`; JSON-serialisable. */
  body: unknown;
}

/** How a delivery ended, from {@link CallbackSender.send}'s promise. */
export interface CallbackResult {
  deliveryId: string;
  /** True when the receiver answered 2xx. */
  delivered: boolean;
  /** Attempts made. */
  attempts: number;
  /** The last attempt's outcome, or `abandoned` when `close()`'s grace period ran out first. */
  outcome: CallbackAttemptOutcome | 'abandoned';
  /** The last HTTP status the receiver answered, if any. */
  status?: number;
}

/** Counts since the sender was made, and what it holds now (see {@link CallbackSender.stats}). */
export interface CallbackSenderStats {
  /** Attempts under way now (at most `concurrency`). */
  sending: number;
  /** Deliveries accepted and not finished: sending, queued or waiting to retry (at most `maxPending`). */
  pending: number;
  delivered: number;
  /** Deliveries given up: attempts used up, or a status that will not change. */
  failed: number;
  /** Callbacks refused by `send` (queue full, body too large, closed). */
  refused: number;
  /** Deliveries dropped when `close()`'s grace period ran out. */
  abandoned: number;
}

interface Delivery {
  url: URL;
  deliveryId: string;
  event: string;
  body: Uint8Array;
  attempts: number;
  last?: { outcome: CallbackAttemptOutcome; status?: number };
  timer?: NodeJS.Timeout;
  done: boolean;
  resolve: (result: CallbackResult) => void;
}

const DELIVERY_ID = /^[A-Za-z0-9_:-]{1,128}$/;
const EVENT = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;

/**
 * Sends an app's callbacks: each one POSTed as JSON `{ type, timestamp,
 * data }`, signed as the Standard Webhooks specification says
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`), and tried again
 * with exponential backoff and jitter after a network error, a timeout, or a
 * 408, 429 or 5xx, up to `maxAttempts`; another 4xx (or a redirect) ends it.
 *
 * Bounded everywhere: `concurrency` requests at once, `maxPending`
 * deliveries held (one more is refused at once), `maxBodyBytes` sent,
 * `maxResponseBytes` read back, `timeoutMs` per attempt. With the defaults a
 * delivery ends within 5 attempts × 10 s plus 1 + 2 + 4 + 8 s of waits.
 * Deliveries live in this process: a caller that must survive a crash sends
 * again from its job (same `deliveryId`) until the promise says `delivered`.
 *
 * @example
 * ```ts
 * const callbacks = new CallbackSender({ secret: process.env.CALLBACK_SECRET!, allowedHosts: ['*.example.com'] });
 * const result = await callbacks.send({ url, deliveryId: turnId, event: 'turn.completed', body: { sessionId, turnId, status } });
 * await callbacks.close({ graceMs: 10_000 });
 * ```
 */
export class CallbackSender {
  readonly #settings: CallbackSettings;
  readonly #queue: Delivery[] = [];
  readonly #unfinished = new Set<Delivery>();
  readonly #abort = new AbortController();
  readonly #attempts = new Set<Promise<void>>();
  readonly #counts = { delivered: 0, failed: 0, refused: 0, abandoned: 0 };
  #sending = 0;
  #closed = false;
  #idle: (() => void) | undefined;

  /** @throws ConfigurationError when an option is invalid or the secret is missing or malformed. */
  constructor(options: CallbackSenderOptions) {
    this.#settings = callbackSettings(options);
  }

  /**
   * Checks a callback URL a client sent against this sender's policy (see
   * {@link validateCallbackUrl}); call it when the request arrives, so that
   * a bad URL is a 400 before anything is queued.
   * @throws ValidationError saying what is wrong.
   */
  validateUrl(url: string): URL {
    return validateCallbackUrl(url, this.#settings.policy);
  }

  /**
   * Queues a callback and resolves when it was delivered or given up; the
   * promise never rejects. What cannot be accepted is thrown at once, before
   * anything is queued.
   * @throws ValidationError for a URL, delivery id or event the sender will not send, or a body that is not JSON.
   * @throws CallbackRefusedError when the sender is closed, the body is over `maxBodyBytes`, or `maxPending` deliveries are held.
   */
  send({ url, deliveryId, event, body }: CallbackMessage): Promise<CallbackResult> {
    const { maxBodyBytes, maxPending, now } = this.#settings;
    if (this.#closed) this.#refuse(new CallbackRefusedError({ reason: 'closed' }));
    // Before any work on the body: a full sender refuses cheaply.
    if (this.#unfinished.size >= maxPending)
      this.#refuse(new CallbackRefusedError({ reason: 'queue_full', limit: maxPending }));
    const checked = this.validateUrl(url);
    const issues: string[] = [];
    if (typeof deliveryId !== 'string' || !DELIVERY_ID.test(deliveryId))
      issues.push('deliveryId: 1 to 128 letters, digits, _ : or -');
    if (typeof event !== 'string' || !EVENT.test(event))
      issues.push('event: a letter, then up to 63 letters, digits, . _ or -');
    let json: string | undefined;
    try {
      json = JSON.stringify({ type: event, timestamp: new Date(now()).toISOString(), data: body });
    } catch {
      issues.push('body: not JSON-serialisable');
    }
    if (issues.length > 0 || json === undefined)
      throw new ValidationError({ message: 'Invalid callback', issues });
    const bytes = Buffer.from(json);
    if (bytes.byteLength > maxBodyBytes)
      this.#refuse(new CallbackRefusedError({ reason: 'body_too_large', limit: maxBodyBytes }));
    return new Promise<CallbackResult>((resolve) => {
      const delivery: Delivery = {
        url: checked,
        deliveryId,
        event,
        body: bytes,
        attempts: 0,
        done: false,
        resolve,
      };
      this.#unfinished.add(delivery);
      this.#queue.push(delivery);
      this.#pump();
    });
  }

  /** What the sender holds now and has done so far, for metrics. */
  stats(): CallbackSenderStats {
    return { sending: this.#sending, pending: this.#unfinished.size, ...this.#counts };
  }

  /**
   * Stops taking callbacks (a later `send` throws `closed`) and waits for
   * those held to finish, retries included, for at most `graceMs`; then
   * aborts what is left, whose promises resolve as `abandoned`. It returns
   * once no request of this sender is open and no retry is waiting.
   * @returns how many deliveries were abandoned (also counted in `stats().abandoned`).
   */
  async close({ graceMs = 10_000 }: { graceMs?: number } = {}): Promise<{ abandoned: number }> {
    this.#closed = true;
    if (this.#unfinished.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => {
          this.#idle = resolve;
        }),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
    }
    const left = [...this.#unfinished];
    this.#abort.abort();
    for (const delivery of left) this.#finish(delivery, 'abandoned');
    // Aborted requests end at once; waiting for them means nothing of this sender is left running.
    await Promise.allSettled([...this.#attempts]);
    return { abandoned: left.length };
  }

  #refuse(error: CallbackRefusedError): never {
    this.#counts.refused += 1;
    throw error;
  }

  #pump(): void {
    while (this.#sending < this.#settings.concurrency && this.#queue.length > 0) {
      const delivery = this.#queue.shift() as Delivery;
      this.#sending += 1;
      const attempt = this.#attempt(delivery);
      this.#attempts.add(attempt);
      void attempt.finally(() => this.#attempts.delete(attempt));
    }
  }

  async #attempt(delivery: Delivery): Promise<void> {
    let result: AttemptResult;
    try {
      result = await this.#post(delivery);
    } catch {
      // attemptDelivery settles every failure of the request itself; this is an injected clock or fetch throwing.
      result = { outcome: 'network_error', responseBytes: 0 };
    } finally {
      // The slot is free before the delivery's promise resolves, so a caller that reads stats() then sees it free.
      this.#sending -= 1;
    }
    this.#settle(delivery, result);
    this.#pump();
  }

  #post(delivery: Delivery): Promise<AttemptResult> {
    const settings = this.#settings;
    delivery.attempts += 1;
    const timestamp = Math.floor(settings.now() / 1000);
    return attemptDelivery({
      fetch: settings.fetch,
      url: delivery.url.href,
      checkAddress: () => resolvesToPublicAddresses(delivery.url, settings.policy, settings.lookup),
      headers: {
        'content-type': 'application/json',
        [CALLBACK_HEADERS.id]: delivery.deliveryId,
        [CALLBACK_HEADERS.timestamp]: String(timestamp),
        [CALLBACK_HEADERS.signature]: signCallback(
          settings.keys,
          delivery.deliveryId,
          timestamp,
          delivery.body,
        ),
      },
      body: delivery.body,
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
      signal: this.#abort.signal,
    });
  }

  #settle(delivery: Delivery, result: AttemptResult): void {
    const settings = this.#settings;
    if (delivery.done) return;
    delivery.last =
      result.status === undefined
        ? { outcome: result.outcome }
        : { outcome: result.outcome, status: result.status };
    const again =
      (result.outcome === 'retryable_status' ||
        result.outcome === 'timeout' ||
        result.outcome === 'network_error') &&
      delivery.attempts < settings.maxAttempts;
    const retryInMs = again
      ? retryDelay(delivery.attempts, {
          ...settings,
          ...(result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
        })
      : undefined;
    this.#report({
      deliveryId: delivery.deliveryId,
      event: delivery.event,
      attempt: delivery.attempts,
      outcome: result.outcome,
      ...(result.status === undefined ? {} : { status: result.status }),
      responseBytes: result.responseBytes,
      ...(retryInMs === undefined ? {} : { retryInMs }),
    });
    if (retryInMs === undefined) {
      this.#finish(delivery, result.outcome === 'aborted' ? 'abandoned' : result.outcome);
      return;
    }
    // The wait holds no sending slot: a receiver that is down does not hold up the others' callbacks.
    delivery.timer = setTimeout(() => {
      delivery.timer = undefined;
      if (delivery.done) return;
      this.#queue.push(delivery);
      this.#pump();
    }, retryInMs);
  }

  #report(attempt: CallbackAttempt): void {
    try {
      this.#settings.onAttempt?.(attempt);
    } catch {
      // A listener's failure must not change a delivery.
    }
  }

  #finish(delivery: Delivery, outcome: CallbackAttemptOutcome | 'abandoned'): void {
    if (delivery.done) return;
    delivery.done = true;
    clearTimeout(delivery.timer);
    this.#unfinished.delete(delivery);
    const queued = this.#queue.indexOf(delivery);
    if (queued >= 0) this.#queue.splice(queued, 1);
    const delivered = outcome === 'delivered';
    this.#counts[delivered ? 'delivered' : outcome === 'abandoned' ? 'abandoned' : 'failed'] += 1;
    const result: CallbackResult = {
      deliveryId: delivery.deliveryId,
      delivered,
      attempts: delivery.attempts,
      outcome,
    };
    if (delivery.last?.status !== undefined) result.status = delivery.last.status;
    delivery.resolve(result);
    if (this.#unfinished.size === 0) this.#idle?.();
  }
}
