/**
 * The request and response shapes of the config API, for its routes and
 * its OpenAPI description.
 *
 * @module
 */
import { z } from 'zod';
import { MAX_COMMENT_LENGTH } from '../config/config-items.js';

const Version = z.coerce.number().int().min(1);
const Comment = z.string().max(MAX_COMMENT_LENGTH);
const UpdatedBy = z.string().trim().min(1).max(100);

/** The body of `PUT /v1/config/:type/:name`. */
export const PutBody = z.strictObject({
  value: z.unknown(),
  comment: Comment.optional(),
  expectedVersion: z.number().int().min(0).optional(),
  /** Who made the change, on a server without auth (with auth it is the key's name). */
  updatedBy: UpdatedBy.optional(),
});
/** The body of `POST /v1/config/:type/:name/rollback`. */
export const RollbackBody = z.strictObject({
  version: z.number().int().min(1),
  comment: Comment.optional(),
  expectedVersion: z.number().int().min(0).optional(),
  updatedBy: UpdatedBy.optional(),
});
/** The query of `DELETE /v1/config/:type/:name`. */
export const DeleteQuery = z.object({
  comment: Comment.optional(),
  expectedVersion: z.coerce.number().int().min(0).optional(),
  updatedBy: UpdatedBy.optional(),
});
/** The query of the reads. */
export const ReadQuery = z.object({
  scope: z.enum(['app', 'tenant']).optional(),
  version: Version.optional(),
});
/** The query of `GET /v1/config/:type/:name/diff`. */
export const DiffQuery = z.object({
  scope: z.enum(['app', 'tenant']).optional(),
  from: Version,
  to: Version,
});

/** One version of a config item, as every route answers it. */
export const ConfigEntrySchema = z.object({
  type: z.string(),
  name: z.string(),
  version: z.number().int().describe("The scope's version this change made"),
  value: z.unknown().optional(),
  deleted: z.literal(true).optional(),
  updatedAt: z.string(),
  updatedBy: z.string().optional(),
  comment: z.string().optional(),
});

/** `GET /v1/config`. */
export const ConfigListingSchema = z.object({
  scope: z.enum(['app', 'tenant']),
  types: z.array(z.string()),
  version: z.number().int(),
  items: z.array(ConfigEntrySchema),
});

/** `GET /v1/config/:type/:name/diff`. */
export const ConfigDiffSchema = z.object({
  type: z.string(),
  name: z.string(),
  from: z.number().int(),
  to: z.number().int(),
  differences: z.array(
    z.object({ path: z.string(), before: z.unknown().optional(), after: z.unknown().optional() }),
  ),
});
