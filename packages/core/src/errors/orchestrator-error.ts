import { describeError } from './describe-error.js';
import { SystemError } from './system-error.js';

/** An orchestrator threw instead of returning a decision. */
export class OrchestratorError extends SystemError {
  readonly code = 'orchestrator_error';
  constructor({ orchestrator, cause }: { orchestrator: string; cause: unknown }) {
    super({ message: `Orchestrator '${orchestrator}' failed: ${describeError(cause)}`, cause });
  }
}
