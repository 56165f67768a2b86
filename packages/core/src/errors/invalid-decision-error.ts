import type { SwitchboardErrorOptions } from './switchboard-error.js';
import { SystemError } from './system-error.js';

/** An orchestrator returned something that is not a `ToolCall`, a non-empty `ToolCall[]` or an `ErrorMessage`. */
export class InvalidDecisionError extends SystemError {
  readonly code = 'invalid_decision';
  constructor({ message, cause }: SwitchboardErrorOptions) {
    super({ message: `Invalid orchestrator decision: ${message}`, cause });
  }
}
