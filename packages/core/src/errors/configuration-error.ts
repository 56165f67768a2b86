import type { SwitchboardErrorOptions } from './switchboard-error.js';
import { SystemError } from './system-error.js';

/** A misconfiguration detected at construction time: duplicate agent names, an unknown agent in a map. */
export class ConfigurationError extends SystemError {
  readonly code = 'configuration_error';
  constructor({ message, cause }: SwitchboardErrorOptions) {
    super({ message, cause });
  }
}
