/**
 * `POST /v1/schedules`, `GET /v1/schedules` and `DELETE /v1/schedules/:id`:
 * messages run as background turns on a timer or a cron pattern, scoped to
 * the caller's tenant (and user, with a user-bound key) like sessions.
 *
 * @module
 */

import { NotFoundError } from '@switchboard/core';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { checkSessionOwner, requireScope } from '../backend/access-checks.js';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import { BackgroundUnavailableError } from '../background/background-errors.js';
import { MIN_SCHEDULE_EVERY_MS, type ScheduleRequest } from '../background/schedules.js';
import { principalOf } from './access.js';
import type { LimitedHandler } from './body-limits.js';
import { parseJsonBody, parseOrThrow } from './http-errors.js';
import { MetadataSchema, messageSchema, SessionIdSchema, TurnIdSchema } from './schemas.js';

/** Builds the `POST /v1/schedules` body schema for a maximum message length. */
export function scheduleRequestSchema(maxMessageLength: number) {
  return z.strictObject({
    message: messageSchema(maxMessageLength),
    every: z
      .number()
      .int()
      .min(MIN_SCHEDULE_EVERY_MS, `every is in milliseconds, at least ${MIN_SCHEDULE_EVERY_MS}`)
      .optional(),
    cron: z.string().min(1).max(120).optional(),
    timezone: z.string().min(1).max(64).optional(),
    /** The session every run continues; without it, each run opens a new session. */
    sessionId: SessionIdSchema.optional(),
    userId: z.string().min(1).max(256).optional(),
    metadata: MetadataSchema.optional(),
    callbackUrl: z.string().max(2_048).optional(),
  });
}

/** What the schedule routes need from the rest of the routes. */
export interface ScheduleRouteOptions {
  limited: LimitedHandler;
  maxMessageLength: number;
  callerOf: (c: Context, userId?: string) => Caller;
}

/** Mounts the schedule routes (each 400 `background_unavailable` on an app without background turns). */
export function mountSchedules(
  app: Hono,
  backend: ServerBackend,
  { limited, maxMessageLength, callerOf }: ScheduleRouteOptions,
): void {
  const Body = scheduleRequestSchema(maxMessageLength);
  const schedulesOf = () => {
    if (!backend.schedules) throw new BackgroundUnavailableError('Schedules');
    return backend.schedules;
  };
  app.post(
    '/v1/schedules',
    limited(async (c) => {
      const schedules = schedulesOf();
      const principal = principalOf(c);
      requireScope(principal, 'chat');
      const body = parseOrThrow(Body, parseJsonBody(await c.req.text()), 'schedule');
      const {
        principal: _principal,
        requestId: _requestId,
        depth: _depth,
        ...caller
      } = callerOf(c, body.userId);
      if (body.sessionId !== undefined && principal?.userId !== undefined) {
        await checkSessionOwner(backend.sessionsOf(principal.tenantId), body.sessionId, principal, {
          allowNew: true,
        });
      }
      if (body.callbackUrl !== undefined) backend.background?.checkCallback(body.callbackUrl);
      const request: ScheduleRequest = { ...body, ...caller };
      return c.json(await schedules.create(request), 201);
    }),
  );
  app.get('/v1/schedules', async (c) => {
    const principal = principalOf(c);
    requireScope(principal, 'sessions:read');
    return c.json({
      data: await schedulesOf().list({ tenantId: principal?.tenantId, userId: principal?.userId }),
    });
  });
  app.delete('/v1/schedules/:id', async (c) => {
    const principal = principalOf(c);
    requireScope(principal, 'chat');
    const id = parseOrThrow(TurnIdSchema, c.req.param('id'), 'schedule id');
    if (!(await schedulesOf().delete(id, { tenantId: principal?.tenantId, userId: principal?.userId })))
      throw new NotFoundError({ resource: 'Schedule', id });
    return c.body(null, 204);
  });
}
