import { SystemError } from './system-error.js';

/** A turn ran past its strategy profile's deadline (`turnTimeoutMs`). */
export class TurnDeadlineError extends SystemError {
  readonly code = 'turn_deadline_exceeded';
  readonly timeoutMs: number;
  constructor({ timeoutMs }: { timeoutMs: number }) {
    super({ message: `The turn did not finish within its deadline of ${timeoutMs} ms` });
    this.timeoutMs = timeoutMs;
  }
}
