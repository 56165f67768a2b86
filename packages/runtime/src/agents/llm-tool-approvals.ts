import type { ChatCompletionMessageFunctionToolCall } from 'openai/resources/chat/completions';
import type { AgentContext, ApprovalRequirement } from './agent-contract.js';
import type { AgentApprovalRequest } from './agent-pause.js';
import type { LlmTool } from './llm-tool.js';
import { parseArguments } from './llm-tool-runner.js';

/**
 * The approvals the model's tool calls need before any of them runs: one
 * per call of a tool whose `requiresApproval` says so for its arguments.
 * A call with arguments that do not parse or validate needs none: it fails
 * as feedback to the model without running. A rule that throws fails closed.
 */
export async function toolApprovals(
  calls: readonly ChatCompletionMessageFunctionToolCall[],
  tools: ReadonlyMap<string, LlmTool>,
  agent: AgentContext,
): Promise<AgentApprovalRequest[]> {
  const requests: AgentApprovalRequest[] = [];
  for (const call of calls) {
    const tool = tools.get(call.function.name);
    if (!tool?.requiresApproval) continue;
    const parsed = parseArguments(call.function.arguments);
    const validated = parsed.ok ? tool.parameters.safeParse(parsed.value) : undefined;
    if (!validated?.success) continue;
    let answer: boolean | ApprovalRequirement;
    try {
      answer =
        tool.requiresApproval === true
          ? true
          : await tool.requiresApproval(validated.data, { signal: agent.signal, toolCallId: call.id, agent });
    } catch (error) {
      answer = { required: true, risk: 'high', reason: `the approval rule failed (${describe(error)})` };
    }
    const requirement = answer === true ? { required: true } : answer || undefined;
    if (!requirement?.required) continue;
    const request: AgentApprovalRequest = {
      id: call.id,
      action: tool.name,
      message: `${tool.name}(${call.function.arguments})`,
      input: validated.data,
    };
    if (requirement.risk) request.risk = requirement.risk;
    if (requirement.reason) request.reason = requirement.reason;
    if (requirement.ttlSeconds !== undefined) request.ttlSeconds = requirement.ttlSeconds;
    requests.push(request);
  }
  return requests;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
