import { z } from 'zod';
import {
  CONFIG_ITEM_TYPES,
  MAX_ITEM_BYTES,
  MAX_ITEMS_PER_SCOPE,
  MAX_VERSIONS_KEPT,
} from '../config/config-items.js';
import {
  ConfigDiffSchema,
  ConfigEntrySchema,
  ConfigListingSchema,
  PutBody,
  RollbackBody,
} from './config-schemas.js';
import { ErrorResponseSchema } from './schemas.js';

const toJson = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' });
const json = (schema: z.ZodType) => ({ 'application/json': { schema: toJson(schema) } });
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      String(status),
      { description: `Error ${status}`, content: json(ErrorResponseSchema) },
    ]),
  );
const ok = (description: string, schema: z.ZodType) => ({ '200': { description, content: json(schema) } });
const path = (name: string, description: string, schema: Record<string, unknown>) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});
const query = (name: string, description: string, schema: Record<string, unknown>, required = false) => ({
  name,
  in: 'query',
  required,
  description,
  schema,
});
const item = [
  path('type', 'The item type', { type: 'string', enum: CONFIG_ITEM_TYPES }),
  path('name', 'The item name (a task type, pattern, step-rules wrapper, agent or profile)', {
    type: 'string',
  }),
];
const scope = query(
  'scope',
  '`app` reads the app-wide items (every tenant’s defaults); default the key’s tenant',
  {
    type: 'string',
    enum: ['app', 'tenant'],
  },
);
const version = (name: string, description: string, required = false) =>
  query(name, description, { type: 'integer', minimum: 1 }, required);
const LIMITS = `An item takes at most ${MAX_ITEM_BYTES} bytes as JSON; a scope holds at most ${MAX_ITEMS_PER_SCOPE} items; the last ${MAX_VERSIONS_KEPT} versions of each are kept.`;
const SCOPES =
  'Reads need the `config:read` scope, changes `config:write` (or `admin`); a key acts on its own tenant’s items, a server without auth on the app-wide ones.';

/** The OpenAPI paths of the config API, for the app's document. */
export function configPaths() {
  return {
    '/v1/config': {
      get: {
        summary: 'Lists the live configuration items of the key’s tenant (or the app-wide ones)',
        description: SCOPES,
        parameters: [scope],
        responses: {
          ...ok('The items and the scope’s version', ConfigListingSchema),
          ...errors(400, 401, 403),
        },
      },
    },
    '/v1/config/{type}/{name}': {
      get: {
        summary: 'Reads an item, at its current version or an earlier one',
        parameters: [...item, scope, version('version', 'An earlier version (default the current one)')],
        responses: { ...ok('The item', ConfigEntrySchema), ...errors(400, 401, 403, 404) },
      },
      put: {
        summary: 'Sets an item: the scope’s next version',
        description: `Validated by the type’s schema and against the app’s agents and patterns: a bad item is a 400 listing the issues, and changes nothing. With \`expectedVersion\` (0: the item must not exist), a concurrent edit is refused with 409 \`version_conflict\` and the \`currentVersion\`. ${LIMITS} ${SCOPES}`,
        parameters: item,
        requestBody: { required: true, content: json(PutBody) },
        responses: { ...ok('The new version', ConfigEntrySchema), ...errors(400, 401, 403, 409, 413, 415) },
      },
      delete: {
        summary: 'Deletes an item (its deletion is a version of its own: a rollback brings it back)',
        parameters: [
          ...item,
          query('expectedVersion', 'Compare-and-set: the item’s current version', {
            type: 'integer',
            minimum: 0,
          }),
          query('comment', 'Why', { type: 'string' }),
        ],
        responses: { ...ok('The deletion’s version', ConfigEntrySchema), ...errors(400, 401, 403, 404, 409) },
      },
    },
    '/v1/config/{type}/{name}/versions': {
      get: {
        summary: `The item’s last ${MAX_VERSIONS_KEPT} versions, newest first, with who made each, when and why`,
        parameters: [...item, scope],
        responses: {
          ...ok('The versions', z.object({ versions: z.array(ConfigEntrySchema) })),
          ...errors(400, 401, 403),
        },
      },
    },
    '/v1/config/{type}/{name}/diff': {
      get: {
        summary: 'The differences between two versions of an item',
        parameters: [
          ...item,
          scope,
          version('from', 'The older version', true),
          version('to', 'The newer version', true),
        ],
        responses: { ...ok('The differences', ConfigDiffSchema), ...errors(400, 401, 403, 404) },
      },
    },
    '/v1/config/{type}/{name}/rollback': {
      post: {
        summary: 'Makes an earlier version’s value the item’s next version',
        parameters: item,
        requestBody: { required: true, content: json(RollbackBody) },
        responses: { ...ok('The new version', ConfigEntrySchema), ...errors(400, 401, 403, 404, 409) },
      },
    },
  };
}
