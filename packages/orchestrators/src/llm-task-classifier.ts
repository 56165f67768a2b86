import { trace } from '@opentelemetry/api';
import { ConfigurationError, recordUsage } from '@switchboard/core';
import type { LlmClientOptions } from '@switchboard/runtime';
import { clientResolver } from '@switchboard/runtime/internal';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { CandidateCache } from './llm-candidate-cache.js';
import { type AnswerCheck, askForStructuredAnswer, parseJson } from './llm-structured-output.js';
import type { TaskClassifier, TaskDescription } from './task-classifier.js';

/** Options of {@link llmTaskClassifier}. */
export interface LlmTaskClassifierOptions extends LlmClientOptions {
  /** The classifying model, e.g. `gpt-4o-mini`. It must support JSON-schema structured output. */
  model: string;
  /** Replaces the opening of the system prompt. */
  instructions?: string;
  /** Further attempts after an invalid answer, each with feedback. Default 1. */
  maxRetries?: number;
  temperature?: number;
}

/** The answer meaning "none of the tasks". */
export const NO_TASK = '__none__';

interface TaskSchema {
  responseFormat: ResponseFormatJSONSchema;
  check(content: string): AnswerCheck<string | undefined>;
}

function taskSchema(names: readonly string[]): TaskSchema {
  const allowed = [...names, NO_TASK];
  const validator = z.object({ thought: z.string().optional(), task: z.enum(allowed) });
  return {
    responseFormat: {
      type: 'json_schema',
      json_schema: {
        name: 'task_classification',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            thought: { type: 'string', description: 'Brief reasoning' },
            task: {
              type: 'string',
              enum: allowed,
              description: `The task the message asks for, or "${NO_TASK}"`,
            },
          },
          required: ['thought', 'task'],
          additionalProperties: false,
        },
      },
    },
    check(content) {
      const json = parseJson(content);
      const parsed = json.ok ? validator.safeParse(json.value) : undefined;
      if (parsed?.success)
        return { ok: true, value: parsed.data.task === NO_TASK ? undefined : parsed.data.task };
      const problem = json.ok ? 'it did not match the schema' : `it was not valid JSON (${json.error})`;
      return {
        ok: false,
        feedback: `Your answer was invalid: ${problem}. Reply with a JSON object {"thought": "…", "task": "…"} where task is one of: ${allowed.map((name) => `"${name}"`).join(', ')}.`,
      };
    },
  };
}

function systemPrompt(instructions: string, tasks: readonly TaskDescription[]): string {
  const list = tasks
    .map((task) => `- ${task.name}: ${task.description.replace(/\s+/g, ' ').trim()}`)
    .join('\n');
  return `${instructions}

Tasks:
${list}

Answer with a JSON object: "thought" (brief reasoning) and "task" (one task name above, or "${NO_TASK}" when none fits).`;
}

/**
 * A {@link TaskClassifier} backed by a language model through the `openai`
 * client: the model picks one of the offered tasks (or none) through a strict
 * JSON schema whose `task` is an enum of their names. An invalid answer is
 * retried with feedback (`maxRetries`), then counts as "no task", so the
 * `TaskOrchestrator` falls back or asks the user. Model errors are thrown.
 * Candidates, choice and token usage go on the active (decision) span.
 *
 * @example
 * ```ts
 * const router = new TaskOrchestrator({
 *   agents,
 *   tasks: { arithmetic: { agent: 'calculator' }, 'time-query': { agent: 'clock' } },
 *   identifyTask: llmTaskClassifier({ model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY }),
 * });
 * ```
 */
export function llmTaskClassifier({
  model,
  instructions = "Classify the user's message as one of the tasks below.",
  maxRetries = 1,
  temperature,
  client,
  apiKey,
  baseURL,
}: LlmTaskClassifierOptions): TaskClassifier {
  if (typeof model !== 'string' || model === '')
    throw new ConfigurationError({ message: 'llmTaskClassifier needs a model name' });
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new ConfigurationError({
      message: `llmTaskClassifier: maxRetries must be 0 or more, got ${maxRetries}`,
    });
  }
  const getClient = clientResolver('llmTaskClassifier', { client, apiKey, baseURL });
  const schemas = new CandidateCache(taskSchema);

  return async (message, tasks, conversation) => {
    if (tasks.length === 0) return undefined;
    const span = trace.getActiveSpan();
    const { responseFormat, check } = schemas.get(tasks, (task) => task.name);
    const answer = await askForStructuredAnswer({
      client: await getClient(),
      model,
      temperature,
      messages: [
        { role: 'system', content: systemPrompt(instructions, tasks) },
        { role: 'user', content: message },
      ],
      responseFormat,
      check,
      maxRetries,
    });
    if (conversation) recordUsage(conversation, answer.usage);
    span?.setAttributes({
      'switchboard.task.candidates': tasks.map((task) => task.name),
      'switchboard.task.choice': answer.value ?? NO_TASK,
      'switchboard.task.retries': answer.retries,
      'gen_ai.usage.input_tokens': answer.usage.inputTokens,
      'gen_ai.usage.output_tokens': answer.usage.outputTokens,
    });
    return answer.value;
  };
}
