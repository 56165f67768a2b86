import type { Agent } from '../agents/agent-contract.js';

/**
 * A stand-in for `agent` that answers its own name at once: the same
 * metadata (name, description, keywords, capabilities, input schema,
 * approval rule), so an orchestrator routes to it as to the real one, but
 * nothing runs. Routing is then scored without calling models or services.
 *
 * @example
 * ```ts
 * const stubs = app.agents.map(stubAgent);
 * ```
 */
export function stubAgent(agent: Agent): Agent {
  const { name, description, capabilities, keywords, metadata, requiresApproval, input } = agent;
  const stub: Agent = { name, description, run: () => name };
  if (capabilities) stub.capabilities = capabilities;
  if (keywords) stub.keywords = keywords;
  if (metadata) stub.metadata = metadata;
  if (requiresApproval !== undefined) stub.requiresApproval = requiresApproval;
  // The schema stays for what orchestrators are told; the stub ignores the input itself.
  if (input) stub.input = input;
  return stub;
}
