import { type Context, context as otelContext } from '@opentelemetry/api';
import { AgentError, ConfigurationError } from '@switchboard/core';
import type {
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import { type Agent, type AgentContext, type AgentReplyWithMetadata, defineAgent } from './agent.js';
import { type AgentApprovalDecision, AgentPause } from './agent-pause.js';
import { clientResolver, type LlmClientOptions } from './llm-client.js';
import { callModel, type ModelRequest } from './llm-model-call.js';
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
  /** The most model calls per agent call (tool-call rounds included). Default 5. */
  maxIterations?: number;
  temperature?: number;
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
  /** How many model calls the run made. */
  iterations: number;
}

/** Where a run stands: what a call that pauses for approval saves, to continue from it. */
interface SavedRun {
  messages: ChatCompletionMessageParam[];
  usage: TokenUsage;
  /** The text streamed so far. */
  content: string;
  /** Model calls made so far. */
  iterations: number;
  /** The model's tool calls that wait for approval. */
  toolCalls: ChatCompletionMessageFunctionToolCall[];
}

/** Checks a saved run read back from the store (it crossed a boundary). */
const SavedRunSchema = z.object({
  messages: z.array(z.looseObject({ role: z.string() })),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
  content: z.string(),
  iterations: z.number().int().nonnegative(),
  toolCalls: z.array(
    z.looseObject({
      id: z.string(),
      type: z.literal('function'),
      function: z.object({ name: z.string(), arguments: z.string() }),
    }),
  ),
});

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
}: Required<Pick<LlmAgentOptions, 'name' | 'model' | 'instructions' | 'tools' | 'maxIterations'>>) {
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
 * ```
 */
export function llmAgent({
  name,
  description,
  model,
  instructions,
  tools = [],
  maxIterations = 5,
  temperature,
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
  checkOptions({ name, model, instructions, tools, maxIterations });
  const getClient = clientResolver(`llmAgent '${name}'`, { client, apiKey, baseURL });
  const toolsByName: ReadonlyMap<string, LlmTool> = new Map(tools.map((tool) => [tool.name, tool]));
  // Computed once: every request sends the same definitions.
  const toolDefinitions = tools.length > 0 ? tools.map((tool) => tool.definition) : undefined;
  const toolsNeedApproval = tools.some((tool) => tool.requiresApproval);

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
      const saved = SavedRunSchema.safeParse(context.resume.state);
      if (!saved.success) {
        throw new AgentError({
          agent: name,
          message: 'the state saved when the call paused for approval is not readable',
        });
      }
      run = saved.data as SavedRun;
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
      const request: ModelRequest = { model, messages: [...messages] };
      if (toolDefinitions) request.tools = toolDefinitions;
      if (temperature !== undefined) request.temperature = temperature;
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
        throw new AgentError({
          agent: name,
          message: `the model still asked for tools after ${run.iterations} model calls (maxIterations = ${maxIterations})`,
        });
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
