import { AgentError, ValidationError } from '@switchboard/core';
import type { z } from 'zod';
import type { AgentContext, AgentReply, AgentReplyWithMetadata } from './agent-contract.js';

/** An orchestrator's call that the agent's `input` schema refused: the agent never ran. */
export class AgentInputError extends AgentError {
  override readonly code = 'invalid_agent_input';
}

/** An agent's reply that its `output` schema refused. */
export class AgentOutputError extends AgentError {
  override readonly code = 'invalid_agent_output';
}

function issuesOf(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || 'value'}: ${issue.message}`);
}

/** The value as the schema parsed it: the call's `input`, else its message (as JSON when it is JSON), else a refusal. */
function parseWith(
  schema: z.ZodType,
  candidates: readonly unknown[],
): { ok: true; value: unknown } | { ok: false; issues: string[] } {
  let issues: string[] = [];
  for (const candidate of candidates) {
    const parsed = schema.safeParse(candidate);
    if (parsed.success) return { ok: true, value: parsed.data };
    issues = issuesOf(parsed.error);
  }
  return { ok: false, issues };
}

function jsonOf(text: string): unknown[] {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return [];
  try {
    return [JSON.parse(trimmed)];
  } catch {
    return [];
  }
}

/**
 * Wraps an agent's `run` with its schemas: the call is checked before it
 * runs (its structured `input`, else its message, parsed as JSON when it is
 * JSON) and the agent gets the parsed value as `context.input`; the reply is
 * checked when it is complete (as text, else as JSON). A refusal is an error
 * reply the orchestrator sees, with the schema's issues (never the agent's
 * internals): `invalid_agent_input` or `invalid_agent_output`.
 */
export function withSchemas(
  name: string,
  run: (message: string, context: AgentContext) => AgentReply | Promise<AgentReply>,
  input: z.ZodType | undefined,
  output: z.ZodType | undefined,
): (message: string, context: AgentContext) => AgentReply | Promise<AgentReply> {
  return (message, context) => {
    let called = context;
    if (input) {
      const { input: structured } = context.toolCall;
      const parsed = parseWith(
        input,
        structured === undefined ? [message, ...jsonOf(message)] : [structured],
      );
      if (!parsed.ok) {
        throw new AgentInputError({
          agent: name,
          message: 'its input was refused by its schema',
          cause: new ValidationError({ message: 'Invalid input', issues: parsed.issues }),
        });
      }
      called = Object.create(context, { input: { value: parsed.value, enumerable: true } }) as AgentContext;
    }
    const reply = run(message, called);
    if (!output) return reply;
    return checkReply(name, reply, output);
  };
}

function checkOutput(name: string, content: string, output: z.ZodType): void {
  const parsed = parseWith(output, [content, ...jsonOf(content)]);
  if (!parsed.ok) {
    throw new AgentOutputError({
      agent: name,
      message: 'its reply was refused by its output schema',
      cause: new ValidationError({ message: 'Invalid output', issues: parsed.issues }),
    });
  }
}

function checkReply(
  name: string,
  reply: AgentReply | Promise<AgentReply>,
  output: z.ZodType,
): AgentReply | Promise<AgentReply> {
  if (reply instanceof Promise || (typeof reply === 'object' && reply !== null && 'then' in reply))
    return Promise.resolve(reply).then((settled) => checkReply(name, settled, output));
  if (typeof reply === 'string') {
    checkOutput(name, reply, output);
    return reply;
  }
  if (typeof reply === 'object' && reply !== null && Symbol.asyncIterator in reply) {
    const stream = reply as AsyncIterable<string>;
    return (async function* checked() {
      let content = '';
      const iterator = stream[Symbol.asyncIterator]();
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          checkOutput(name, content, output);
          return next.value;
        }
        content += String(next.value);
        yield next.value;
      }
    })();
  }
  checkOutput(name, (reply as AgentReplyWithMetadata).content, output);
  return reply;
}
