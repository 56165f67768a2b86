import { SystemError, UserError } from '@switchboard/core';

/** The background queue holds as many turns as it may: try again later (503). */
export class QueueFullError extends SystemError {
  readonly code = 'queue_full';
  constructor(limit: number) {
    super({ message: `The background queue holds its limit of ${limit} turns; try again later` });
  }
  override get retryable(): boolean {
    return true;
  }
}

/** Background turns (or schedules) were asked for, but this app runs none (`background: false`). */
export class BackgroundUnavailableError extends UserError {
  readonly code = 'background_unavailable';
  constructor(what = 'Background turns') {
    super({ message: `${what} are not enabled on this server` });
  }
}

/** A tenant holds as many schedules as it may. */
export class TooManySchedulesError extends UserError {
  readonly code = 'too_many_schedules';
  constructor(limit: number) {
    super({ message: `A tenant holds at most ${limit} schedules; delete one first` });
  }
}
