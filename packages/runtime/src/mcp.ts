/**
 * `@switchboard/runtime/mcp`: Model Context Protocol tools for agents —
 * {@link mcpTools} (an MCP server's tools for `llmAgent`) and
 * {@link mcpAgent} (one MCP tool as an agent). Importing it needs
 * `@modelcontextprotocol/sdk` installed (an optional peer dependency);
 * `@switchboard/runtime` itself never loads it.
 *
 * @module
 */

export { type McpAgentOptions, mcpAgent } from './mcp/mcp-agent.js';
export {
  McpConnection,
  type McpHttpServer,
  type McpServerOptions,
  type McpStdioServer,
} from './mcp/mcp-connection.js';
export { McpToolError, McpUnavailableError } from './mcp/mcp-errors.js';
export { type McpToolOptions, type McpTools, type McpToolsOptions, mcpTools } from './mcp/mcp-tools.js';
