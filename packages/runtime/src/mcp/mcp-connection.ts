import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ConfigurationError } from '@switchboard/core';
import { McpUnavailableError } from './mcp-errors.js';

/** An MCP server started as a child process, spoken to over its stdin and stdout. */
export interface McpStdioServer {
  /** The program, e.g. `node` or `npx`. */
  command: string;
  args?: string[];
  /**
   * Its environment: added to the few variables the MCP SDK passes on by
   * default (`PATH`, `HOME`…), never the whole environment of this process.
   */
  env?: Record<string, string>;
  /** Its working directory (default: this process's). */
  cwd?: string;
  /** Names the server in errors, spans and messages (default: the command). */
  name?: string;
}

/** An MCP server reached over streamable HTTP. */
export interface McpHttpServer {
  /** Its MCP endpoint, e.g. `https://tools.example.com/mcp`. */
  url: string | URL;
  /** Sent with every request, e.g. `{ authorization: 'Bearer …' }`. Never logged or traced. */
  headers?: Record<string, string>;
  /** Names the server in errors, spans and messages (default: the URL's host). */
  name?: string;
}

/** Where an MCP server is: a command to start, or a URL. */
export type McpServerOptions = McpStdioServer | McpHttpServer;

/** One connection's life: lost once the server closed it or stopped answering. */
export interface McpLink {
  client: Promise<Client>;
  tools?: Promise<readonly Tool[]>;
  lost: boolean;
}

/** Pages of `tools/list` read at most: a server cannot keep the agent listing forever. */
const MAX_TOOL_PAGES = 20;

/** The name the client introduces itself with. */
const CLIENT_INFO = { name: 'switchboard', version: '0.1.0' };

function isStdio(options: McpServerOptions): options is McpStdioServer {
  return typeof (options as McpStdioServer).command === 'string';
}

/** Checks a server's options at construction time and names the server. */
export function serverName(options: McpServerOptions): string {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError({ message: 'An MCP server needs { command, args } or { url }' });
  if (isStdio(options)) {
    if (options.command === '') throw new ConfigurationError({ message: 'An MCP server needs a command' });
    return options.name ?? options.command;
  }
  let url: URL;
  try {
    url = new URL(options.url);
  } catch (error) {
    throw new ConfigurationError({
      message: `An MCP server needs { command } or a valid { url }, got ${String(options.url)}`,
      cause: error,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigurationError({ message: `An MCP server URL must be http(s), got ${url.protocol}` });
  return options.name ?? url.host;
}

/**
 * True when the error says the connection is gone (closed, refused, an
 * HTTP failure) rather than that the server answered with an error.
 */
function isConnectionFailure(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  return !(error instanceof Error && error.name === 'AbortError');
}

/**
 * A lazily opened, reused connection to one MCP server. It opens on first
 * use; once lost (the server closed it, or a request could not reach it) the
 * next listing opens a new one. Calls made with a lost link fail at once: a
 * dead server is an error for the calls of that agent call, and the next
 * agent call reconnects.
 */
export class McpConnection {
  readonly name: string;
  readonly #options: McpServerOptions;
  #link: McpLink | undefined;

  constructor(options: McpServerOptions) {
    this.name = serverName(options);
    this.#options = options;
  }

  /** The current link, opening one if there is none. */
  open(): McpLink {
    if (this.#link && !this.#link.lost) return this.#link;
    const client = new Client(CLIENT_INFO);
    const link: McpLink = { client: undefined as unknown as Promise<Client>, lost: false };
    link.client = client.connect(this.#transport()).then(
      () => client,
      (error: unknown) => {
        this.#lose(link, client);
        throw new McpUnavailableError({ server: this.name, cause: error });
      },
    );
    // Awaited by whoever uses the link; a link nobody used must not fail the process.
    link.client.catch(() => {});
    // A dead child process or a closed stream: the next listing reconnects.
    client.onclose = () => {
      link.lost = true;
      if (this.#link === link) this.#link = undefined;
    };
    this.#link = link;
    return link;
  }

  /** The server's tools, listed once per link. */
  async tools(signal: AbortSignal): Promise<{ link: McpLink; tools: readonly Tool[] }> {
    const link = this.open();
    link.tools ??= this.#list(link, signal);
    try {
      return { link, tools: await link.tools };
    } catch (error) {
      link.tools = undefined;
      throw error;
    }
  }

  /** Calls a tool on the given link (the current one by default); a lost link fails at once. */
  async call(
    name: string,
    args: Record<string, unknown>,
    { signal, timeoutMs, link = this.open() }: { signal: AbortSignal; timeoutMs: number; link?: McpLink },
  ): Promise<CallToolResult> {
    if (link.lost) throw new McpUnavailableError({ server: this.name });
    const client = await link.client;
    try {
      // The caller's deadline (the tool's timeoutMs) fires first: the SDK's own is a backstop.
      return (await client.callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: timeoutMs + 1_000,
      })) as CallToolResult;
    } catch (error) {
      if (signal.aborted || !isConnectionFailure(error)) throw error;
      this.#lose(link, client);
      throw new McpUnavailableError({ server: this.name, cause: error });
    }
  }

  /** Closes the connection; a later use opens a new one. */
  async close(): Promise<void> {
    const link = this.#link;
    this.#link = undefined;
    if (!link) return;
    link.lost = true;
    const client = await link.client.catch(() => undefined);
    await client?.close().catch(() => {});
  }

  async #list(link: McpLink, signal: AbortSignal): Promise<readonly Tool[]> {
    const client = await link.client;
    const tools: Tool[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
        const result = await client.listTools(cursor === undefined ? {} : { cursor }, { signal });
        tools.push(...result.tools);
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
    } catch (error) {
      if (signal.aborted) throw error;
      if (isConnectionFailure(error)) this.#lose(link, client);
      throw new McpUnavailableError({ server: this.name, cause: error });
    }
    return tools;
  }

  #lose(link: McpLink, client: Client): void {
    link.lost = true;
    if (this.#link === link) this.#link = undefined;
    void client.close().catch(() => {});
  }

  #transport(): Transport {
    const options = this.#options;
    if (isStdio(options)) {
      const { command, args, env, cwd } = options;
      // The server's stderr is not ours to print: it may carry its secrets.
      return new StdioClientTransport({ command, args, env, cwd, stderr: 'ignore' });
    }
    const { url, headers } = options;
    return new StreamableHTTPClientTransport(new URL(url), {
      requestInit: headers ? { headers } : {},
    });
  }
}
