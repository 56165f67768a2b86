import { type Context, context as otelContext } from '@opentelemetry/api';
import { AgentError, type Memory } from '@switchboard/core';
import type { ChatCompletionMessageFunctionToolCall } from 'openai/resources/chat/completions';
import { type Agent, type AgentContext, type AgentReplyWithMetadata, defineAgent } from './agent.js';
import { type AgentApprovalDecision, AgentPause } from './agent-pause.js';
import { checkOptions, type LlmAgentOptions } from './llm-agent-options.js';
import { partialAnswer, readSavedRun, type SavedRun } from './llm-agent-run.js';
import { clientResolver } from './llm-client.js';
import { conversationMemory } from './llm-memory.js';
import { fitHistory } from './llm-memory-budget.js';
import { callModel, type ModelRequest } from './llm-model-call.js';
import { estimateTokens } from './llm-token-estimate.js';
import type { LlmTool } from './llm-tool.js';
import { toolApprovals } from './llm-tool-approvals.js';
import { type LlmToolResult, offeredTools } from './llm-tool-filter.js';
import { runToolCalls } from './llm-tool-runner.js';
import { isLlmToolSource, type ToolSet, toolResolver } from './llm-tool-source.js';
import type { TokenUsage } from './llm-tracing.js';

export type { LlmAgentOptions };

/** What one agent call did: kept as the metadata of the stored `tool` message, streamed or not. */
export interface LlmRunSummary {
  model: string;
  /** Summed over every model call of the run. */
  usage: TokenUsage;
  /** How many model calls the run made (summary requests not included; their usage is). */
  iterations: number;
  /** Set when the run stopped at `maxIterations` and the answer is what it had by then. */
  partial?: true;
}

/** The session memory, if the app has one (a hand-built context may not). */
function sessionMemory(context: AgentContext): Memory | undefined {
  try {
    return context.request.getMemory('session');
  } catch {
    return undefined;
  }
}

interface RunSetup {
  message: string;
  context: AgentContext;
  parent: Context;
}

/**
 * Defines an agent backed by a chat model through the `openai` client (any
 * OpenAI-compatible endpoint). Each call sends the instructions and the task
 * text, runs the tool calls the model asks for — arguments validated with
 * the tools' zod schemas, failures fed back to the model as the tool result —
 * for up to `maxIterations` model calls, and streams the text as it arrives:
 * the answer is the concatenation of the deltas. Every model call is a
 * Langfuse generation span (model, token usage) under the agent's span, and
 * every tool execution a tool span; the context's signal cancels the request.
 *
 * With `memory`, the model also sees the conversation (see
 * {@link conversationMemory}): the user's messages as `user` messages, the
 * answers the user got as `assistant` messages, the current turn's agent
 * replies as `[Agent "name" replied]` notes, and a summary of older messages
 * appended to the instructions. Summary requests are generation spans
 * (`summary <model>`) under the agent's span and their tokens count in the
 * reply's `metadata.usage`. With a `tokenBudget`, every request — tool rounds
 * included — stays within it by the estimate of {@link estimateTokens}: the
 * oldest conversation messages give way first; the instructions, the task
 * and the call's own tool rounds are always sent.
 *
 * At `maxIterations` the agent answers with what it has instead of failing:
 * the text it wrote so far, else the tool results so far, with
 * `metadata.partial: true`.
 *
 * Each tool call runs within its tool's `timeoutMs` and is retried after
 * a retryable failure (its `retries`, else the turn profile's
 * `agentRetries`); see {@link llmTool}. A `toolFilter` narrows the tools
 * offered to each model call, and a call outside them is refused. Tool
 * sources among `tools` ({@link LlmToolSource}, such as `mcpTools`) are
 * asked for their tools at the start of each call; `app.close()` closes them.
 *
 * @example
 * ```ts
 * const calculator = llmAgent({
 *   name: 'calculator',
 *   description: 'Does arithmetic',
 *   model: 'gpt-4o-mini',
 *   apiKey: process.env.OPENAI_API_KEY,
 *   instructions: 'Use the add tool for sums; answer with the result only.',
 *   tools: [llmTool({ name: 'add', description: 'Adds numbers', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b })],
 * });
 *
 * // Remembers the conversation: the last 20 messages and a summary of the rest.
 * const assistant = llmAgent({
 *   name: 'assistant',
 *   description: 'Answers questions about the conversation',
 *   model: 'gpt-4o-mini',
 *   apiKey: process.env.OPENAI_API_KEY,
 *   instructions: 'Answer briefly.',
 *   memory: { strategy: 'hybrid', tokenBudget: 8_000 },
 * });
 * ```
 */
export function llmAgent({
  name,
  description,
  model,
  instructions,
  tools = [],
  toolFilter,
  maxIterations = 10,
  temperature,
  maxTokens,
  memory,
  keywords,
  capabilities,
  stream = true,
  timeoutMs,
  client,
  apiKey,
  baseURL,
}: LlmAgentOptions): Agent {
  // defineAgent first, so a bad name or description is reported before anything else.
  const agent = defineAgent({
    name,
    description,
    keywords,
    capabilities,
    timeoutMs,
    run(message, context) {
      // The engine calls run inside the agent span: model calls nest under it.
      const setup = { message, context, parent: otelContext.active() };
      return stream ? replies(setup) : whole(setup);
    },
  });
  checkOptions({ name, model, instructions, tools, maxIterations, maxTokens, toolFilter });
  const owner = `llmAgent '${name}'`;
  const getClient = clientResolver(owner, { client, apiKey, baseURL });
  const ownTools = tools.filter((tool): tool is LlmTool => !isLlmToolSource(tool));
  const sources = tools.filter(isLlmToolSource);
  // Without sources, computed once: every request sends the same definitions.
  const resolveTools = toolResolver(ownTools, sources, name);
  const toolDefinitions = ownTools.length > 0 ? ownTools.map((tool) => tool.definition) : undefined;
  /** The tools to offer for the next model call: all of them, unless the filter narrows them. */
  async function toolsFor(
    set: ToolSet,
    context: AgentContext,
    modelCalls: number,
    results: readonly LlmToolResult[],
  ) {
    if (!toolFilter || set.tools.length === 0) return { definitions: set.definitions, available: set.byName };
    const offered = await offeredTools(toolFilter, set.tools, {
      agent: context,
      agentName: name,
      modelCalls,
      results,
    });
    return {
      definitions: offered.length > 0 ? offered.map((tool) => tool.definition) : undefined,
      available: new Map(offered.map((tool) => [tool.name, tool])),
      offered: new Set(offered.map((tool) => tool.name)),
    };
  }
  // Sources' tools are known only per call: the memory's own budget checks count the agent's own tools.
  const reservedTokens = toolDefinitions ? estimateTokens(JSON.stringify(toolDefinitions)) : 0;
  const history =
    memory === undefined
      ? undefined
      : conversationMemory(memory, {
          owner,
          key: `llm-agent:${name}:summary`,
          model,
          client: getClient,
          reservedTokens,
        });
  const tokenBudget = history?.options.tokenBudget;
  // The sources' tool sets are resolved per call but stay the same objects while their listings do not change.
  const reservedBySet = new WeakMap<ToolSet, number>();
  function reservedFor(set: ToolSet): number {
    let reserved = reservedBySet.get(set);
    if (reserved === undefined) {
      reserved = set.definitions ? estimateTokens(JSON.stringify(set.definitions)) : reservedTokens;
      reservedBySet.set(set, reserved);
    }
    return reserved;
  }

  async function* replies({
    message,
    context,
    parent,
  }: RunSetup): AsyncGenerator<string, AgentReplyWithMetadata> {
    const chat = await getClient();
    const toolsOfRun = await resolveTools(context.signal);
    const reservedForRun = sources.length === 0 ? reservedTokens : reservedFor(toolsOfRun);
    let run: SavedRun;
    let pending:
      | {
          calls: ChatCompletionMessageFunctionToolCall[];
          decisions?: Map<string, AgentApprovalDecision>;
          offered?: ReadonlySet<string>;
        }
      | undefined;
    let results: LlmToolResult[] = [];
    if (context.resume) {
      // The call paused on tools that needed approval: continue from where it stopped.
      const saved = readSavedRun(context.resume.state);
      if (!saved) {
        throw new AgentError({
          agent: name,
          message: 'the state saved when the call paused for approval is not readable',
        });
      }
      run = saved;
      pending = {
        calls: run.toolCalls,
        decisions: new Map(context.resume.decisions.map((decision) => [decision.id, decision])),
        // The set the paused calls were offered from, computed again (nothing was used since).
        offered: (await toolsFor(toolsOfRun, context, run.iterations - 1, [])).offered,
      };
    } else {
      const system = typeof instructions === 'string' ? instructions : await instructions(context);
      run = {
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: message },
        ],
        usage: { inputTokens: 0, outputTokens: 0 },
        content: '',
        iterations: 0,
        toolCalls: [],
      };
      if (history) {
        const opening = await history.messages({
          conversation: context.conversation,
          instructions: system,
          task: message,
          signal: context.signal,
          parent,
          memory: sessionMemory(context),
        });
        run.messages = opening.messages;
        run.historyCount = opening.historyCount;
        run.usage = opening.usage;
      }
    }
    const { messages, usage } = run;
    for (;;) {
      if (pending) {
        results = await runToolCalls(pending.calls, {
          tools: toolsOfRun.byName,
          agent: context,
          signal: context.signal,
          parent,
          decisions: pending.decisions,
          offered: pending.offered,
        });
        pending.calls.forEach((call, index) => {
          messages.push({ role: 'tool', tool_call_id: call.id, content: results[index]?.content ?? '' });
        });
        pending = undefined;
      }
      const { definitions, available, offered } = await toolsFor(
        toolsOfRun,
        context,
        run.iterations,
        results,
      );
      run.iterations += 1;
      if (tokenBudget !== undefined && run.historyCount) {
        run.historyCount = fitHistory(messages, run.historyCount, {
          tokenBudget,
          reservedTokens: reservedForRun,
        });
      }
      const request: ModelRequest = { model, messages: [...messages] };
      if (definitions) request.tools = definitions;
      if (temperature !== undefined) request.temperature = temperature;
      if (maxTokens !== undefined) request.max_completion_tokens = maxTokens;
      const prefix = run.content === '' ? '' : '\n\n';
      const turn = yield* callModel({
        client: chat,
        request,
        stream,
        signal: context.signal,
        parent,
        prefix,
      });
      if (turn.content) run.content += prefix + turn.content;
      usage.inputTokens += turn.usage?.inputTokens ?? 0;
      usage.outputTokens += turn.usage?.outputTokens ?? 0;
      if (turn.toolCalls.length === 0) {
        const summary: LlmRunSummary = { model, usage, iterations: run.iterations };
        return { content: run.content, metadata: { ...summary } };
      }
      if (run.iterations >= maxIterations) {
        // Out of model calls: the best answer so far, marked partial, rather than nothing.
        if (run.content === '') {
          run.content = partialAnswer(messages, run.iterations);
          yield run.content;
        }
        const summary: LlmRunSummary = { model, usage, iterations: run.iterations, partial: true };
        return { content: run.content, metadata: { ...summary } };
      }
      messages.push({ role: 'assistant', content: turn.content || null, tool_calls: turn.toolCalls });
      // Only the offered tools ask for approval: the others are refused without it.
      const approvals = toolsOfRun.needsApproval
        ? await toolApprovals(turn.toolCalls, available, context)
        : [];
      if (approvals.length > 0) {
        // None of this round's tools runs before a person has decided; the call resumes from here.
        run.toolCalls = turn.toolCalls;
        throw new AgentPause({ requests: approvals, state: run });
      }
      pending = { calls: turn.toolCalls, offered };
    }
  }

  async function whole(setup: RunSetup): Promise<AgentReplyWithMetadata> {
    const run = replies(setup);
    let next = await run.next();
    while (!next.done) next = await run.next();
    return next.value;
  }

  if (sources.length > 0) {
    // The app closes its agents: that is when the sources' connections go.
    agent.close = async () => {
      await Promise.allSettled(sources.map((source) => source.close?.()));
    };
  }
  return agent;
}
