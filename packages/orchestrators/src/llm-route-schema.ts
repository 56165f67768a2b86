import { ROUTE_TO_USER } from '@switchboard/core';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { type AnswerCheck, parseJson } from './llm-structured-output.js';

/** A routing answer of the model, validated against the candidates. */
export interface RouteAnswer {
  /** A candidate agent's name, or `route_to_user`. */
  agent: string;
  /** The task for the agent, or exactly what the user reads. */
  message: string;
  thought?: string;
  reason?: string;
}

/** What is built once per candidate set: the schema sent to the model and the validator of its answers. */
export interface RouteSchema {
  /** The candidate agents' names (without `route_to_user`). */
  names: readonly string[];
  /** `response_format` of a strict JSON schema whose `agent` is an enum of the names plus `route_to_user`. */
  responseFormat: ResponseFormatJSONSchema;
  /** Checks an answer's text: JSON, shape, and an `agent` among the allowed ones. */
  check(content: string): AnswerCheck<RouteAnswer>;
}

const FIELDS = 'thought, agent, message and reason';

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'answer'}: ${issue.message}`).join('; ');
}

/**
 * Builds the schema and validator for one set of candidate agents.
 * @example
 * ```ts
 * const schema = routeSchema(['calculator', 'clock']);
 * schema.check('{"agent":"clock","message":"What time is it?"}'); // { ok: true, value: … }
 * ```
 */
export function routeSchema(names: readonly string[]): RouteSchema {
  const allowed: string[] = [...names, ROUTE_TO_USER];
  const choices = allowed.map((name) => `"${name}"`).join(', ');
  const validator = z.object({
    thought: z.string().optional(),
    agent: z.enum(allowed),
    message: z.string().regex(/\S/, 'must not be empty'),
    reason: z.string().optional(),
  });
  const responseFormat: ResponseFormatJSONSchema = {
    type: 'json_schema',
    json_schema: {
      name: 'route_decision',
      description: 'The next step: call one agent, or answer the user',
      strict: true,
      schema: {
        type: 'object',
        properties: {
          thought: {
            type: 'string',
            description: 'Brief reasoning about what the user needs and what has happened so far',
          },
          agent: {
            type: 'string',
            enum: allowed,
            description: `The agent to call, or "${ROUTE_TO_USER}" to answer the user`,
          },
          message: {
            type: 'string',
            description: `For an agent: the task, self-contained. For "${ROUTE_TO_USER}": exactly what the user reads`,
          },
          reason: { type: 'string', description: 'A short justification of the choice' },
        },
        required: ['thought', 'agent', 'message', 'reason'],
        additionalProperties: false,
      },
    },
  };

  function check(content: string): AnswerCheck<RouteAnswer> {
    const json = parseJson(content);
    if (!json.ok) {
      return {
        ok: false,
        feedback: `Your answer was not valid JSON (${json.error}). Reply with only a JSON object with the fields ${FIELDS}.`,
      };
    }
    const parsed = validator.safeParse(json.value);
    if (parsed.success) return { ok: true, value: parsed.data };
    const agent = (json.value as { agent?: unknown } | null)?.agent;
    if (typeof agent === 'string' && !allowed.includes(agent)) {
      return {
        ok: false,
        feedback: `"${agent}" is not an available agent. Choose "agent" from: ${choices}. Answer again with the fields ${FIELDS}.`,
      };
    }
    return {
      ok: false,
      feedback: `Your answer did not match the required format (${describeIssues(parsed.error)}). Answer again with a JSON object with the fields ${FIELDS}; "agent" is one of: ${choices}.`,
    };
  }

  return { names, responseFormat, check };
}
