import { A2AError, RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { type SwitchboardError, SwitchboardError as SwitchboardErrorBase } from '@switchboard/core';
import { publicErrorOf } from '../backend/public-error.js';

/** What an A2A client reads for an unexpected error: never its text, which may name hosts or internals. */
const INTERNAL_MESSAGE = 'Internal server error';

/**
 * The error an A2A client gets for `error`: A2A errors as they are; a
 * Switchboard error as the HTTP routes tell it (`publicErrorOf`: a user
 * error with its message, a store outage without the store's name, anything
 * else without its text), as a task not found, a malformed request or an
 * internal error; anything else as a bare internal error. Logged here, once:
 * what this returns passes through again unchanged.
 */
export function a2aErrorOf(error: unknown, log: (error: unknown) => void): Error {
  if (error instanceof A2AError) return error;
  if (SwitchboardErrorBase.isInstance(error)) {
    const { status, message } = publicErrorOf(error as SwitchboardError, log);
    if (status === 404) return new TaskNotFoundError(message);
    if (status < 500) return new RequestMalformedError(message);
    return new A2AError({ message });
  }
  log(error);
  return new A2AError({ message: INTERNAL_MESSAGE });
}
