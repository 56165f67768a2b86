import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';

/** The most sub-goals a perception snapshot may list. */
export const MAX_SUB_GOALS = 10;

/**
 * Schema of the perception agent's default snapshot of a request: the
 * entities it names, the intent, the constraints it sets, the sub-goals that
 * would satisfy it (at most 10, in order) and the model's confidence (0–1)
 * that it understood.
 */
export const PerceptionSnapshotSchema = z.object({
  entities: z.array(z.object({ name: z.string(), type: z.string() })).max(50),
  intent: z.string().min(1),
  constraints: z.array(z.string()).max(20),
  subGoals: z.array(z.string()).max(MAX_SUB_GOALS),
  confidence: z.number().min(0).max(1),
});

/** What the perception agent understood of a request (its default schema). */
export type PerceptionSnapshot = z.infer<typeof PerceptionSnapshotSchema>;

/** The strict JSON schema the model is asked to fill for the default snapshot. */
export const SNAPSHOT_FORMAT: ResponseFormatJSONSchema = {
  type: 'json_schema',
  json_schema: {
    name: 'perception',
    description: 'What the request asks for',
    strict: true,
    schema: {
      type: 'object',
      properties: {
        entities: {
          type: 'array',
          description: 'The things the request names: people, products, places, dates, amounts',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, type: { type: 'string' } },
            required: ['name', 'type'],
            additionalProperties: false,
          },
        },
        intent: { type: 'string', description: 'What the user wants, in a few words' },
        constraints: { type: 'array', items: { type: 'string' }, description: 'Limits the request sets' },
        subGoals: {
          type: 'array',
          items: { type: 'string' },
          description: `The steps that would satisfy the request, in order, at most ${MAX_SUB_GOALS}`,
        },
        confidence: { type: 'number', description: 'From 0 to 1: how sure you are that you understood' },
      },
      required: ['entities', 'intent', 'constraints', 'subGoals', 'confidence'],
      additionalProperties: false,
    },
  },
};

/** The response format for a user's own schema: its JSON Schema, not strict (zod may describe what strict mode cannot). */
export function formatOf(schema: z.ZodType): ResponseFormatJSONSchema {
  const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema, {
    io: 'output',
    unrepresentable: 'any',
  });
  return {
    type: 'json_schema',
    json_schema: {
      name: 'perception',
      description: 'What the request asks for',
      strict: false,
      schema: jsonSchema,
    },
  };
}

/**
 * The default perception snapshot an agent reply carries, if it carries one
 * (its `metadata.data`, checked against {@link PerceptionSnapshotSchema}).
 *
 * @example
 * ```ts
 * const snapshot = perceptionOf(latestToolResults(conversation)[0]);
 * if (snapshot && snapshot.confidence < 0.5) return routeToUser('Could you say more about what you need?');
 * ```
 */
export function perceptionOf(
  message: { metadata?: Record<string, unknown> } | undefined,
): PerceptionSnapshot | undefined {
  const parsed = PerceptionSnapshotSchema.safeParse(message?.metadata?.data);
  return parsed.success ? parsed.data : undefined;
}
