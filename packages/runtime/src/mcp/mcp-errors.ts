import { SystemError } from '@switchboard/core';

/**
 * An MCP server could not be reached: it did not start, refused the
 * connection, closed it (a process that died), or a request to it failed on
 * the way. The message names the server, never its address or the
 * underlying error (kept as `cause`). The calls of the agent call that met it
 * fail with it; the next agent call connects again.
 */
export class McpUnavailableError extends SystemError {
  readonly code = 'mcp_unavailable';
  /** The server's name (see `McpServerOptions`). */
  readonly server: string;

  constructor({ server, cause }: { server: string; cause?: unknown }) {
    super({
      message: `the MCP server '${server}' is unreachable (it is down or closed the connection); try again later`,
      cause,
    });
    this.server = server;
  }
}

/**
 * An MCP tool answered with `isError: true`: its text, which the server
 * wrote for the model, is the message (bounded).
 */
export class McpToolError extends SystemError {
  readonly code = 'mcp_tool_error';
  /** The tool's name on its server. */
  readonly tool: string;

  constructor({ tool, message }: { tool: string; message: string }) {
    super({ message });
    this.tool = tool;
  }
}
