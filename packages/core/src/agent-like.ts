import { z } from 'zod';
import type { AgentMeta } from './messages.js';

/**
 * An agent as an orchestrator's options take it: the agent you hold (what
 * `defineAgent`, `llmAgent`, `remoteAgent`, `orchestratorAgent`… of
 * `@switchboard/runtime` return) or its metadata (`AgentMeta`, such as
 * `app.agentMetas`), without converting one into the other first.
 *
 * It is {@link AgentMeta}, the wire type, with what an agent declares beside
 * it: `requiresApproval` may be a rule (the runtime's `ApprovalRule`, a
 * function of the call), and `input`/`output` zod schemas. The orchestrator
 * keeps only the metadata (its `agents` are `AgentMeta`): a rule becomes
 * `requiresApproval: true` (approval may be needed; the runtime runs the rule
 * on each call), the schemas become `inputSchema`/`outputSchema` (JSON
 * Schema), and `run` and the rest are left to the app that hosts the agent.
 *
 * Structural on purpose: `@switchboard/core` knows nothing of the runtime,
 * and any object with these fields fits, so a custom orchestrator built on
 * {@link AbstractOrchestrator} takes agents the same way. The runtime's
 * `Agent` extends it.
 *
 * @example
 * ```ts
 * const refunds = defineAgent({
 *   name: 'refunds',
 *   description: 'Refunds orders',
 *   keywords: ['refund'],
 *   requiresApproval: (call) => Number((call.input as { amount?: number })?.amount) > 100,
 *   run: (message) => `Refunded: ${message}`,
 * });
 * // The agents themselves, or app.agentMetas: the orchestrator keeps the same metadata.
 * const router = new KeywordOrchestrator({ agents: [refunds, billing], fallbackAgent: 'billing' });
 * ```
 */
export interface AgentLike extends Omit<AgentMeta, 'requiresApproval'> {
  /**
   * Calls wait for a person's approval: always (`true`), never (`false`), or
   * when a rule says so (a function; the runtime's `ApprovalRule`), which an
   * orchestrator sees as `true`.
   */
  requiresApproval?: boolean | ((...args: never[]) => unknown);
  /** What the agent accepts (a zod schema); an orchestrator sees it as `inputSchema`. */
  input?: z.ZodType;
  /** What the agent answers (a zod schema); an orchestrator sees it as `outputSchema`. */
  output?: z.ZodType;
}

/**
 * The metadata of an agent: its wire fields only, a rule for
 * `requiresApproval` as `true`, zod `input`/`output` as JSON Schema (a
 * declared `inputSchema`/`outputSchema` otherwise). What an orchestrator
 * keeps of each agent it is given, and what the runtime's `agentMeta` returns.
 */
export function agentMetaOf({
  name,
  description,
  capabilities,
  keywords,
  requiresApproval,
  metadata,
  input,
  output,
  inputSchema,
  outputSchema,
}: AgentLike): AgentMeta {
  const meta: AgentMeta = { name, description };
  if (capabilities) meta.capabilities = capabilities;
  if (keywords) meta.keywords = keywords;
  // A rule may or may not ask for approval on a given call: orchestrators are told it may.
  if (requiresApproval !== undefined) meta.requiresApproval = requiresApproval !== false;
  if (metadata) meta.metadata = metadata;
  const accepts = jsonSchemaOf(input) ?? inputSchema;
  if (accepts) meta.inputSchema = accepts;
  const answers = jsonSchemaOf(output) ?? outputSchema;
  if (answers) meta.outputSchema = answers;
  return meta;
}

/** A zod schema as JSON Schema; undefined without one, or for one that cannot be written as JSON Schema. */
function jsonSchemaOf(schema: z.ZodType | undefined): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  try {
    return z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
