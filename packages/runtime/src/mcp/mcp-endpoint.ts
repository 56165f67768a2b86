import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  type AgentMeta,
  createSecretId,
  type SwitchboardError,
  SwitchboardError as SwitchboardErrorBase,
} from '@switchboard/core';
import { z } from 'zod';
import { parseBoundedJson } from '../backend/json-bounds.js';
import { jsonRpcBoundsError } from '../backend/json-rpc-error.js';
import { publicErrorOf } from '../backend/public-error.js';
import { SessionIdSchema } from '../backend/request-schemas.js';
import type { Caller, ServerBackend } from '../backend/server-backend.js';
import { type RateLimitRefusal, type TurnCharge, UNLIMITED } from '../backend/turn-charge.js';
import type { TurnRequest, TurnResult } from '../engine/turn-types.js';
import { TurnStatusSchema } from '../turns/turn-schemas.js';
import { type AgentTool, type AgentToolCall, agentTool } from './mcp-agent-tools.js';

/** Serves one MCP request (a POST of JSON-RPC). */
export interface McpEndpoint {
  /** `chargeTurn` counts each tool call's turn against the caller's rate limit (see {@link TurnCharge}). */
  handle(request: Request, caller: Caller, chargeTurn?: TurnCharge): Promise<Response>;
}

/**
 * The JSON-RPC error code of a tool call refused by the rate limit (in the
 * range JSON-RPC leaves to servers; 429 as in HTTP). Its `data` carries
 * `code: 'rate_limited'`, the `limit` and `retryAfterSeconds`.
 */
export const RATE_LIMITED_ERROR_CODE = -32029;

/** What one request's tool calls came to: how many ran, and the last refusal. */
interface Tally {
  ran: number;
  refused: RateLimitRefusal | undefined;
}

const SERVER_INFO = { name: 'switchboard', version: '0.1.0' };

/** What the `chat` tool returns as structured content. */
const ChatOutputSchema = z.object({
  reply: z.string().describe("The orchestrator's answer (or, awaiting approval, what the user is asked)"),
  sessionId: z.string().describe('Send it with the next message to continue the conversation'),
  turnId: z.string(),
  status: TurnStatusSchema.describe('How the turn ended: completed, failed, awaiting_approval…'),
});

/**
 * The JSON-RPC error an MCP client gets for what a tool call threw: what
 * `publicErrorOf` lets a client read (a store outage without the store's
 * address), as Invalid params for a 400 and an internal error otherwise;
 * anything else as a bare internal error. Logged as the HTTP routes log it.
 */
function mcpErrorOf(error: unknown, log: (error: unknown) => void): McpError {
  // Already in MCP's terms (a call the rate limit refused): as it is.
  if (error instanceof McpError) return error;
  if (SwitchboardErrorBase.isInstance(error)) {
    const { status, code, message } = publicErrorOf(error as SwitchboardError, log);
    return new McpError(status === 400 ? ErrorCode.InvalidParams : ErrorCode.InternalError, message, {
      code,
    });
  }
  log(error);
  return new McpError(ErrorCode.InternalError, 'Internal server error');
}

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

  /** Counts the call's turn; throws the JSON-RPC error of a refusal, which answers that call alone. */
  async function admit(chargeTurn: TurnCharge, tally: Tally): Promise<void> {
    const refused = await chargeTurn();
    if (!refused) {
      tally.ran += 1;
      return;
    }
    tally.refused = refused;
    const { limit, retryAfterSeconds, message } = refused;
    throw new McpError(RATE_LIMITED_ERROR_CODE, message, { code: 'rate_limited', limit, retryAfterSeconds });
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
    const ended =
      result.status === 'completed' ||
      result.status === 'limited' ||
      result.status === 'budget_exceeded' ||
      result.status === 'awaiting_approval';
    return {
      content: [
        { type: 'text', text: ended ? result.reply : result.error?.message || result.reply },
        { type: 'text', text: JSON.stringify(output) },
      ],
      structuredContent: output,
      ...(ended ? {} : { isError: true }),
    };
  }

  function server(caller: Caller, chargeTurn: TurnCharge, tally: Tally): Server {
    const mcp = new Server(SERVER_INFO, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    mcp.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
      try {
        if (params.name === 'chat') {
          await admit(chargeTurn, tally);
          return await chat(params.arguments, caller);
        }
        const agent = agentTools.get(params.name);
        if (agent) {
          await admit(chargeTurn, tally);
          const parsed = agent.parse(params.arguments);
          return parsed.ok ? await run(parsed.call, caller) : invalid(parsed.issues);
        }
      } catch (error) {
        throw mcpErrorOf(error, backend.log);
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
    async handle(request, caller, chargeTurn = UNLIMITED) {
      // Bounded before the SDK reads it (arguments and `_meta` included). Read here, so that a client
      // gone mid-body is the route's to tell; what is not JSON, the SDK refuses itself.
      const text = await request.text();
      const parsed = parseBoundedJson(text);
      if ('problem' in parsed) return Response.json(jsonRpcBoundsError(parsed.value, parsed.problem));
      const tally: Tally = { ran: 0, refused: undefined };
      const mcp = server(caller, chargeTurn, tally);
      // No session id generator: stateless, every request stands alone.
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
      await mcp.connect(transport);
      let response: Response;
      try {
        response =
          'value' in parsed
            ? await transport.handleRequest(request, { parsedBody: parsed.value })
            : await transport.handleRequest(
                new Request(request.url, { method: 'POST', headers: request.headers, body: text }),
              );
      } finally {
        await mcp.close().catch(() => {});
      }
      return tally.refused && tally.ran === 0 ? tooManyRequests(response, tally.refused) : response;
    },
  };
}

/**
 * The answer of a request whose every tool call the rate limit refused: the
 * same JSON-RPC body (an error per call), as 429 with `Retry-After`.
 */
function tooManyRequests(response: Response, { retryAfterSeconds }: RateLimitRefusal): Response {
  const headers = new Headers(response.headers);
  headers.set('retry-after', String(retryAfterSeconds));
  return new Response(response.body, { status: 429, statusText: 'Too Many Requests', headers });
}
