import { SystemError } from '@switchboard/core';

/** Why a {@link CallbackRefusedError} was thrown. */
export type CallbackRefusal = 'queue_full' | 'body_too_large' | 'closed';

/**
 * A callback the sender would not take: its pending queue is full
 * (`maxPending`), its body is larger than `maxBodyBytes`, or the sender was
 * closed. Nothing was sent and nothing was queued; the sender's `stats()`
 * counts it under `refused`.
 */
export class CallbackRefusedError extends SystemError {
  readonly code = 'callback_refused';
  readonly reason: CallbackRefusal;
  constructor({ reason, limit }: { reason: CallbackRefusal; limit?: number }) {
    super({
      message:
        reason === 'queue_full'
          ? `The callback was refused: ${limit} callbacks are already waiting to be sent (maxPending)`
          : reason === 'body_too_large'
            ? `The callback was refused: its body is larger than ${limit} bytes (maxBodyBytes)`
            : 'The callback was refused: the callback sender is closed',
    });
    this.reason = reason;
  }
}
