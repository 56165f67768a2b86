import { z } from 'zod';
import { TurnStatusSchema } from '../turns/turn-schemas.js';

/** The label of a decision that called no agent: it answered the user (or failed). */
export const NO_AGENT = '(no agent)';

/** Bounds of a dataset, so that a stray file cannot exhaust memory. */
export const DATASET_LIMITS = {
  /** Cases per dataset. */
  cases: 100_000,
  /** Characters of one message. */
  messageChars: 32_000,
  /** Messages of a case's conversation so far. */
  conversationMessages: 200,
} as const;

const text = z.string().min(1).max(DATASET_LIMITS.messageChars);

/** One message of a conversation so far. */
export const EvalMessageSchema = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: text,
});

/** A case's input: the user's message, or a conversation whose last message is the user's. */
export const EvalInputSchema = z.union([
  text,
  z
    .array(EvalMessageSchema)
    .min(1)
    .max(DATASET_LIMITS.conversationMessages)
    .refine((messages) => messages.at(-1)?.role === 'user', 'the last message must be the user’s'),
]);

const agentName = z.string().min(1).max(200);

/** What a case expects; every field is optional and only the given ones are checked. */
export const EvalExpectationSchema = z
  .strictObject({
    /**
     * The agent of the turn's first decision, several for a fan-out (as a
     * set), or `null` when the first decision answers the user without any
     * agent (out of scope).
     */
    agent: z.union([agentName, z.array(agentName).min(1), z.null()]).optional(),
    /** The agents the whole turn called, in call order. */
    trajectory: z.array(agentName).optional(),
    /**
     * How `trajectory` is compared: `exact` (default: the same agents in the
     * same order), `in-order` (these agents in this order, others between
     * them allowed) or `set` (the same agents, in any order).
     */
    trajectoryMatch: z.enum(['exact', 'in-order', 'set']).optional(),
    /** How the turn ends. */
    status: TurnStatusSchema.optional(),
    /** Text the answer contains (all of them, case-insensitive). */
    contains: z.union([text, z.array(text).min(1)]).optional(),
  })
  .refine((expect) => Object.keys(expect).length > 0, 'expect needs at least one expectation')
  .refine(
    (expect) => expect.trajectoryMatch === undefined || expect.trajectory !== undefined,
    'trajectoryMatch needs a trajectory',
  );

/** One labelled case of a dataset. */
export const EvalCaseSchema = z.strictObject({
  /** Unique within the dataset (default: `case-<line>` for JSONL, `case-<index>` for YAML). */
  id: z.string().min(1).max(200).optional(),
  input: EvalInputSchema,
  expect: EvalExpectationSchema,
  tags: z.array(z.string().min(1).max(100)).max(50).optional(),
});

/** A case as written in a dataset file. */
export type EvalCaseInput = z.input<typeof EvalCaseSchema>;

/** What a case expects (see {@link EvalExpectationSchema}). */
export type EvalExpectation = z.output<typeof EvalExpectationSchema>;

/** One message of a case's conversation so far. */
export type EvalMessage = z.output<typeof EvalMessageSchema>;

/** One labelled case, with its id. */
export interface EvalCase extends Omit<z.output<typeof EvalCaseSchema>, 'id'> {
  id: string;
  /** Where the case was written (`file:line`), for reports. */
  source?: string;
}

/** A loaded dataset. */
export interface Dataset {
  /** The dataset's name (its file name without extension, by default). */
  name: string;
  cases: EvalCase[];
}

/** The label of an expected or decided set of agents: the names sorted and joined by `+`, or {@link NO_AGENT}. */
export function agentLabel(agents: readonly string[] | null): string {
  if (agents === null || agents.length === 0) return NO_AGENT;
  return agents.length === 1 ? (agents[0] as string) : [...new Set(agents)].sort().join('+');
}

/** The expected first-decision agents of a case, `null` for none, undefined when the case does not say. */
export function expectedAgents(expect: EvalExpectation): string[] | null | undefined {
  if (expect.agent === undefined || expect.agent === null) return expect.agent;
  return typeof expect.agent === 'string' ? [expect.agent] : expect.agent;
}
