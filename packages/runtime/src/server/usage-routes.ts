import { NotFoundError } from '@switchboard/core';
import type { Hono } from 'hono';
import { z } from 'zod';
import { checkSessionOwner, requireScope } from '../backend/access-checks.js';
import type { UsageReport } from '../budgets/budgets.js';
import type { SessionStore } from '../stores/session-store.js';
import { principalOf } from './access.js';
import { errorResponse, parseOrThrow } from './http-errors.js';
import { SessionIdSchema } from './schemas.js';

/** The query of `GET /v1/usage`. */
const UsageQuerySchema = z.strictObject({ sessionId: SessionIdSchema.optional() });

/** What the usage route needs from the app. */
export interface UsageBackend {
  /** The report of a tenant's spending (and a session's); undefined when the app has no budgets. */
  usage?: (
    tenantId: string | undefined,
    sessionId: string | undefined,
    tenantTotals: boolean,
  ) => Promise<UsageReport>;
  sessionsOf(tenantId: string | undefined, userId?: string): SessionStore;
}

/**
 * Mounts `GET /v1/usage` (scope `sessions:read`): the caller's tenant's
 * spending this UTC day and month against its budgets and, with
 * `?sessionId=`, that session's this period. Scoped like sessions: a key
 * sees its own tenant only, another tenant's session is a 404, and a
 * user-bound key sees its own sessions only, never the tenant's totals
 * (it must name a session). 404 `not_configured` when the app has no budgets.
 */
export function mountUsage(app: Hono, backend: UsageBackend): void {
  app.get('/v1/usage', async (c) => {
    const principal = principalOf(c);
    requireScope(principal, 'sessions:read');
    const { sessionId } = parseOrThrow(UsageQuerySchema, c.req.query(), 'query');
    if (!backend.usage)
      return errorResponse(
        c,
        404,
        'not_configured',
        'This server has no spending budgets (the app’s budgets option)',
      );
    const userBound = principal?.userId !== undefined;
    if (sessionId === undefined && userBound)
      return errorResponse(
        c,
        400,
        'validation_error',
        'A key bound to a user reads a session’s usage: add ?sessionId=',
      );
    if (sessionId !== undefined) {
      const sessions = backend.sessionsOf(principal?.tenantId);
      // Another tenant's (or user's) session is not there at all for this key: 404, as on GET /v1/sessions/:id.
      if ((await sessions.lastTurn(sessionId)) === undefined)
        throw new NotFoundError({ resource: 'Session', id: sessionId });
      await checkSessionOwner(sessions, sessionId, principal);
    }
    return c.json(await backend.usage(principal?.tenantId, sessionId, !userBound));
  });
}
