import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigurationError } from '@switchboard/core';

/**
 * The headers every callback carries, as the Standard Webhooks specification
 * names them, so that its libraries (and Svix's) verify a Switchboard
 * callback as they are.
 */
export const CALLBACK_HEADERS = {
  /** The delivery id: the same on every attempt of one delivery, for the receiver to deduplicate. */
  id: 'webhook-id',
  /** When this attempt was signed, in Unix seconds. */
  timestamp: 'webhook-timestamp',
  /** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, several separated by spaces while a secret is rotated. */
  signature: 'webhook-signature',
} as const;

/** How far a callback's timestamp may be from the receiver's clock by default, in seconds (the specification's 5 minutes). */
export const DEFAULT_CALLBACK_TOLERANCE_SECONDS = 300;

const SECRET_PREFIX = 'whsec_';
// The specification's bounds for a key; a shorter one is guessable, a longer one buys nothing.
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
// Bounds on what a receiver reads from headers, so that verifying a forged request costs little.
const MAX_SIGNATURE_HEADER_LENGTH = 4096;
const MAX_SIGNATURES = 16;
const MAX_ID_LENGTH = 256;

/**
 * A new signing secret in the specification's form: `whsec_` and 32 random
 * bytes in base64. Give the same one to the app (`secret`) and to every receiver.
 * @example
 * ```ts
 * console.log(generateCallbackSecret()); // whsec_…, keep it with the app's other secrets
 * ```
 */
export function generateCallbackSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The HMAC key of a `whsec_…` secret.
 * @throws ConfigurationError when it is not `whsec_` and 24 to 64 bytes in base64.
 */
export function callbackSecretKey(secret: string): Buffer {
  const encoded = typeof secret === 'string' && secret.startsWith(SECRET_PREFIX) ? secret.slice(6) : '';
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES)
    throw new ConfigurationError({
      message: `A callback secret must be 'whsec_' and ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} random bytes in base64; generateCallbackSecret() makes one`,
    });
  return key;
}

function digest(key: Buffer, id: string, timestamp: number, body: string | Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/**
 * The `webhook-signature` value for one attempt: one `v1,<base64>` per key
 * (the first signs with the current secret; more keep receivers that still
 * hold an older one working while it is rotated).
 */
export function signCallback(
  keys: readonly Buffer[],
  id: string,
  timestamp: number,
  body: string | Uint8Array,
): string {
  return keys.map((key) => `v1,${digest(key, id, timestamp, body).toString('base64')}`).join(' ');
}

/** What a receiver's request carries: a fetch `Headers`, or Node's `request.headers`. */
export type CallbackRequestHeaders =
  | Headers
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Options of {@link verifyCallback}. */
export interface VerifyCallbackOptions {
  /** The request's headers. */
  headers: CallbackRequestHeaders;
  /** The raw body exactly as received: verify before parsing JSON (parsing and printing it again changes bytes). */
  body: string | Uint8Array;
  /** The app's `whsec_…` secret; several while it is rotated (any one that matches will do). */
  secret: string | readonly string[];
  /** How far the timestamp may be from this clock, in seconds (default 300). */
  toleranceSeconds?: number;
  /** This clock, in milliseconds since 1970 (default `Date.now()`). */
  now?: number;
}

/** Why a callback failed {@link verifyCallback}. */
export type CallbackVerificationFailure =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'stale_timestamp'
  | 'bad_signature';

/** The answer of {@link verifyCallback}. */
export type CallbackVerification =
  | {
      valid: true /** The delivery id, to deduplicate on. */;
      id: string /** The signing time, Unix seconds. */;
      timestamp: number;
    }
  | { valid: false; reason: CallbackVerificationFailure };

function header(headers: CallbackRequestHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | readonly string[] | undefined>;
  const value =
    record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1] ?? undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Checks that a request is a callback this app signed, the way a receiver
 * should before it acts on one: the three headers are present, the
 * timestamp is within `toleranceSeconds` of now (an old request replayed is
 * refused), and one `v1` signature matches the HMAC of
 * `<id>.<timestamp>.<body>` under the secret, compared in constant time.
 * It follows the Standard Webhooks specification, so a receiver may use any
 * library of the specification instead.
 *
 * Deduplicate on the returned `id`: a delivery is retried until the
 * receiver answers 2xx, so it can arrive more than once.
 *
 * @throws ConfigurationError when `secret` is not a `whsec_…` secret.
 * @example
 * ```ts
 * const check = verifyCallback({ headers: request.headers, body: rawBody, secret: process.env.CALLBACK_SECRET! });
 * if (!check.valid) return respond(401);
 * if (seen.has(check.id)) return respond(200);
 * ```
 */
export function verifyCallback({
  headers,
  body,
  secret,
  toleranceSeconds = DEFAULT_CALLBACK_TOLERANCE_SECONDS,
  now = Date.now(),
}: VerifyCallbackOptions): CallbackVerification {
  const keys = (typeof secret === 'string' ? [secret] : secret).map(callbackSecretKey);
  const id = header(headers, CALLBACK_HEADERS.id);
  const stamp = header(headers, CALLBACK_HEADERS.timestamp);
  const signatures = header(headers, CALLBACK_HEADERS.signature);
  if (
    !id ||
    !stamp ||
    !signatures ||
    id.length > MAX_ID_LENGTH ||
    signatures.length > MAX_SIGNATURE_HEADER_LENGTH
  )
    return { valid: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(stamp)) return { valid: false, reason: 'invalid_timestamp' };
  const timestamp = Number(stamp);
  if (Math.abs(Math.floor(now / 1000) - timestamp) > toleranceSeconds)
    return { valid: false, reason: 'stale_timestamp' };
  const expected = keys.map((key) => digest(key, id, timestamp, body));
  for (const entry of signatures.split(' ').slice(0, MAX_SIGNATURES)) {
    const [version, encoded] = entry.split(',');
    if (version !== 'v1' || !encoded) continue;
    const given = Buffer.from(encoded, 'base64');
    // The length of an HMAC-SHA256 is public; only the bytes are compared in constant time.
    if (expected.some((mac) => mac.length === given.length && timingSafeEqual(mac, given)))
      return { valid: true, id, timestamp };
  }
  return { valid: false, reason: 'bad_signature' };
}
