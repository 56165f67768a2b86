/**
 * How one attempt to deliver a callback ended:
 * - `delivered`: the receiver answered 2xx;
 * - `retryable_status`: it answered 408, 429 or 5xx (tried again);
 * - `rejected_status`: it answered anything else, a redirect included (not tried again: a 4xx will not change);
 * - `timeout`: no complete answer within `timeoutMs` (tried again);
 * - `network_error`: the connection failed, or the host name did not resolve (tried again);
 * - `blocked_address`: the host name resolved to a loopback, private or link-local address (not tried again);
 * - `aborted`: the sender was closed and its grace period ran out.
 */
export type CallbackAttemptOutcome =
  | 'delivered'
  | 'retryable_status'
  | 'rejected_status'
  | 'timeout'
  | 'network_error'
  | 'blocked_address'
  | 'aborted';

/** What one attempt did, without the receiver's answer or anything secret. */
export interface AttemptResult {
  outcome: CallbackAttemptOutcome;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** How much of the receiver's answer was read (then thrown away): `maxResponseBytes` plus at most one network read. */
  responseBytes: number;
  /** What a 429 or 503 asked for in `Retry-After` (seconds), in milliseconds. */
  retryAfterMs?: number;
}

/** What {@link attemptDelivery} needs for one POST. */
export interface AttemptRequest {
  fetch: typeof globalThis.fetch;
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Aborted when the sender gives up on everything (its grace period at close ran out). */
  signal: AbortSignal;
  /** Asked before connecting, within the attempt's deadline: false ends the delivery as `blocked_address`. */
  checkAddress?: () => Promise<boolean>;
}

/** `promise`, or a rejection as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** Whether trying the same delivery again may succeed after this status. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * Reads an answer and discards it, up to `maxBytes` (the read that crosses
 * it may carry one network chunk more, never kept), then closes the body: a
 * receiver that answers with gigabytes (or never ends its answer) costs
 * this process one chunk of memory and one timeout, nothing more.
 */
async function drain(response: Response, maxBytes: number): Promise<number> {
  if (!response.body) return 0;
  const reader = response.body.getReader();
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) return size;
      size += value.byteLength;
    }
    return size;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function retryAfterOf(response: Response): number | undefined {
  if (response.status !== 429 && response.status !== 503) return undefined;
  const value = response.headers.get('retry-after');
  // Seconds only: an HTTP date would need the receiver's clock to agree with ours.
  return value && /^\d{1,6}$/.test(value.trim()) ? Number(value) * 1000 : undefined;
}

/**
 * POSTs a callback once, bounded in time (`timeoutMs` covers connecting,
 * the answer's headers and reading its body) and in memory
 * (`maxResponseBytes`). Redirects are not followed: a redirect is an answer
 * that will not change (and following one would reach a host nobody checked).
 */
export async function attemptDelivery(request: AttemptRequest): Promise<AttemptResult> {
  const { fetch, url, headers, body, timeoutMs, maxResponseBytes, signal, checkAddress } = request;
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = AbortSignal.any([timeout, signal]);
  let response: Response;
  try {
    if (checkAddress && !(await untilAborted(checkAddress(), combined)))
      return { outcome: 'blocked_address', responseBytes: 0 };
    response = await fetch(url, { method: 'POST', headers, body, signal: combined, redirect: 'manual' });
  } catch {
    if (signal.aborted) return { outcome: 'aborted', responseBytes: 0 };
    return { outcome: timeout.aborted ? 'timeout' : 'network_error', responseBytes: 0 };
  }
  const { status } = response;
  let responseBytes = 0;
  try {
    responseBytes = await drain(response, maxResponseBytes);
  } catch {
    // The answer's status is what counts; a body cut short (by the timeout, or the receiver) changes nothing.
  }
  const outcome =
    status >= 200 && status < 300
      ? 'delivered'
      : isRetryableStatus(status)
        ? 'retryable_status'
        : 'rejected_status';
  const retryAfterMs = retryAfterOf(response);
  return retryAfterMs === undefined
    ? { outcome, status, responseBytes }
    : { outcome, status, responseBytes, retryAfterMs };
}

/**
 * The wait before attempt `attempt + 1`: `retryDelayMs` doubled per attempt
 * up to `maxRetryDelayMs`, then between half and all of it at random ("equal
 * jitter"), so that many deliveries failing at once do not come back at once
 * while each still waits at least half its share. A receiver's
 * `Retry-After` replaces it, capped at `maxRetryDelayMs`.
 */
export function retryDelay(
  attempt: number,
  {
    retryDelayMs,
    maxRetryDelayMs,
    random,
    retryAfterMs,
  }: { retryDelayMs: number; maxRetryDelayMs: number; random: () => number; retryAfterMs?: number },
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, maxRetryDelayMs);
  const ceiling = Math.min(maxRetryDelayMs, retryDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * Math.min(Math.max(random(), 0), 1));
}
