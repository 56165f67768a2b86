import { SwitchboardError } from './switchboard-error.js';

/** An error caused by the caller: bad input, an unknown session, a busy session. */
export abstract class UserError extends SwitchboardError {
  readonly kind = 'user' as const;
}
