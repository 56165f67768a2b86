import { SwitchboardError } from './switchboard-error.js';

/** An error inside Switchboard or its plugins: a failing agent, a store outage, a routing loop. */
export abstract class SystemError extends SwitchboardError {
  readonly kind = 'system' as const;
}
