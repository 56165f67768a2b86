import { SystemError } from './system-error.js';

/** A decision fanned out while the turn's strategy profile allows one call per decision. */
export class FanOutNotAllowedError extends SystemError {
  readonly code = 'fan_out_not_allowed';
  constructor({ profile, calls }: { profile: string; calls: number }) {
    super({
      message: `The '${profile}' profile allows one agent call per decision; this decision made ${calls} at once`,
    });
  }
}
