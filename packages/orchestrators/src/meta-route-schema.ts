import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { z } from 'zod';
import { type AnswerCheck, parseJson } from './llm-structured-output.js';

/** One option a meta-router's model may pick: a task type or a pattern. */
export interface MetaRouteOption {
  name: string;
  /** What the option is (a task type's description). */
  description?: string;
  /** When the option fits, as the model reads it. */
  whenToUse?: string;
}

/** A model's valid pick of one option. */
export interface MetaRouteAnswer {
  choice: string;
  rationale?: string;
  /** Between 0 and 1, when the model gave one. */
  confidence?: number;
}

/** What is built once per set of options: the system prompt, the schema sent to the model and the validator. */
export interface MetaRouteSchema {
  system: string;
  responseFormat: ResponseFormatJSONSchema;
  check(content: string): AnswerCheck<MetaRouteAnswer>;
}

function listOptions(options: readonly MetaRouteOption[]): string {
  return options
    .map((option) => {
      const parts = [option.description, option.whenToUse && `When to use: ${option.whenToUse}`];
      const text = parts.filter(Boolean).join(' ').replace(/\s+/g, ' ').trim();
      return `- ${option.name}${text ? `: ${text}` : ''}`;
    })
    .join('\n');
}

/**
 * Builds the prompt, schema and validator of one constrained choice among
 * `options`; `field` names the answer's field (`task_type`, `pattern`).
 * @example
 * ```ts
 * const schema = metaRouteSchema('task_type', 'Classify the request.', [{ name: 'research' }, { name: 'chat' }]);
 * schema.check('{"task_type":"chat","rationale":"small talk","confidence":0.9}'); // { ok: true, … }
 * ```
 */
export function metaRouteSchema(
  field: 'task_type' | 'pattern',
  instructions: string,
  options: readonly MetaRouteOption[],
): MetaRouteSchema {
  const names = options.map((option) => option.name);
  const choices = names.map((name) => `"${name}"`).join(', ');
  const fields = `thought, ${field}, rationale and confidence`;
  const validator = z.object({
    thought: z.string().optional(),
    [field]: z.enum(names as [string, ...string[]]),
    rationale: z.string().optional(),
    confidence: z.number().nullable().optional(),
  });
  const system = `${instructions}

Options:
${listOptions(options)}

Answer with a JSON object with the fields ${fields}: "${field}" is one of the option names above, "rationale" a short justification, "confidence" how sure you are from 0 to 1 (or null).`;
  const responseFormat: ResponseFormatJSONSchema = {
    type: 'json_schema',
    json_schema: {
      name: field === 'task_type' ? 'task_type_choice' : 'pattern_choice',
      strict: true,
      schema: {
        type: 'object',
        properties: {
          thought: { type: 'string', description: 'Brief reasoning about what the request needs' },
          [field]: { type: 'string', enum: names, description: 'One of the option names' },
          rationale: { type: 'string', description: 'A short justification of the choice' },
          confidence: { type: ['number', 'null'], description: 'How sure you are, from 0 to 1' },
        },
        required: ['thought', field, 'rationale', 'confidence'],
        additionalProperties: false,
      },
    },
  };

  function check(content: string): AnswerCheck<MetaRouteAnswer> {
    const json = parseJson(content);
    if (!json.ok) {
      return {
        ok: false,
        feedback: `Your answer was not valid JSON (${json.error}). Reply with only a JSON object with the fields ${fields}; "${field}" is one of: ${choices}.`,
      };
    }
    const parsed = validator.safeParse(json.value);
    if (!parsed.success) {
      const chosen = (json.value as Record<string, unknown> | null)?.[field];
      const problem =
        typeof chosen === 'string' && !names.includes(chosen)
          ? `"${chosen}" is not one of the options`
          : 'it did not match the required format';
      return {
        ok: false,
        feedback: `Your answer was invalid: ${problem}. Choose "${field}" from: ${choices}. Answer again with a JSON object with the fields ${fields}.`,
      };
    }
    const data = parsed.data as Record<string, unknown>;
    const { rationale, confidence } = data;
    const answer: MetaRouteAnswer = { choice: String(data[field]) };
    if (typeof rationale === 'string' && rationale) answer.rationale = rationale;
    // A confidence outside 0..1 is dropped, not a reason to ask again: the choice itself is valid.
    if (typeof confidence === 'number' && confidence >= 0 && confidence <= 1) answer.confidence = confidence;
    return { ok: true, value: answer };
  }

  return { system, responseFormat, check };
}
