/**
 * The config API, `/v1/config…`: list, read, change, delete, roll back and
 * compare the live configuration items (see `ConfigAdmin`). A key acts on
 * its own tenant's items (`?scope=app` reads the app-wide defaults); a
 * server without auth acts on the app-wide items.
 *
 * @module
 */

import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import { InsufficientScopeError } from '../backend/access-errors.js';
import { hasScope, type Principal } from '../backend/principal.js';
import type { ConfigAdmin, ConfigTarget, ConfigWriteOptions } from '../config/config-admin.js';
import { principalOf } from './access.js';
import type { LimitedHandler } from './body-limits.js';
import { DeleteQuery, DiffQuery, PutBody, ReadQuery, RollbackBody } from './config-schemas.js';
import { parseJsonBody, parseOrThrow } from './http-errors.js';

/** `config:write` covers reading too; `admin` covers both. */
function requireConfigScope(principal: Principal | undefined, write: boolean): void {
  if (!principal) return;
  if (hasScope(principal, 'config:write')) return;
  if (!write && hasScope(principal, 'config:read')) return;
  throw new InsufficientScopeError({ scope: write ? 'config:write' : 'config:read' });
}

/** Whose items a read concerns: the key's tenant, or the app-wide ones (`?scope=app`, or no auth). */
function readTarget(c: Context, scope: 'app' | 'tenant' | undefined): ConfigTarget {
  const principal = principalOf(c);
  requireConfigScope(principal, false);
  return principal && scope !== 'app' ? { tenantId: principal.tenantId } : {};
}

/** Whose items a change concerns, and who makes it: always the key's own tenant. */
function writeOptions(
  c: Context,
  body: { comment?: string; expectedVersion?: number; updatedBy?: string },
): ConfigWriteOptions {
  const principal = principalOf(c);
  requireConfigScope(principal, true);
  const options: ConfigWriteOptions = {};
  if (principal) options.tenantId = principal.tenantId;
  // With a key, the key says who it is; a body's claim counts only without auth.
  const by = principal ? (principal.keyName ?? principal.tenantId) : body.updatedBy;
  if (by !== undefined) options.updatedBy = by;
  if (body.comment !== undefined) options.comment = body.comment;
  if (body.expectedVersion !== undefined) options.expectedVersion = body.expectedVersion;
  return options;
}

/** Mounts the config API; `limited` applies the body size limit and content type check to a handler. */
export function mountConfigRoutes(
  app: Hono,
  config: ConfigAdmin,
  limited: LimitedHandler,
): Record<string, readonly string[]> {
  const key = (c: Context) => [c.req.param('type') ?? '', c.req.param('name') ?? ''] as const;
  const query = <T>(schema: z.ZodType<T>, c: Context) => parseOrThrow(schema, c.req.query(), 'query');

  app.get('/v1/config', async (c) => {
    const { scope } = query(ReadQuery, c);
    const target = readTarget(c, scope);
    const listing = await config.list(target);
    return c.json({
      scope: target.tenantId === undefined ? 'app' : 'tenant',
      types: config.types,
      ...listing,
    });
  });
  app.get('/v1/config/:type/:name', async (c) => {
    const { scope, version } = query(ReadQuery, c);
    const [type, name] = key(c);
    return c.json(await config.get(type, name, { ...readTarget(c, scope), version }));
  });
  app.get('/v1/config/:type/:name/versions', async (c) => {
    const { scope } = query(ReadQuery, c);
    const [type, name] = key(c);
    return c.json({ versions: await config.versions(type, name, readTarget(c, scope)) });
  });
  app.get('/v1/config/:type/:name/diff', async (c) => {
    const { scope, from, to } = query(DiffQuery, c);
    const [type, name] = key(c);
    return c.json(await config.diff(type, name, from, to, readTarget(c, scope)));
  });
  app.put(
    '/v1/config/:type/:name',
    limited(async (c) => {
      const body = parseOrThrow(PutBody, parseJsonBody(await c.req.text()), 'config item');
      const [type, name] = key(c);
      return c.json(await config.put(type, name, body.value, writeOptions(c, body)));
    }),
  );
  app.delete('/v1/config/:type/:name', async (c) => {
    const [type, name] = key(c);
    return c.json(await config.delete(type, name, writeOptions(c, query(DeleteQuery, c))));
  });
  app.post(
    '/v1/config/:type/:name/rollback',
    limited(async (c) => {
      const body = parseOrThrow(RollbackBody, parseJsonBody(await c.req.text()), 'rollback');
      const [type, name] = key(c);
      return c.json(await config.rollback(type, name, body.version, writeOptions(c, body)));
    }),
  );
  return {
    '/v1/config': ['GET'],
    '/v1/config/:type/:name': ['GET', 'PUT', 'DELETE'],
    '/v1/config/:type/:name/versions': ['GET'],
    '/v1/config/:type/:name/diff': ['GET'],
    '/v1/config/:type/:name/rollback': ['POST'],
  };
}
