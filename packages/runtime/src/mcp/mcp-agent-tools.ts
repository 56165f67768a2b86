import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AgentMeta } from '@switchboard/core';
import { SessionIdSchema } from '../backend/request-schemas.js';

/** What a call of an agent tool asks for: the turn's message, its input, its session. */
export interface AgentToolCall {
  agent: string;
  message: string;
  input?: unknown;
  sessionId?: string;
}

/** One agent served as an MCP tool. */
export interface AgentTool {
  tool: Tool;
  /** The call its arguments make, or what is wrong with them. */
  parse(args: unknown): { ok: true; call: AgentToolCall } | { ok: false; issues: string[] };
}

const SESSION_ID_SCHEMA = {
  type: 'string',
  description: 'The session to continue; omit it to start one',
} as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sessionIdOf(value: unknown): { ok: true; sessionId?: string } | { ok: false; issues: string[] } {
  if (value === undefined) return { ok: true };
  const parsed = SessionIdSchema.safeParse(value);
  return parsed.success
    ? { ok: true, sessionId: parsed.data }
    : { ok: false, issues: parsed.error.issues.map((issue) => `sessionId: ${issue.message}`) };
}

/**
 * The MCP tool of an agent: named after it (`agent_<name>` when that would
 * be `chat`), described by its description. An agent with a JSON object
 * input schema takes its input as the tool's arguments (checked by the
 * agent's own schema when the turn calls it; the message is the input as
 * JSON); any other takes a `message`. Both take an optional `sessionId`,
 * unless the agent's input has a field of that name.
 */
export function agentTool(
  agent: AgentMeta,
  maxMessageLength: number,
  outputSchema: Tool['outputSchema'],
): AgentTool {
  const name = agent.name === 'chat' ? `agent_${agent.name}` : agent.name;
  const declared = agent.inputSchema;
  const structured = isRecord(declared) && declared.type === 'object';
  const properties = structured && isRecord(declared.properties) ? declared.properties : {};
  const takesSession = !('sessionId' in properties);
  let inputSchema: Tool['inputSchema'];
  if (structured) {
    const { $schema: _dialect, ...schema } = declared as Record<string, unknown>;
    inputSchema = (
      takesSession ? { ...schema, properties: { ...properties, sessionId: SESSION_ID_SCHEMA } } : schema
    ) as Tool['inputSchema'];
  } else {
    inputSchema = {
      type: 'object',
      properties: {
        message: {
          type: 'string',
          minLength: 1,
          maxLength: maxMessageLength,
          description: 'The task for the agent',
        },
        sessionId: SESSION_ID_SCHEMA,
      },
      required: ['message'],
      additionalProperties: false,
    };
  }
  const tool: Tool = {
    name,
    title: `Call the agent ${agent.name}`,
    description: agent.description,
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: false, openWorldHint: true },
  };

  function parse(args: unknown): ReturnType<AgentTool['parse']> {
    const fields = args ?? {};
    if (!isRecord(fields)) return { ok: false, issues: ['arguments: expected an object'] };
    const { sessionId: session, ...rest } = fields;
    const checked = sessionIdOf(takesSession ? session : undefined);
    if (!checked.ok) return checked;
    const base =
      checked.sessionId === undefined
        ? { agent: agent.name }
        : { agent: agent.name, sessionId: checked.sessionId };
    if (structured) {
      const input = takesSession ? rest : fields;
      const message = JSON.stringify(input);
      if (message.length > maxMessageLength)
        return { ok: false, issues: [`arguments: longer than ${maxMessageLength} characters as JSON`] };
      return { ok: true, call: { ...base, message, input } };
    }
    const { message, ...unknown } = rest;
    if (Object.keys(unknown).length > 0)
      return { ok: false, issues: ['arguments: only message and sessionId are accepted'] };
    if (typeof message !== 'string' || message.length === 0 || message.length > maxMessageLength)
      return { ok: false, issues: [`message: a string of 1 to ${maxMessageLength} characters`] };
    return { ok: true, call: { ...base, message } };
  }

  return { tool, parse };
}
