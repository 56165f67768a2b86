import { AgentError, ConfigurationError } from '@switchboard/core';
import {
  type Agent,
  AgentInputError,
  AgentOutputError,
  type AgentReplyWithMetadata,
  type BlockedPatternsOptions,
  blockedPatterns,
  defineAgent,
  type GuardCheck,
  type LlmClientOptions,
} from '@switchboard/runtime';
import { clientResolver } from '@switchboard/runtime/internal';
import type { z } from 'zod';
import { askForStructuredAnswer, checkWholeNumbers, jsonAnswerCheck } from './llm-structured-output.js';
import {
  formatOf,
  type PerceptionSnapshot,
  PerceptionSnapshotSchema,
  SNAPSHOT_FORMAT,
} from './perception-schema.js';

/** A request the perception agent's pattern check refused: the model never saw it. */
export class PerceptionBlockedError extends AgentError {
  override readonly code = 'blocked';
}

/** Options of {@link perceptionAgent}. */
export interface PerceptionAgentOptions<Value = PerceptionSnapshot> extends LlmClientOptions {
  /** Default `perception`. */
  name?: string;
  description?: string;
  /** The model, e.g. `gpt-4o-mini`; it must support JSON-schema structured output. */
  model: string;
  /** Your own snapshot shape (a zod schema); default {@link PerceptionSnapshotSchema}. */
  schema?: z.ZodType<Value>;
  /** Replaces the system prompt's description of the task. */
  instructions?: string;
  /** Further attempts after an answer that does not fit the schema, each with feedback. Default 1. */
  maxRetries?: number;
  /** The fewest characters a request may have (after trimming). Default 3. */
  minChars?: number;
  /** The most characters a request may have. Default 5 000. */
  maxChars?: number;
  /**
   * The suspicious-pattern check run on the request before the model sees
   * it: the options of `blockedPatterns` (its `input` and `toolInput`
   * rules: prompt injection, path traversal, shell and code execution), or
   * `false` for none. Default: the built-in rules.
   */
  patterns?: BlockedPatternsOptions | false;
  temperature?: number;
}

const DEFAULT_INSTRUCTIONS =
  "You read a user's request before anything acts on it, and describe it: the entities it names (each with a type), " +
  'the intent in a few words, the constraints it sets (budgets, dates, formats, exclusions), the sub-goals that would ' +
  'satisfy it in order (at most 10), and your confidence from 0 to 1 that you understood it. Do not answer the request.';
const CUSTOM_INSTRUCTIONS =
  "You read a user's request before anything acts on it, and describe it as the JSON schema asks. Do not answer the request.";

/**
 * A ready-made agent that reads a request and returns what it asks for, as
 * structured output through the `openai` client: by default the snapshot of
 * {@link PerceptionSnapshotSchema} (entities, intent, constraints, sub-goals
 * ≤ 10, confidence 0–1), or your own zod `schema`. The answer is validated;
 * one that does not fit is asked again with the problems (`maxRetries`),
 * and one that never fits is an error reply (`invalid_agent_output`).
 *
 * Guardrails before the model: the request (the call's message, trimmed)
 * must have `minChars` to `maxChars` characters (3 to 5 000), else an error
 * reply `invalid_agent_input`; and it must pass the suspicious-pattern check
 * (the `blockedPatterns` rules), else an error reply `blocked`. Neither
 * reaches the model.
 *
 * The reply's text is the snapshot as JSON; its `metadata.data` is the
 * snapshot (read it with `perceptionOf`), so that an orchestrator (a
 * plan-execute or graph one) can branch on intent, sub-goals or confidence.
 * Each model call is a generation span under the agent's span.
 *
 * @example
 * ```ts
 * const perception = perceptionAgent({ model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY });
 * const trip = perceptionAgent({
 *   name: 'trip-reader',
 *   model: 'gpt-4o-mini',
 *   apiKey,
 *   schema: z.object({ city: z.string(), nights: z.number().int().min(1) }),
 * });
 * ```
 */
export function perceptionAgent<Value = PerceptionSnapshot>(options: PerceptionAgentOptions<Value>): Agent {
  const {
    name = 'perception',
    description = 'Reads a request and describes it: entities, intent, constraints, sub-goals and confidence',
    model,
    schema,
    instructions = schema ? CUSTOM_INSTRUCTIONS : DEFAULT_INSTRUCTIONS,
    maxRetries = 1,
    minChars = 3,
    maxChars = 5000,
    patterns = {},
    temperature,
    client,
    apiKey,
    baseURL,
  } = options;
  const owner = `perceptionAgent '${name}'`;
  if (typeof model !== 'string' || model === '')
    throw new ConfigurationError({ message: `${owner} needs a model, e.g. 'gpt-4o-mini'` });
  if (schema !== undefined && typeof (schema as { safeParse?: unknown }).safeParse !== 'function')
    throw new ConfigurationError({ message: `${owner}: schema must be a zod schema` });
  checkWholeNumbers(owner, [
    ['maxRetries', maxRetries, 0],
    ['minChars', minChars, 1],
    ['maxChars', maxChars, minChars],
  ]);
  const getClient = clientResolver(owner, { client, apiKey, baseURL });
  const guard = patterns === false ? undefined : blockedPatterns(patterns);
  const checks = (['input', 'toolInput'] as const).flatMap((stage) => {
    const guardCheck: GuardCheck | undefined = guard?.[stage];
    return guardCheck ? [{ stage, guardCheck }] : [];
  });
  const valueSchema = (schema ?? PerceptionSnapshotSchema) as z.ZodType<Value>;
  const check = jsonAnswerCheck(valueSchema);
  const responseFormat = schema ? formatOf(schema) : SNAPSHOT_FORMAT;

  async function run(message: string, context: Parameters<Agent['run']>[1]): Promise<AgentReplyWithMetadata> {
    const text = message.trim();
    if (text.length < minChars || text.length > maxChars)
      throw new AgentInputError({
        agent: name,
        message: `the request has ${text.length} characters; it must have ${minChars} to ${maxChars}`,
      });
    for (const { stage, guardCheck } of checks) {
      const verdict = await guardCheck(text, { stage, request: context.request, agent: name });
      if (verdict?.action === 'block')
        throw new PerceptionBlockedError({
          agent: name,
          message: `the request was refused: ${verdict.reason}`,
        });
    }
    const answer = await askForStructuredAnswer({
      client: await getClient(),
      model,
      temperature,
      maxRetries,
      responseFormat,
      check,
      messages: [
        { role: 'system', content: instructions },
        { role: 'user', content: text },
      ],
    });
    if (answer.value === undefined)
      throw new AgentOutputError({
        agent: name,
        message: `no answer fit the schema after ${answer.retries + 1} attempts: ${answer.problems.at(-1) ?? 'no answer'}`,
      });
    return { content: JSON.stringify(answer.value), metadata: { data: answer.value, usage: answer.usage } };
  }

  return defineAgent({ name, description, output: valueSchema, run });
}
