import type { ServerCallContext } from '@a2a-js/sdk/server';
import { createSecretId } from '@switchboard/core';
import type { Caller, ServerBackend } from '../backend/server-backend.js';

/** The key of the {@link Caller} in `ServerCallContext.state`. */
export const CALLER_KEY = 'switchboard.caller';

/** The key of the request's abort signal in `ServerCallContext.state`: it aborts when the client leaves. */
export const SIGNAL_KEY = 'switchboard.signal';

/** The abort signal the route stored on the call context (one that never aborts without it). */
export function signalOf(context: ServerCallContext): AbortSignal {
  return (context.state.get(SIGNAL_KEY) as AbortSignal | undefined) ?? new AbortController().signal;
}

/** The caller the route stored on the call context. */
export function callerOf(context: ServerCallContext): Caller {
  return (context.state.get(CALLER_KEY) as Caller | undefined) ?? { requestId: createSecretId('req') };
}

/** The sessions a caller may read: its tenant's, or, for a user-bound key, its user's. */
export function sessionsOf(backend: Pick<ServerBackend, 'sessionsOf'>, caller: Caller) {
  return backend.sessionsOf(caller.tenantId, caller.principal?.userId);
}
