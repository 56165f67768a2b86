import { UserError } from './user-error.js';

/** An `Idempotency-Key` was sent again with a different request. */
export class IdempotencyKeyReusedError extends UserError {
  readonly code = 'idempotency_key_reused';
  constructor() {
    super({
      message:
        'This Idempotency-Key was already used for a different request; use a new key for a new message',
    });
  }
}
