import { A2AError, RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { type SwitchboardError, SwitchboardError as SwitchboardErrorBase } from '@switchboard/core';

/** What an A2A client reads for an unexpected error: never its text, which may name hosts or internals. */
const INTERNAL_MESSAGE = 'Internal server error';

/**
 * The error an A2A client gets for `error`: A2A errors as they are, a
 * Switchboard user error (an unknown session, a busy one, a bad id) with
 * its message, anything else as a bare internal error (logged here, once:
 * what this returns passes through again unchanged).
 */
export function a2aErrorOf(error: unknown, log: (error: unknown) => void): Error {
  if (error instanceof A2AError) return error;
  if (SwitchboardErrorBase.isInstance(error)) {
    const known = error as SwitchboardError;
    if (known.kind === 'user')
      return known.code === 'not_found'
        ? new TaskNotFoundError(known.message)
        : new RequestMalformedError(known.message);
  }
  log(error);
  return new A2AError({ message: INTERNAL_MESSAGE });
}
