/**
 * The configuration items an operator may set at run time, each with the
 * zod schema that validates it, and the limits every item is held to.
 *
 * @module
 */
import { z } from 'zod';

/** The most bytes an item's value may take as JSON. */
export const MAX_ITEM_BYTES = 32_768;
/** The most items (not counting deleted ones) one scope (the app-wide one, or one tenant) may hold. */
export const MAX_ITEMS_PER_SCOPE = 200;
/** How many versions of each item are kept (older ones are dropped, and can no longer be read or rolled back to). */
export const MAX_VERSIONS_KEPT = 20;
/** The longest comment a change may carry. */
export const MAX_COMMENT_LENGTH = 500;

/** An item's name: a letter or digit, then up to 99 letters, digits or `_ . : -`. */
export const ItemNameSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/,
    'must be 1-100 letters, digits or _ . : - (starting with a letter or digit)',
  );

const text = (max: number) => z.string().trim().min(1).max(max);
const names = (max: number) => z.array(ItemNameSchema).max(max);

/**
 * `task-type`, named after the task type: a kind of request a `MetaRouter`
 * tells apart. It adds a task type, or replaces the one of that name the
 * router was built with; `enabled: false` hides one.
 */
export const TaskTypeItemSchema = z.strictObject({
  description: text(2_000),
  whenToUse: text(2_000).optional(),
  framing: text(4_000).optional(),
  /** The patterns that may handle it, by name; the first is its default. */
  patterns: names(20).min(1),
  enabled: z.boolean().optional(),
});

/**
 * `pattern`, named after one of a `MetaRouter`'s patterns (an orchestrator
 * in code): when it fits, the agents it may call (a subset of its own), or
 * `enabled: false` to take it out of every task type.
 */
export const PatternItemSchema = z.strictObject({
  whenToUse: text(2_000).optional(),
  agents: names(200).min(1).optional(),
  enabled: z.boolean().optional(),
});

const StepConditionSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('used'), agent: ItemNameSchema, description: text(500).optional() }),
  z.strictObject({
    type: z.literal('sequence_match'),
    sequence: names(50).min(1).optional(),
    description: text(500).optional(),
  }),
]);

const agentPatterns = z
  .array(z.string().regex(/^[A-Za-z0-9_.:*-]{1,100}$/, 'must be an agent name or a pattern with *'))
  .max(200);

/**
 * `step-rules`, named after a step-rules wrapper (`withSteps`, its `name`):
 * the steps it runs instead of those it was built with. Conditions are
 * `used` and `sequence_match` (a `predicate` is code, not configuration).
 */
export const StepRulesItemSchema = z.strictObject({
  steps: z
    .array(
      z.strictObject({
        name: text(100),
        description: z.string().max(2_000),
        isDefault: z.boolean().optional(),
        conditions: z.array(StepConditionSchema).max(20).optional(),
        sequence: names(50).optional(),
        allowed: agentPatterns.optional(),
        denied: agentPatterns.optional(),
      }),
    )
    .min(1)
    .max(50),
});

/** `keywords`, named after an agent: the keywords the keyword router matches for it, instead of its own. */
export const KeywordsItemSchema = z.strictObject({
  keywords: z.array(text(100)).min(1).max(200),
});

const whole = (least: number) => z.number().int().min(least);

/**
 * `profile`, named after a strategy profile: its limits (any left out are
 * the `fallback` profile's). It replaces the app's profile of that name, or
 * adds one.
 */
export const ProfileItemSchema = z.strictObject({
  maxHops: whole(1).max(1_000).optional(),
  turnTimeoutMs: whole(1).max(86_400_000).optional(),
  agentTimeoutMs: whole(1).max(86_400_000).optional(),
  agentRetries: whole(0).max(20).optional(),
  retryBaseDelayMs: whole(0).max(600_000).optional(),
  retryMaxDelayMs: whole(0).max(600_000).optional(),
  maxReplans: whole(0).max(100).optional(),
  maxRounds: whole(1).max(100).optional(),
  allowFanOut: z.boolean().optional(),
  onLimit: z.enum(['partial', 'error']).optional(),
});

/** Every item type and its schema. */
export const CONFIG_ITEM_SCHEMAS = {
  'task-type': TaskTypeItemSchema,
  pattern: PatternItemSchema,
  'step-rules': StepRulesItemSchema,
  keywords: KeywordsItemSchema,
  profile: ProfileItemSchema,
} as const;

/** The kinds of configuration item. */
export type ConfigItemType = keyof typeof CONFIG_ITEM_SCHEMAS;

/** Every item type, in the order the API lists them. */
export const CONFIG_ITEM_TYPES = Object.keys(CONFIG_ITEM_SCHEMAS) as ConfigItemType[];

/** A `task-type` item's value. */
export type TaskTypeItem = z.infer<typeof TaskTypeItemSchema>;
/** A `pattern` item's value. */
export type PatternItem = z.infer<typeof PatternItemSchema>;
/** A `step-rules` item's value. */
export type StepRulesItem = z.infer<typeof StepRulesItemSchema>;
/** A `keywords` item's value. */
export type KeywordsItem = z.infer<typeof KeywordsItemSchema>;
/** A `profile` item's value. */
export type ProfileItem = z.infer<typeof ProfileItemSchema>;

/** The value type of each item type. */
export interface ConfigItemValues {
  'task-type': TaskTypeItem;
  pattern: PatternItem;
  'step-rules': StepRulesItem;
  keywords: KeywordsItem;
  profile: ProfileItem;
}

/** True when `type` names a kind of configuration item. */
export function isConfigItemType(type: unknown): type is ConfigItemType {
  return typeof type === 'string' && Object.hasOwn(CONFIG_ITEM_SCHEMAS, type);
}
