import { SystemError } from './system-error.js';

/** `RequestContext.current()` was called outside a request. */
export class ContextMissingError extends SystemError {
  readonly code = 'context_missing';
  constructor() {
    super({
      message:
        'No RequestContext is active: RequestContext.current() can only be called while a request is being handled (inside an orchestrator, an agent or RequestContext.run())',
    });
  }
}
