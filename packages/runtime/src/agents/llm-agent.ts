import { type Context, context as otelContext } from '@opentelemetry/api';
import { AgentError, ConfigurationError, type Memory } from '@switchboard/core';
import type { ChatCompletionMessageFunctionToolCall } from 'openai/resources/chat/completions';
import { type Agent, type AgentContext, type AgentReplyWithMetadata, defineAgent } from './agent.js';
import { type AgentApprovalDecision, AgentPause } from './agent-pause.js';
import { partialAnswer, readSavedRun, type SavedRun } from './llm-agent-run.js';
import { clientResolver, type LlmClientOptions } from './llm-client.js';
import {
  type ConversationMemoryOptions,
  type ConversationMemoryStrategy,
  conversationMemory,
} from './llm-memory.js';
import { fitHistory } from './llm-memory-budget.js';
import { callModel, type ModelRequest } from './llm-model-call.js';
import { estimateTokens } from './llm-token-estimate.js';
import type { LlmTool } from './llm-tool.js';
import { toolApprovals } from './llm-tool-approvals.js';
import { runToolCalls } from './llm-tool-runner.js';
import type { TokenUsage } from './llm-tracing.js';

/** Options of {@link llmAgent}. */
export interface LlmAgentOptions extends LlmClientOptions {
  name: string;
  /** What the agent does; orchestrators read it to choose agents. */
  description: string;
  /** The model name, e.g. `gpt-4o-mini`. */
  model: string;
  /** The system prompt, or a function computing it for each call. */
  instructions: string | ((context: AgentContext) => string | Promise<string>);
  /** Tools the model may call, defined with {@link llmTool}. */
  tools?: readonly LlmTool[];
  /**
   * The most model calls per agent call (tool-call rounds included). Default
   * 10. A model still asking for tools at the limit does not fail the call:
   * the agent answers with what it has — its text so far, else the tool
   * results so far — and marks the reply `metadata.partial: true`.
   */
  maxIterations?: number;
  temperature?: number;
  /** The most tokens each model call may generate, sent as `max_completion_tokens`. Default: the model's. */
  maxTokens?: number;
  /**
   * What the model sees of the conversation besides the task: `'window'`,
   * `'summary'` or `'hybrid'`, or the options of {@link conversationMemory}
   * (window size, summary size, token budget, summary model). Default: none,
   * as before — only the instructions and the task, so that no call pays for
   * history (or summaries) it did not ask for.
   */
  memory?: ConversationMemoryStrategy | ConversationMemoryOptions;
  keywords?: string[];
  capabilities?: string[];
  /** Stream text deltas (forwarded as `agent-delta` events). Default true. */
  stream?: boolean;
  /** Overrides the app's per-agent timeout. */
  timeoutMs?: number;
}

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

function checkOptions({
  name,
  model,
  instructions,
  tools,
  maxIterations,
  maxTokens,
}: Required<Pick<LlmAgentOptions, 'name' | 'model' | 'instructions' | 'tools' | 'maxIterations'>> &
  Pick<LlmAgentOptions, 'maxTokens'>) {
  const owner = `llmAgent '${String(name)}'`;
  if (typeof model !== 'string' || model === '')
    throw new ConfigurationError({ message: `${owner} needs a model name` });
  if (typeof instructions !== 'string' && typeof instructions !== 'function') {
    throw new ConfigurationError({ message: `${owner} needs instructions (a string or a function)` });
  }
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new ConfigurationError({
      message: `${owner}: maxIterations must be a positive integer, got ${maxIterations}`,
    });
  }
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1)) {
    throw new ConfigurationError({
      message: `${owner}: maxTokens must be a positive integer, got ${maxTokens}`,
    });
  }
  const seen = new Set<string>();
  for (const tool of tools) {
    if (typeof tool?.definition !== 'object')
      throw new ConfigurationError({ message: `${owner}: define its tools with llmTool()` });
    if (seen.has(tool.name))
      throw new ConfigurationError({ message: `${owner} has two tools named '${tool.name}'` });
    seen.add(tool.name);
  }
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
  checkOptions({ name, model, instructions, tools, maxIterations, maxTokens });
  const owner = `llmAgent '${name}'`;
  const getClient = clientResolver(owner, { client, apiKey, baseURL });
  const toolsByName: ReadonlyMap<string, LlmTool> = new Map(tools.map((tool) => [tool.name, tool]));
  // Computed once: every request sends the same definitions.
  const toolDefinitions = tools.length > 0 ? tools.map((tool) => tool.definition) : undefined;
  const toolsNeedApproval = tools.some((tool) => tool.requiresApproval);
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

  async function* replies({
    message,
    context,
    parent,
  }: RunSetup): AsyncGenerator<string, AgentReplyWithMetadata> {
    const chat = await getClient();
    let run: SavedRun;
    let pending:
      | { calls: ChatCompletionMessageFunctionToolCall[]; decisions?: Map<string, AgentApprovalDecision> }
      | undefined;
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
        const results = await runToolCalls(pending.calls, {
          tools: toolsByName,
          agent: context,
          signal: context.signal,
          parent,
          decisions: pending.decisions,
        });
        pending.calls.forEach((call, index) => {
          messages.push({ role: 'tool', tool_call_id: call.id, content: results[index] ?? '' });
        });
        pending = undefined;
      }
      run.iterations += 1;
      if (tokenBudget !== undefined && run.historyCount) {
        run.historyCount = fitHistory(messages, run.historyCount, { tokenBudget, reservedTokens });
      }
      const request: ModelRequest = { model, messages: [...messages] };
      if (toolDefinitions) request.tools = toolDefinitions;
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
      const approvals = toolsNeedApproval ? await toolApprovals(turn.toolCalls, toolsByName, context) : [];
      if (approvals.length > 0) {
        // None of this round's tools runs before a person has decided; the call resumes from here.
        run.toolCalls = turn.toolCalls;
        throw new AgentPause({ requests: approvals, state: run });
      }
      pending = { calls: turn.toolCalls };
    }
  }

  async function whole(setup: RunSetup): Promise<AgentReplyWithMetadata> {
    const run = replies(setup);
    let next = await run.next();
    while (!next.done) next = await run.next();
    return next.value;
  }

  return agent;
}
