import { ConfigurationError } from '@switchboard/core';
import type { CallbackAttemptOutcome } from './callback-attempt.js';
import { callbackSecretKey } from './callback-signature.js';
import { type CallbackHostLookup, type CallbackUrlPolicy, normalizeAllowedHosts } from './callback-url.js';

/**
 * One attempt as the sender reports it to `onAttempt`, for logs and
 * metrics. It never holds the receiver's answer, the URL, the body or the
 * secret.
 */
export interface CallbackAttempt {
  deliveryId: string;
  event: string;
  /** 1 for the first attempt. */
  attempt: number;
  outcome: CallbackAttemptOutcome;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** How much of the receiver's answer was read and discarded (`maxResponseBytes` plus at most one network read). */
  responseBytes: number;
  /** When another attempt follows: how long the sender waits first, in milliseconds. */
  retryInMs?: number;
}

/** Options of a {@link CallbackSender}, given once per app. */
export interface CallbackSenderOptions extends CallbackUrlPolicy {
  /**
   * The signing secret, `whsec_` and 24 to 64 random bytes in base64
   * ({@link generateCallbackSecret} makes one). Required: every receiver
   * must hold the same secret to verify a callback, so none is made up.
   * Several while rotating: the first signs, each one adds a signature.
   */
  secret: string | readonly string[];
  /** One attempt's deadline (connecting, the answer and reading it), in ms. Default 10,000. */
  timeoutMs?: number;
  /** Attempts per delivery, the first included (1 to 20). Default 5. */
  maxAttempts?: number;
  /** The wait before the second attempt, doubled for each one after, in ms. Default 1,000. */
  retryDelayMs?: number;
  /** The longest wait between two attempts, in ms (a `Retry-After` included). Default 30,000. */
  maxRetryDelayMs?: number;
  /** How much of a receiver's answer is read (and thrown away) before the connection is closed, in bytes. Default 64 KiB. */
  maxResponseBytes?: number;
  /** The largest callback body sent, in bytes (a larger one is refused). Default 256 KiB. */
  maxBodyBytes?: number;
  /** Callbacks sent at the same time. Default 8. */
  concurrency?: number;
  /**
   * The most deliveries held at once, sending, queued or waiting to retry;
   * one more is refused with a `CallbackRefusedError` (`queue_full`).
   * Default 256 (with the default body cap, at most 64 MiB of bodies).
   */
  maxPending?: number;
  /** Called after every attempt; a listener that throws is ignored. */
  onAttempt?: (attempt: CallbackAttempt) => void;
  /** The `fetch` used to send (default the global one). */
  fetch?: typeof globalThis.fetch;
  /**
   * Resolves a host name before each attempt when there is no allow-list, to
   * refuse names that point at private addresses (default the system's resolver).
   */
  lookup?: CallbackHostLookup;
  /** This clock in ms since 1970, for timestamps (default `Date.now`). */
  now?: () => number;
  /** A number in [0, 1) for the jitter of retry waits (default `Math.random`). */
  random?: () => number;
}

/** {@link CallbackSenderOptions} with every default applied and checked. */
export interface CallbackSettings {
  keys: readonly Buffer[];
  policy: CallbackUrlPolicy;
  timeoutMs: number;
  maxAttempts: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  maxResponseBytes: number;
  maxBodyBytes: number;
  concurrency: number;
  maxPending: number;
  onAttempt: ((attempt: CallbackAttempt) => void) | undefined;
  fetch: typeof globalThis.fetch;
  lookup: CallbackHostLookup | undefined;
  now: () => number;
  random: () => number;
}

function wholeNumber(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new ConfigurationError({
      message: `Callback option ${name} is ${value}; use a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}`,
    });
  return value;
}

/**
 * Applies the defaults and checks every option, so that a misconfigured
 * sender fails when the app is built rather than at its first callback.
 * @throws ConfigurationError naming the option.
 */
export function callbackSettings({
  secret,
  allowedHosts,
  allowPrivateAddresses = false,
  timeoutMs = 10_000,
  maxAttempts = 5,
  retryDelayMs = 1000,
  maxRetryDelayMs = 30_000,
  maxResponseBytes = 64 * 1024,
  maxBodyBytes = 256 * 1024,
  concurrency = 8,
  maxPending = 256,
  onAttempt,
  fetch = globalThis.fetch,
  lookup,
  now = Date.now,
  random = Math.random,
}: CallbackSenderOptions): CallbackSettings {
  const secrets = typeof secret === 'string' ? [secret] : (secret ?? []);
  if (secrets.length === 0)
    throw new ConfigurationError({
      message: 'Callbacks need a secret (receivers verify with it); generateCallbackSecret() makes one',
    });
  const policy: CallbackUrlPolicy = { allowPrivateAddresses };
  if (allowedHosts) policy.allowedHosts = normalizeAllowedHosts(allowedHosts);
  return {
    keys: secrets.map(callbackSecretKey),
    policy,
    timeoutMs: wholeNumber('timeoutMs', timeoutMs, 1),
    maxAttempts: wholeNumber('maxAttempts', maxAttempts, 1, 20),
    retryDelayMs: wholeNumber('retryDelayMs', retryDelayMs, 0),
    maxRetryDelayMs: wholeNumber('maxRetryDelayMs', maxRetryDelayMs, retryDelayMs),
    maxResponseBytes: wholeNumber('maxResponseBytes', maxResponseBytes, 0),
    maxBodyBytes: wholeNumber('maxBodyBytes', maxBodyBytes, 1),
    concurrency: wholeNumber('concurrency', concurrency, 1, 1024),
    maxPending: wholeNumber('maxPending', maxPending, 1),
    onAttempt,
    fetch,
    lookup,
    now,
    random,
  };
}
