import { type AgentLike, type AgentMeta, AgentMetaSchema, ConfigurationError } from '@switchboard/core';
import { agentMetaOf } from '@switchboard/core/internal';
import type { Agent } from './agent-contract.js';
import { withSchemas } from './agent-schemas.js';

// The contract's types stay importable from here, beside defineAgent.
export type { Agent, AgentContext, AgentReply, AgentReplyWithMetadata } from './agent-contract.js';

/** The definition accepted by {@link defineAgent}. */
export type AgentDefinition = Agent;

/**
 * Defines an agent, checking its metadata at once.
 *
 * @example
 * ```ts
 * const echo = defineAgent({
 *   name: 'echo',
 *   description: 'Repeats the message',
 *   keywords: ['echo', 'repeat'],
 *   run: (message) => message,
 * });
 * ```
 */
export function defineAgent(definition: AgentDefinition): Agent {
  const parsed = AgentMetaSchema.safeParse(
    typeof definition === 'object' && definition !== null ? agentMeta(definition) : definition,
  );
  if (!parsed.success) {
    const detail = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigurationError({ message: `Invalid agent '${String(definition?.name)}': ${detail}` });
  }
  if (typeof definition.run !== 'function') {
    throw new ConfigurationError({
      message: `Agent '${definition.name}' needs a run(message, context) function`,
    });
  }
  const { requiresApproval } = definition;
  if (
    requiresApproval !== undefined &&
    typeof requiresApproval !== 'boolean' &&
    typeof requiresApproval !== 'function'
  ) {
    throw new ConfigurationError({
      message: `Agent '${definition.name}': requiresApproval must be true, false or a function (call, context) => boolean | { required, risk?, reason? }`,
    });
  }
  if (definition.timeoutMs !== undefined && !(definition.timeoutMs > 0)) {
    throw new ConfigurationError({ message: `Agent '${definition.name}' has an invalid timeoutMs` });
  }
  const { input, output } = definition;
  for (const [key, schema] of [
    ['input', input],
    ['output', output],
  ] as const) {
    if (schema !== undefined && typeof (schema as { safeParse?: unknown }).safeParse !== 'function')
      throw new ConfigurationError({ message: `Agent '${definition.name}': ${key} must be a zod schema` });
  }
  if (!input && !output) return { ...definition };
  return { ...definition, run: withSchemas(definition.name, definition.run, input, output) };
}

/**
 * The metadata of an agent, without its implementation (a rule for
 * `requiresApproval` as `true`, its `input`/`output` schemas as JSON
 * Schema). An orchestrator keeps the same of each agent it is given, so
 * `new KeywordOrchestrator({ agents })` needs no `agents.map(agentMeta)`.
 */
export function agentMeta(agent: AgentLike): AgentMeta {
  return agentMetaOf(agent);
}
