import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { ConfigurationError } from '@switchboard/core';
import { z } from 'zod';
import type { LlmTool } from '../agents/llm-tool.js';
import type { LlmToolSource } from '../agents/llm-tool-source.js';
import { McpConnection, type McpLink, type McpServerOptions } from './mcp-connection.js';
import { McpUnavailableError } from './mcp-errors.js';
import { resultText } from './mcp-result.js';

/** What {@link mcpTools} offers of a server's tools, and how they run. */
export interface McpToolOptions {
  /** Only these tools (their names on the server). Default: all. */
  allow?: readonly string[];
  /** Never these tools (their names on the server). */
  deny?: readonly string[];
  /**
   * Put before every tool name the model sees, against clashes between
   * servers or with the agent's own tools, e.g. `weather_`. Letters,
   * digits, `_` and `-`. Default: none.
   */
  prefix?: string;
  /** Each call's deadline in milliseconds (see `llmTool`'s `timeoutMs`). Default 60 000. */
  timeoutMs?: number;
  /**
   * Further attempts after a retryable failure: a timeout (see `llmTool`'s
   * `retries`). Default: the turn profile's `agentRetries`, else 0.
   */
  retries?: number;
  /** Calls wait for a person's approval: every tool (`true`) or these tools (their names on the server). */
  requiresApproval?: boolean | readonly string[];
  /** The longest result, in characters, the model is sent (longer ones are cut). Default 50 000. */
  maxResultChars?: number;
}

/** Options of {@link mcpTools}: where the server is, and what of it to use. */
export type McpToolsOptions = McpServerOptions & McpToolOptions;

/** The tools of one MCP server, as a tool source of `llmAgent` (see {@link mcpTools}). */
export interface McpTools extends LlmToolSource {
  /** The connection, shared with {@link mcpAgent}s given this source as their `server`. */
  readonly connection: McpConnection;
}

const NAME_PART = /^[A-Za-z0-9_-]*$/;
const MAX_DESCRIPTION = 4_000;

/** A tool name the model accepts: at most 64 letters, digits, `_` or `-`. */
function modelName(prefix: string, name: string): string {
  return `${prefix}${name}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

function checkOptions({ prefix = '', timeoutMs, retries, maxResultChars, allow, deny }: McpToolOptions) {
  if (typeof prefix !== 'string' || !NAME_PART.test(prefix) || prefix.length > 32)
    throw new ConfigurationError({ message: `mcpTools: prefix must be up to 32 letters, digits, _ or -` });
  for (const [key, value] of [
    ['timeoutMs', timeoutMs],
    ['maxResultChars', maxResultChars],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value > 0))
      throw new ConfigurationError({ message: `mcpTools: ${key} must be a positive number, got ${value}` });
  }
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0))
    throw new ConfigurationError({ message: `mcpTools: retries must be a whole number, 0 or more` });
  for (const [key, list] of [
    ['allow', allow],
    ['deny', deny],
  ] as const) {
    if (list !== undefined && !(Array.isArray(list) && list.every((name) => typeof name === 'string')))
      throw new ConfigurationError({ message: `mcpTools: ${key} must be a list of tool names` });
  }
}

/**
 * The argument check of one tool: its JSON schema, compiled by Ajv (the
 * validator the MCP SDK ships: drafts 07 and 2019/2020 keywords it knows,
 * `$ref` within the schema, formats). A schema Ajv cannot compile only
 * requires an object: the server still validates what it receives.
 */
function argumentsSchema(validator: AjvJsonSchemaValidator, schema: Tool['inputSchema']): z.ZodType {
  let validate: ((input: unknown) => { valid: boolean; errorMessage?: string }) | undefined;
  try {
    validate = validator.getValidator(schema as Record<string, unknown>);
  } catch {
    validate = undefined;
  }
  return z.record(z.string(), z.unknown()).superRefine((value, context) => {
    const outcome = validate?.(value);
    if (outcome && !outcome.valid)
      context.addIssue({ code: 'custom', message: outcome.errorMessage ?? 'invalid' });
  });
}

/**
 * The tools of an MCP server, for `llmAgent`'s `tools`: over stdio (`{
 * command, args, env, cwd }`, the server started as a child process) or
 * streamable HTTP (`{ url, headers }`). Each tool's JSON schema is sent to
 * the model as the server gave it, and the model's arguments are checked
 * against it before the call; the result's text and structured content go
 * back to the model, and an `isError` result, a timeout or an unreachable
 * server are tool errors it sees. The agent runs them like its own tools:
 * tool spans under the agent span, `timeoutMs`, `retries`, approvals and
 * its `toolFilter`.
 *
 * The connection opens when an agent first runs, is reused across calls and
 * turns, and closes with `app.close()`. A server that dies fails the calls
 * of that agent call; the next agent call connects again (a stdio server is
 * started again). The list of tools is read once per connection.
 *
 * @example
 * ```ts
 * const files = mcpTools({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/data'], prefix: 'fs_', allow: ['read_file', 'list_directory'] });
 * const remote = mcpTools({ url: 'https://tools.example.com/mcp', headers: { authorization: `Bearer ${token}` }, timeoutMs: 10_000 });
 * const assistant = llmAgent({ name: 'assistant', description: 'Reads files', model: 'gpt-4o-mini', instructions: 'Use the tools.', tools: [files, remote] });
 * ```
 */
export function mcpTools(options: McpToolsOptions): McpTools {
  checkOptions(options);
  const {
    allow,
    deny = [],
    prefix = '',
    timeoutMs = 60_000,
    retries,
    requiresApproval = false,
    maxResultChars = 50_000,
  } = options;
  const connection = new McpConnection(options);
  const validator = new AjvJsonSchemaValidator();
  const allowed = allow ? new Set(allow) : undefined;
  const denied = new Set(deny);
  const needsApproval = (name: string) =>
    requiresApproval === true || (Array.isArray(requiresApproval) && requiresApproval.includes(name));
  // One mapping per listing: the agent reuses its tool set while the listing is the same.
  const mapped = new WeakMap<readonly Tool[], readonly LlmTool[]>();
  let last: readonly LlmTool[] | undefined;

  const toLlmTool = (tool: Tool, link: McpLink): LlmTool => {
    const name = modelName(prefix, tool.name);
    const description = (tool.description ?? tool.title ?? tool.name).slice(0, MAX_DESCRIPTION);
    const llmTool: { -readonly [Key in keyof LlmTool]: LlmTool[Key] } = {
      name,
      description,
      parameters: argumentsSchema(validator, tool.inputSchema),
      definition: {
        type: 'function',
        function: { name, description, parameters: tool.inputSchema as Record<string, unknown> },
      },
      timeoutMs,
      execute: async (args, { signal }) =>
        resultText(
          tool.name,
          await connection.call(tool.name, args as Record<string, unknown>, { signal, timeoutMs, link }),
          maxResultChars,
        ),
    };
    if (retries !== undefined) llmTool.retries = retries;
    if (needsApproval(tool.name)) llmTool.requiresApproval = true;
    return llmTool;
  };

  return {
    name: connection.name,
    connection,
    async listTools(signal) {
      let listing: Awaited<ReturnType<McpConnection['tools']>>;
      try {
        listing = await connection.tools(signal);
      } catch (error) {
        // Down now, known before: the model may still call, and is told the server is unreachable.
        if (last && McpUnavailableError.isInstance(error)) return last;
        throw error;
      }
      let tools = mapped.get(listing.tools);
      if (!tools) {
        tools = listing.tools
          .filter((tool) => (!allowed || allowed.has(tool.name)) && !denied.has(tool.name))
          .map((tool) => toLlmTool(tool, listing.link));
        mapped.set(listing.tools, tools);
      }
      last = tools;
      return tools;
    },
    close: () => connection.close(),
  };
}
