import { SystemError } from './system-error.js';

/** A turn exceeded its hop budget without answering the user. */
export class MaxHopsExceededError extends SystemError {
  readonly code = 'max_hops_exceeded';
  constructor({ maxHops }: { maxHops: number }) {
    super({ message: `The turn did not reach the user within ${maxHops} routing hops` });
  }
}
