import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { type AgentMeta, createSecretId } from '@switchboard/core';
import { z } from 'zod';
import { SessionIdSchema } from '../backend/request-schemas.js';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import type { TurnRequest, TurnResult } from '../engine/turn-types.js';
import { TurnStatusSchema } from '../turns/turn-schemas.js';
import { type AgentTool, type AgentToolCall, agentTool } from './mcp-agent-tools.js';

/** Serves one MCP request (a POST of JSON-RPC). */
export interface McpEndpoint {
  handle(request: Request, caller: Caller): Promise<Response>;
}

const SERVER_INFO = { name: 'switchboard', version: '0.1.0' };

/** What the `chat` tool returns as structured content. */
const ChatOutputSchema = z.object({
  reply: z.string().describe("The orchestrator's answer (or, awaiting approval, what the user is asked)"),
  sessionId: z.string().describe('Send it with the next message to continue the conversation'),
  turnId: z.string(),
  status: TurnStatusSchema.describe('How the turn ended: completed, failed, awaiting_approval…'),
});

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest as Tool['inputSchema'];
}

/**
 * Builds the MCP endpoint of an app: one `chat` tool that runs a turn
 * through the same engine path as `POST /v1/chat`, and a tool per agent of
 * `exposeAgents`, whose turn calls that agent directly
 * (`TurnRequest.directCall`). Stateless: each request
 * gets its own server and transport, so any replica answers any request and
 * nothing is kept between requests; the conversation lives in the
 * Switchboard session, whose id the tool returns.
 */
export function createMcpEndpoint(
  backend: ServerBackend,
  {
    maxMessageLength,
    name,
    exposeAgents = [],
  }: { maxMessageLength: number; name: string; exposeAgents?: readonly AgentMeta[] },
): McpEndpoint {
  const ChatInputSchema = z.strictObject({
    message: z.string().min(1).max(maxMessageLength).describe('What the user says'),
    sessionId: SessionIdSchema.optional().describe('The session to continue; omit it to start one'),
  });
  const chatTool: Tool = {
    name: 'chat',
    title: `Chat with ${name}`,
    description: `Sends a message to ${name}, which routes it to its agents (${backend.agents.map((agent) => agent.name).join(', ')}) and answers. Returns the answer, the session id to continue with, and the turn's status.`,
    inputSchema: jsonSchema(ChatInputSchema, 'input'),
    outputSchema: jsonSchema(ChatOutputSchema, 'output') as Tool['outputSchema'],
    annotations: { readOnlyHint: false, openWorldHint: true },
  };
  const agentTools = new Map<string, AgentTool>();
  for (const agent of exposeAgents) {
    const tool = agentTool(agent, maxMessageLength, chatTool.outputSchema);
    agentTools.set(tool.tool.name, tool);
  }
  const tools = [chatTool, ...[...agentTools.values()].map(({ tool }) => tool)];

  function invalid(issues: readonly string[]): CallToolResult {
    return { isError: true, content: [{ type: 'text', text: `Invalid arguments: ${issues.join('; ')}` }] };
  }

  async function chat(args: unknown, caller: Caller): Promise<CallToolResult> {
    const parsed = ChatInputSchema.safeParse(args ?? {});
    if (!parsed.success) {
      return invalid(
        parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`),
      );
    }
    return run(parsed.data, caller);
  }

  /** Runs the turn of a tool call: the orchestrator's, or, with `agent`, one that calls that agent directly. */
  async function run(
    { message, sessionId, agent, input }: Partial<AgentToolCall> & { message: string; sessionId?: string },
    caller: Caller,
  ): Promise<CallToolResult> {
    if (backend.isClosing())
      return { isError: true, content: [{ type: 'text', text: 'The server is shutting down' }] };
    const request: TurnRequest = {
      sessionId: sessionId ?? createSecretId('ses'),
      message,
      entryPoint: '/mcp',
      ...caller,
    };
    if (agent !== undefined) request.directCall = input === undefined ? { agent } : { agent, input };
    const result: TurnResult = await backend.chat(request);
    const output = {
      reply: result.reply,
      sessionId: result.sessionId,
      turnId: result.turnId,
      status: result.status,
    };
    const ended = result.status === 'completed' || result.status === 'awaiting_approval';
    return {
      content: [
        { type: 'text', text: ended ? result.reply : result.error?.message || result.reply },
        { type: 'text', text: JSON.stringify(output) },
      ],
      structuredContent: output,
      ...(ended ? {} : { isError: true }),
    };
  }

  function server(caller: Caller): Server {
    const mcp = new Server(SERVER_INFO, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    mcp.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
      if (params.name === 'chat') return chat(params.arguments, caller);
      const agent = agentTools.get(params.name);
      if (agent) {
        const parsed = agent.parse(params.arguments);
        return parsed.ok ? run(parsed.call, caller) : invalid(parsed.issues);
      }
      return {
        isError: true,
        content: [
          { type: 'text', text: `Unknown tool; use one of ${tools.map((tool) => tool.name).join(', ')}` },
        ],
      };
    });
    return mcp;
  }

  return {
    async handle(request, caller) {
      const mcp = server(caller);
      // No session id generator: stateless, every request stands alone.
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
      await mcp.connect(transport);
      try {
        return await transport.handleRequest(request);
      } finally {
        await mcp.close().catch(() => {});
      }
    },
  };
}
