import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AgentError, ConfigurationError } from '@switchboard/core';
import { type Agent, type AgentContext, defineAgent } from '../agents/agent.js';
import { McpConnection, type McpServerOptions } from './mcp-connection.js';
import { resultText } from './mcp-result.js';
import type { McpTools } from './mcp-tools.js';

/** Options of {@link mcpAgent}. */
export interface McpAgentOptions {
  name: string;
  /** What the agent does; orchestrators read it to choose agents. */
  description: string;
  /** The MCP tool it calls (its name on the server). */
  tool: string;
  /** The server: where it is, or an {@link mcpTools} source whose connection it shares. */
  server: McpServerOptions | McpTools;
  /**
   * The tool argument that receives the call's message when the call has no
   * structured input and the message is not a JSON object. Default: the
   * tool's only string property, when it has exactly one.
   */
  argument?: string;
  keywords?: string[];
  capabilities?: string[];
  /** Overrides the app's per-agent timeout; also each call's deadline on the server side. */
  timeoutMs?: number;
  /** The longest reply, in characters (longer ones are cut). Default 50 000. */
  maxResultChars?: number;
}

function isMcpTools(server: McpAgentOptions['server']): server is McpTools {
  return (server as McpTools).connection instanceof McpConnection;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The only string property of the tool's input schema, if it has exactly one. */
function messageArgument(tool: Tool): string | undefined {
  const properties = isRecord(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
  const strings = Object.entries(properties).filter(
    ([, schema]) => isRecord(schema) && schema.type === 'string',
  );
  return strings.length === 1 ? strings[0]?.[0] : undefined;
}

/**
 * An agent that calls one MCP tool directly — no model in between — so that
 * keyword and task routers can route to MCP tools. The arguments are the
 * call's structured `input` (an object), else its message when it is a JSON
 * object, else `{ [argument]: message }`. The reply is the tool's text and
 * structured content; an `isError` result or an unreachable server fails
 * the call (an error reply the orchestrator sees). The connection opens on
 * first use, is reused, reconnects on the call after a failure, and closes
 * with `app.close()`.
 *
 * @example
 * ```ts
 * const weather = mcpAgent({
 *   name: 'weather',
 *   description: 'Forecast for a city',
 *   keywords: ['weather', 'forecast'],
 *   tool: 'forecast',
 *   server: { command: 'node', args: ['weather-server.js'] },
 * });
 * ```
 */
export function mcpAgent({
  name,
  description,
  tool,
  server,
  argument,
  keywords,
  capabilities,
  timeoutMs,
  maxResultChars = 50_000,
}: McpAgentOptions): Agent {
  if (typeof tool !== 'string' || tool === '')
    throw new ConfigurationError({ message: `mcpAgent '${String(name)}' needs the name of an MCP tool` });
  const connection = isMcpTools(server) ? server.connection : new McpConnection(server);

  async function argumentsOf(message: string, context: AgentContext): Promise<Record<string, unknown>> {
    const { input } = context.toolCall;
    if (isRecord(input)) return input;
    try {
      const parsed: unknown = JSON.parse(message);
      if (isRecord(parsed)) return parsed;
    } catch {
      // Plain text: it goes to the message argument.
    }
    if (argument) return { [argument]: message };
    const { tools } = await connection.tools(context.signal);
    const found = tools.find((candidate) => candidate.name === tool);
    if (!found) throw new AgentError({ agent: name, message: `the MCP server has no tool '${tool}'` });
    const key = messageArgument(found);
    if (!key) {
      throw new AgentError({
        agent: name,
        message: `tool '${tool}' takes no single text argument: send a JSON object, or set the agent's argument option`,
      });
    }
    return { [key]: message };
  }

  return defineAgent({
    name,
    description,
    keywords,
    capabilities,
    timeoutMs,
    async run(message, context) {
      const args = await argumentsOf(message, context);
      const result = await connection.call(tool, args, {
        signal: context.signal,
        timeoutMs: timeoutMs ?? 60_000,
      });
      return resultText(tool, result, maxResultChars);
    },
    close: () => connection.close(),
  });
}
