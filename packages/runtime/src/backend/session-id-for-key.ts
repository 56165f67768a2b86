/**
 * The session a first message sent with an `Idempotency-Key` (and no
 * session id) opens, so that a retry of the same request lands in it again.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/**
 * The session id for a first message sent with an `Idempotency-Key` and no
 * session id: derived from the key (and tenant), so that a retry of the same
 * request lands in the same session. As unguessable as the key itself.
 */
export function sessionIdForKey(idempotencyKey: string, tenantId = ''): string {
  const digest = createHash('sha256')
    .update(`switchboard:idempotency:${tenantId}:${idempotencyKey}`)
    .digest('hex');
  return `ses_${digest.slice(0, 32)}`;
}
