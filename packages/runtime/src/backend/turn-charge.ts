/**
 * How a protocol that runs several turns in one request (a JSON-RPC batch
 * of MCP tool calls) counts each against the caller's rate limit, without
 * importing the routes that know the limit.
 *
 * @module
 */

/** Why the rate limit refused a turn. */
export interface RateLimitRefusal {
  /** The limit that was reached, in turns (and other requests) per minute. */
  limit: number;
  /** When the count starts afresh, in whole seconds from now (at least 1). */
  retryAfterSeconds: number;
  /** What to tell the client. */
  message: string;
}

/**
 * Counts one more turn against the caller's rate limit: resolves to
 * undefined when the turn may run, or to why not. The request itself was
 * counted when it came in, and that count pays for its first turn, so a
 * request running one turn costs one and a batch of 100 costs 100. Without
 * a limit it always resolves to undefined.
 */
export type TurnCharge = () => Promise<RateLimitRefusal | undefined>;

/** A {@link TurnCharge} that never refuses: no limit applies (no auth, or no `rateLimit`). */
export const UNLIMITED: TurnCharge = async () => undefined;
